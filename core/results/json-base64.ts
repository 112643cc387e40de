import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
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
