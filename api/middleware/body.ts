import fs from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { AppError } from '../../core/errors';
import { decodedBody, readAll, requestEncoding, tooLarge } from './encoding';
import { checkJsonDepth, DEFAULT_MAX_JSON_DEPTH, looksLikeJsonStructure, parseJsonBody } from './json';
import { scratchAt } from '../../core/stores/scratch';

export interface BodyLimits {
  jsonBytes: number;
  uploadBytes: number;
  /** How deep a JSON body, or JSON in a form field, may nest (`MAX_JSON_DEPTH`, default 64). */
  jsonDepth?: number;
  /** Parent of the per-request upload directories. */
  uploadRoot: string;
}

/** Multipart limits besides the upload size: text fields (count and bytes) and file parts. */
export const MULTIPART_LIMITS = { fields: 200, fieldBytes: 2 * 1024 * 1024, files: 20 } as const;

/** formidable's error numbers for the limits above (FormidableError.code). */
const FORMIDABLE = {
  maxFieldsSize: 1006,
  maxFields: 1007,
  totalFileSize: 1009,
  maxFiles: 1015,
  fileSize: 1016,
} as const;

/** The contract's error for a formidable failure: each limit says which one it is. */
function multipartError(err: unknown, uploadBytes: number): AppError {
  if (err instanceof AppError) return err;
  const e = err as { httpCode?: number; code?: number };
  switch (e.code) {
    case FORMIDABLE.maxFields:
      return new AppError(
        'PAYLOAD_TOO_LARGE',
        `The multipart body has too many fields (at most ${MULTIPART_LIMITS.fields}).`,
        {
          limit_fields: MULTIPART_LIMITS.fields,
        },
      );
    case FORMIDABLE.maxFieldsSize:
      return new AppError(
        'PAYLOAD_TOO_LARGE',
        `The multipart text fields are too large (at most ${MULTIPART_LIMITS.fieldBytes} bytes together).`,
        {
          limit_field_bytes: MULTIPART_LIMITS.fieldBytes,
        },
      );
    case FORMIDABLE.maxFiles:
      return new AppError(
        'PAYLOAD_TOO_LARGE',
        `The multipart body has too many files (at most ${MULTIPART_LIMITS.files}).`,
        {
          limit_files: MULTIPART_LIMITS.files,
        },
      );
  }
  if (e.httpCode === 413) return tooLarge(uploadBytes, 'The upload is too large.');
  return new AppError('VALIDATION_ERROR', 'The multipart body could not be read.', {
    issues: [{ path: '', message: 'malformed multipart body' }],
  });
}

/** A declared Content-Length over the limit is refused before anything is read. */
function refuseDeclaredLength(ctx: Context, limitBytes: number): void {
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limitBytes) throw tooLarge(limitBytes);
}

/**
 * JSON bodies: decoded (`Content-Encoding` gzip, deflate, br; the decoded size counts against `MAX_JSON_MB`), depth
 * checked on the raw text, then parsed. Multipart uploads go to a directory of their own per request, removed when
 * the request ends on every path (success, validation error, 413, client abort), so no partial upload stays behind;
 * an encoded multipart body is decoded as it streams, and JSON in its text fields is depth checked too.
 */
export function bodyParsers(limits: BodyLimits) {
  const depth = limits.jsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
  const json = async (ctx: Context, next: Next): Promise<void> => {
    const encoding = requestEncoding(ctx);
    refuseDeclaredLength(ctx, limits.jsonBytes);
    const stream = encoding ? decodedBody(ctx, encoding, limits.jsonBytes) : ctx.req;
    const raw = await readAll(stream, limits.jsonBytes);
    ctx.request.body = parseJsonBody(raw.toString('utf8'), depth) as typeof ctx.request.body;
    await next();
  };

  // The decoded multipart stream may hold the files, the text fields and the parts' framing.
  const multipartBytes = limits.uploadBytes + MULTIPART_LIMITS.fieldBytes + 1024 * 1024;
  const multipart = async (ctx: Context, next: Next): Promise<void> => {
    const encoding = requestEncoding(ctx);
    refuseDeclaredLength(ctx, multipartBytes);
    const original = ctx.req;
    const dir = path.join(limits.uploadRoot, randomUUID());
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    try {
      if (encoding) {
        // formidable reads ctx.req: give it the decoded stream, with headers that describe it.
        const { 'content-length': _l, 'content-encoding': _e, ...headers } = original.headers;
        const decoded = decodedBody(ctx, encoding, multipartBytes);
        ctx.req = Object.assign(decoded, {
          headers: { ...headers, 'transfer-encoding': 'chunked' },
        }) as unknown as IncomingMessage;
      }
      const typedFields = textPartsAsFields();
      const parse = koaBody({
        multipart: true,
        json: false,
        urlencoded: false,
        text: false,
        formidable: {
          uploadDir: dir,
          maxFileSize: limits.uploadBytes,
          maxTotalFileSize: limits.uploadBytes,
          maxFieldsSize: MULTIPART_LIMITS.fieldBytes,
          maxFields: MULTIPART_LIMITS.fields,
          maxFiles: MULTIPART_LIMITS.files,
          keepExtensions: false,
          allowEmptyFiles: true,
          minFileSize: 0,
          filter: typedFields.filter,
        },
        onError: (err) => {
          throw multipartError(err, limits.uploadBytes);
        },
      });
      await parse(ctx, async () => {
        ctx.req = original;
        ctx.request.body = (await typedFields.mergeInto(
          ctx.request.body as Record<string, unknown> | undefined,
        )) as typeof ctx.request.body;
        checkFieldDepth(ctx.request.body, depth);
        await next();
      });
    } finally {
      ctx.req = original;
      await fs.rm(dir, { recursive: true, force: true });
    }
  };
  return { json, multipart };
}

/** The part formidable hands its `filter`: a file unless it is taken here as a field. */
interface FormPart {
  name: string | null;
  originalFilename: string | null;
  mimetype: string | null;
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
}

/**
 * RFC 7578: a part without a filename is a field, whatever its content type. formidable takes any part with a
 * `Content-Type` for a file, so a text field sent as its own typed part (.NET's StringContent, Python requests'
 * tuple fields, clients generated from our OpenAPI document: `extraction_method=native;type=text/plain`) became a
 * file and the field was missing. This filter reads such parts as text (in their charset, UTF-8 by default), within
 * the text fields' byte limit, and hands them to the body as fields.
 */
function textPartsAsFields() {
  const fields: [string, Promise<string>][] = [];
  let bytes = 0;
  return {
    filter(part: FormPart): boolean {
      if (part.originalFilename || !part.name || !part.mimetype) return true;
      const charset = /charset="?([\w-]+)"?/i.exec(part.mimetype)?.[1] ?? 'utf-8';
      const chunks: Buffer[] = [];
      const value = new Promise<string>((resolve, reject) => {
        part.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > MULTIPART_LIMITS.fieldBytes) {
            reject(
              new AppError(
                'PAYLOAD_TOO_LARGE',
                `The multipart text fields are too large (at most ${MULTIPART_LIMITS.fieldBytes} bytes together).`,
                { limit_bytes: MULTIPART_LIMITS.fieldBytes },
              ),
            );
            return;
          }
          chunks.push(chunk);
        });
        part.on('end', () => {
          try {
            resolve(new TextDecoder(charset).decode(Buffer.concat(chunks)));
          } catch {
            reject(
              new AppError(
                'VALIDATION_ERROR',
                `The multipart field ${part.name} has a charset that cannot be read (${charset}).`,
                { issues: [{ path: part.name!, message: `unknown charset ${charset}` }] },
              ),
            );
          }
        });
      });
      value.catch(() => undefined);
      fields.push([part.name, value]);
      return false;
    },
    /** The body with the typed text parts added as fields (a repeated name becomes a list, as formidable's fields). */
    async mergeInto(body: Record<string, unknown> | undefined): Promise<Record<string, unknown>> {
      const out: Record<string, unknown> = { ...(body ?? {}) };
      for (const [name, value] of fields) {
        const v = await value;
        const before = out[name];
        out[name] = before === undefined ? v : Array.isArray(before) ? [...before, v] : [before, v];
      }
      return out;
    },
  };
}

/** JSON in multipart text fields (a `context` object) obeys the same depth limit as a JSON body. */
function checkFieldDepth(fields: unknown, maxDepth: number): void {
  for (const [name, value] of Object.entries((fields ?? {}) as Record<string, unknown>)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v === 'string' && looksLikeJsonStructure(v)) checkJsonDepth(v, maxDepth, name);
    }
  }
}

/**
 * The upload directory of this API process: `<DATA_DIR>/tmp/uploads/p<pid>-…` (0700), so API replicas sharing a data
 * directory never touch each other's uploads; directories left by a process that died are removed when it opens.
 */
export async function openUploadRoot(dataDir: string): Promise<string> {
  const scratch = scratchAt(path.join(dataDir, 'tmp', 'uploads'));
  await scratch.open();
  return scratch.dir;
}
