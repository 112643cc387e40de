import { Transform, type Readable, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';
import type { Context } from 'koa';
import { AppError } from '../../core/errors';

const DECODERS: Record<string, () => Transform> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

/** The `Content-Encoding` values a request body may have (besides `identity`). */
export const SUPPORTED_ENCODINGS = Object.keys(DECODERS);

/** A request body over its limit: 413 `PAYLOAD_TOO_LARGE` with the limit in `details`. */
export const tooLarge = (limitBytes: number, message = 'The request body is too large.') =>
  new AppError('PAYLOAD_TOO_LARGE', message, { limit_bytes: limitBytes });

const aborted = () => new AppError('VALIDATION_ERROR', 'The request was aborted.', { issues: [] });

/**
 * The request's content coding, lower-cased: '' for none (or `identity`). One coding only; anything else (several
 * codings, `compress`, `zstd`...) is a 415 `UNSUPPORTED_MEDIA_TYPE` naming the supported ones.
 */
export function requestEncoding(ctx: Context): string {
  const raw = ctx.get('Content-Encoding').trim().toLowerCase();
  if (raw === '' || raw === 'identity') return '';
  if (raw in DECODERS) return raw;
  throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding "${raw.slice(0, 40)}" is not supported.`, {
    encoding: raw.slice(0, 40),
    supported: ['identity', ...SUPPORTED_ENCODINGS],
  });
}

/** Counts the decoded bytes and fails with 413 past the limit, before the next chunk is inflated. */
class ByteLimit extends Transform {
  private seen = 0;
  constructor(private readonly limit: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limit) done(tooLarge(this.limit));
    else done(null, chunk);
  }
}

/**
 * The request body as a stream of its decoded bytes, at most `limitBytes` of them (decoded, not as sent): past the
 * limit, or on bytes that are not in the declared coding (a body sent as `gzip` that is not), the stream fails with
 * the contract's error (413, 400) and the request stops being read, so a small compressed body that would expand to
 * gigabytes (a bomb) is never inflated beyond the limit. A client that goes away fails the stream too.
 */
export function decodedBody(ctx: Context, encoding: string, limitBytes: number): Readable {
  const req = ctx.req;
  const decoder = DECODERS[encoding]!();
  const limit = new ByteLimit(limitBytes);
  const stop = (err: Error) => {
    req.unpipe(decoder);
    req.pause();
    decoder.destroy();
    limit.destroy(err);
  };
  decoder.on('error', () =>
    stop(
      new AppError(
        'VALIDATION_ERROR',
        `The request body is not valid ${encoding} data (Content-Encoding: ${encoding}).`,
        {
          issues: [{ path: '', message: `body does not decode as ${encoding}` }],
        },
      ),
    ),
  );
  limit.on('error', (err) => stop(err));
  req.on('close', () => {
    if (!req.complete) stop(aborted());
  });
  req.on('error', (err) => stop(err));
  req.pipe(decoder).pipe(limit);
  return limit;
}

/**
 * Reads a whole body stream into memory, at most `limitBytes` (413 beyond). Event-based, so an early refusal pauses
 * the stream instead of destroying it: the request's socket stays up for the answer.
 */
export function readAll(stream: Readable, limitBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (err: Error | null) => {
      stream.off('data', onData).off('end', onEnd).off('error', settle).off('close', onClose);
      if (err) {
        stream.pause();
        reject(err);
      } else resolve(Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) settle(tooLarge(limitBytes));
      else chunks.push(chunk);
    };
    const onEnd = () => settle(null);
    // A request whose client went away closes without an end.
    const onClose = () => settle(aborted());
    stream.on('data', onData).on('end', onEnd).on('error', settle).on('close', onClose);
  });
}
