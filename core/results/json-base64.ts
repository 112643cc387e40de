import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Readable, type Duplex } from 'node:stream';
import type { BlobRef, BlobStore } from '../stores/blob-store';

/**
 * Writes `value` as JSON under `key` with one string field holding a blob's bytes in Base64 (the spec's
 * `images_archive_data`), the blob streamed from the store through the encoder into the put: the archive is never in
 * memory, nor its Base64, nor a JSON text holding it (a 300 MB archive costs a few buffers, not 1.5 GB). The bytes
 * written are those `JSON.stringify` would give with the Base64 in the field (Base64 needs no JSON escaping).
 * `value[field]` must be present; its value is ignored.
 */
export async function putJsonWithBase64(
  store: BlobStore,
  key: string,
  value: Record<string, unknown>,
  field: string,
  source: string,
): Promise<BlobRef> {
  if (!(field in value)) throw new Error(`putJsonWithBase64: no field ${field}`);
  const marker = `base64-of-${randomUUID()}`;
  const text = JSON.stringify({ ...value, [field]: marker });
  const at = text.indexOf(`"${marker}"`);
  const head = Buffer.from(text.slice(0, at + 1));
  const tail = Buffer.from(text.slice(at + 1 + marker.length));
  const bytes = await store.get(source);
  return store.put(key, Readable.from(concat(head, base64Of(bytes), tail), { objectMode: false }), {
    mime: 'application/json',
  });
}

async function* concat(head: Buffer, body: AsyncIterable<Buffer>, tail: Buffer): AsyncGenerator<Buffer> {
  yield head;
  yield* body;
  yield tail;
}

/** Base64 of a byte stream, chunk by chunk (each cut at a multiple of three bytes, so the pieces join). */
export async function* base64Of(src: AsyncIterable<Buffer | string> | Iterable<Buffer>): AsyncGenerator<Buffer> {
  let rest = Buffer.alloc(0);
  for await (const chunk of src) {
    const buf = rest.length ? Buffer.concat([rest, Buffer.from(chunk)]) : Buffer.from(chunk);
    const whole = buf.length - (buf.length % 3);
    if (whole) yield Buffer.from(buf.subarray(0, whole).toString('base64'), 'latin1');
    rest = buf.subarray(whole);
  }
  if (rest.length) yield Buffer.from(rest.toString('base64'), 'latin1');
}

/** The results' fields that hold an archive's Base64 (spec: `images_archive_data`, `pages_archive_data`). */
export const ARCHIVE_DATA_FIELDS = ['images_archive_data', 'pages_archive_data'] as const;

interface JsonToken {
  name: string;
  value?: unknown;
}
interface JsonAssembler {
  current: unknown;
  done: boolean;
  consume(token: JsonToken): void;
}
const requireCjs = createRequire(import.meta.url);
const { parser: jsonTokens } = requireCjs('stream-json') as {
  parser: (opts: Record<string, boolean>) => Duplex;
};
const Assembler = requireCjs('stream-json/Assembler') as new () => JsonAssembler;

/**
 * Parses a JSON object streamed in pieces (a results blob, `putJsonWithBase64`'s output) without ever holding the
 * string values of the top-level `fields` (the Base64 of an archive, hundreds of MB): each is read past piece by
 * piece and answered `null`, its length (characters) in `skipped`. Memory is the rest of the document and a piece,
 * whatever the size of the skipped strings (stream-json's tokenizer, strings unpacked; the others packed here).
 */
export async function parseJsonWithout(
  src: AsyncIterable<Buffer | string> | Iterable<Buffer | string>,
  fields: readonly string[],
): Promise<{ value: Record<string, unknown>; skipped: Record<string, number> }> {
  const tokens = jsonTokens({ packKeys: true, streamKeys: false, packStrings: false, streamStrings: true });
  const feed = Readable.from(src, { objectMode: false });
  feed.on('error', (e) => tokens.destroy(e));
  feed.pipe(tokens);
  const asm = new Assembler();
  const skipped: Record<string, number> = {};
  let depth = 0;
  let key: string | undefined;
  let skipping: string | undefined;
  let text: string[] | undefined;
  for await (const t of tokens as AsyncIterable<JsonToken>) {
    if (skipping !== undefined) {
      if (t.name === 'stringChunk') skipped[skipping] += (t.value as string).length;
      else if (t.name === 'endString') {
        skipping = undefined;
        asm.consume({ name: 'nullValue', value: null });
      }
      continue;
    }
    switch (t.name) {
      case 'startObject':
      case 'startArray':
        depth++;
        break;
      case 'endObject':
      case 'endArray':
        depth--;
        break;
      case 'keyValue':
        if (depth === 1) key = t.value as string;
        break;
      case 'startString':
        if (depth === 1 && key !== undefined && fields.includes(key)) {
          skipping = key;
          skipped[key] = 0;
        } else text = [];
        continue;
      case 'stringChunk':
        text?.push(t.value as string);
        continue;
      case 'endString':
        asm.consume({ name: 'stringValue', value: (text ?? []).join('') });
        text = undefined;
        continue;
    }
    asm.consume(t);
  }
  const value = asm.current;
  if (!asm.done || value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error('parseJsonWithout: not a JSON object');
  return { value: value as Record<string, unknown>, skipped };
}

/** {@link parseJsonWithout} of the blob at `key`, streamed from the store. */
export async function readJsonWithout(
  store: BlobStore,
  key: string,
  fields: readonly string[],
): Promise<Record<string, unknown>> {
  return (await parseJsonWithout(await store.get(key), fields)).value;
}
