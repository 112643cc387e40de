import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../core/errors';
import { isRetryableStatus, parseRetryAfter } from '../llm/retry';
import { guardedStream, type GuardedStream } from './guarded-stream';
import { ForbiddenTargetError, OutboundError, type OutboundPolicy } from './ssrf';

/**
 * Downloads a client-given URL (image/video/session URLs, attachments) to a file through {@link guardedStream}, so
 * private, loopback, link-local and metadata targets are refused after DNS and on every redirect unless the policy
 * allows them (the rules of ssrf.ts `guardedFetch`). The body streams to the file and is never held in memory (a
 * 500 MB input costs the process a few buffers, however many download at once): the size limit is enforced while
 * it flows (413 `PAYLOAD_TOO_LARGE`, before a byte when the length is declared) and its sha256 computed on the way.
 * It is written under a temporary name renamed into place, so no failure, stall or cancellation leaves a partial
 * file at `dest` or beside it. Errors carry the host only, never the path or query (which may hold tokens).
 */

export interface DownloadOptions {
  policy: OutboundPolicy;
  /** Largest body accepted; beyond it 413 `PAYLOAD_TOO_LARGE`. */
  maxBytes: number;
  /**
   * Limit for everything before the body (every hop, DNS included), and by default for a pause in the body; default
   * 30 s. A body may take as long as it keeps coming: the activity's own timeout and heartbeats bound the whole.
   */
  timeoutMs?: number;
  /** Longest pause between two pieces of the body before it counts as stalled; default `timeoutMs`. */
  idleTimeoutMs?: number;
  /** Stops the download (an activity's cancellation): the partial file goes, the promise rejects with the reason. */
  signal?: AbortSignal;
  /**
   * Media type prefixes accepted (`image/`, `application/pdf`). A response without a type or typed
   * `application/octet-stream` passes too: the caller's check of the content decides.
   */
  accept?: string[];
}

export interface DownloadResult {
  /** `dest`, as given. */
  path: string;
  size: number;
  /** sha256 (hex) of the bytes written, computed while they streamed. */
  sha256: string;
  /** The response's media type without parameters, lower case; `application/octet-stream` when it gave none. */
  mime: string;
  /** The URL of the final hop, after redirects. */
  finalUrl: string;
}

const hostOf = (url: string): string => {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid URL';
  }
};

/** The client-facing error for a failed guarded fetch (contract §1 and §2). */
export function downloadError(err: unknown, url: string, maxBytes: number): AppError {
  if (err instanceof AppError) return err;
  const host = hostOf(url);
  if (err instanceof ForbiddenTargetError) {
    return new AppError('FORBIDDEN', `The URL is not allowed: ${err.message}`, { host: err.host });
  }
  if (err instanceof OutboundError) {
    if (err.code === 'too_large') {
      return new AppError('PAYLOAD_TOO_LARGE', `The file at ${host} is larger than the limit of ${maxBytes} bytes`, {
        limit_bytes: maxBytes,
        ...(err.status ? { status: err.status } : {}),
      });
    }
    if (err.code === 'invalid_url' && err.status === undefined) {
      return new AppError('VALIDATION_ERROR', 'The URL is not a valid absolute URL', {
        issues: [{ path: 'url', message: 'invalid URL' }],
      });
    }
    return new AppError(
      'UPSTREAM_ERROR',
      `The download from ${host} failed: ${err.message}`,
      { provider: 'remote_url', host, reason: err.code, ...(err.status ? { status: err.status } : {}) },
      { retryable: isOutage(err) },
    );
  }
  const reason = err instanceof Error ? err.message : String(err);
  return new AppError('UPSTREAM_ERROR', `The download from ${host} failed: ${reason}`, {
    provider: 'remote_url',
    host,
    reason: 'network',
  });
}

/** Socket errors of a server that is there but whose exchange broke (and a resolver that said "try again"). */
const BROKEN_EXCHANGE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT', 'EAI_AGAIN']);

/**
 * Whether a failed download is the remote server being out for now (a timeout, a connection that broke mid-way),
 * which the error boundary waits out like any provider outage. A refused connection or a name that does not
 * resolve is taken as a wrong URL (nothing is there), not an outage: the job fails at once.
 */
function isOutage(err: OutboundError): boolean {
  if (err.code === 'timeout') return true;
  if (err.code !== 'network' && err.code !== 'dns') return false;
  if (err.code === 'network' && err.status !== undefined) return true;
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && BROKEN_EXCHANGE.has(code);
}

const singleValued = (headers: GuardedStream['headers']): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, Array.isArray(v) ? v.join(', ') : v]])),
  );

function mimeOf(res: GuardedStream): string {
  const raw = res.headers['content-type'];
  const value = (Array.isArray(raw) ? raw[0] : raw) ?? '';
  return value.split(';')[0].trim().toLowerCase() || 'application/octet-stream';
}

/** Downloads `url` to `dest` within `opts.policy`; see the module comment for the guarantees. */
export async function downloadToFile(url: string, dest: string, opts: DownloadOptions): Promise<DownloadResult> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  let res: GuardedStream;
  try {
    const headers = {
      Accept: opts.accept?.length
        ? [...opts.accept.map((a) => (a.endsWith('/') ? `${a}*` : a)), '*/*;q=0.1'].join(', ')
        : '*/*',
    };
    res = await guardedStream(url, { headers, timeoutMs, signal: opts.signal }, opts.policy);
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    throw downloadError(err, url, opts.maxBytes);
  }
  try {
    checkAnswer(res, opts);
    return await writeBody(res, dest, opts, opts.idleTimeoutMs ?? timeoutMs);
  } catch (err) {
    if (opts.signal?.aborted) throw opts.signal.reason instanceof Error ? opts.signal.reason : err;
    throw downloadError(err, url, opts.maxBytes);
  } finally {
    res.body.destroy();
  }
}

/** Throws for an answer whose body is not worth reading: a status outside 2xx, a refused type, a declared oversize. */
function checkAnswer(res: GuardedStream, opts: DownloadOptions): void {
  const host = hostOf(res.url);
  if (res.status < 200 || res.status > 299) {
    // 408, 429 and 5xx: the server is out for now (the error boundary waits it out, honouring Retry-After).
    const retryable = isRetryableStatus(res.status);
    const retryAfterMs = retryable ? parseRetryAfter(new Headers(singleValued(res.headers))) : undefined;
    throw new AppError(
      'UPSTREAM_ERROR',
      `The server at ${host} answered HTTP ${res.status}`,
      {
        provider: 'remote_url',
        host,
        reason: 'status',
        status: res.status,
        ...(retryAfterMs !== undefined ? { retry_after_ms: retryAfterMs } : {}),
      },
      { retryable, retryAfterMs },
    );
  }
  const mime = mimeOf(res);
  const generic = mime === 'application/octet-stream';
  if (opts.accept?.length && !generic && !opts.accept.some((p) => mime.startsWith(p.toLowerCase()))) {
    throw new AppError('INVALID_FORMAT', `The file at ${host} is ${mime}, which is not accepted here`, {
      error_type: 'unexpected_content_type',
      content_type: mime,
      supported_formats: opts.accept,
    });
  }
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > opts.maxBytes)
    throw new OutboundError(`response larger than ${opts.maxBytes} bytes`, 'too_large', res.status);
}

/**
 * Streams the body to a temporary file beside `dest` (mode 0600) through a {@link BodyMeter}, then renames it into
 * place; the temporary file is removed whatever goes wrong (oversize, stall, broken connection, cancellation).
 */
async function writeBody(
  res: GuardedStream,
  dest: string,
  opts: DownloadOptions,
  idleTimeoutMs: number,
): Promise<DownloadResult> {
  const tmp = `${dest}.part-${randomUUID().slice(0, 8)}`;
  const meter = new BodyMeter(res, opts.maxBytes, idleTimeoutMs);
  try {
    await pipeline(
      res.body,
      meter,
      createWriteStream(tmp, { flags: 'wx', mode: 0o600 }),
      ...(opts.signal ? [{ signal: opts.signal }] : []),
    );
    await fs.rename(tmp, dest);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    if (meter.failure) throw meter.failure;
    if (err instanceof OutboundError || err instanceof AppError || opts.signal?.aborted) throw err;
    const why = `response aborted: ${err instanceof Error ? err.message : String(err)}`;
    throw new OutboundError(why, 'network', res.status, { cause: err });
  }
  return { path: dest, size: meter.size, sha256: meter.digest(), mime: mimeOf(res), finalUrl: res.url };
}

/**
 * Counts, hashes and times the body as it flows to the file: past `maxBytes` it stops with `too_large` (the 413),
 * after `idleMs` without a byte with `timeout` (a stalled server; a slow steady one goes on), and a body that ends
 * before its declared length or its last chunk is a broken exchange, never a short file.
 */
class BodyMeter extends Transform {
  size = 0;
  failure: OutboundError | undefined;
  private readonly hash = createHash('sha256');
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: GuardedStream,
    private readonly maxBytes: number,
    private readonly idleMs: number,
  ) {
    super();
    this.arm();
  }

  private arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => this.fail(new OutboundError(`no data for ${this.idleMs} ms`, 'timeout', this.res.status)),
      this.idleMs,
    );
  }

  private fail(err: OutboundError): void {
    this.failure ??= err;
    this.destroy(err);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null, d?: Buffer) => void): void {
    this.size += chunk.length;
    if (this.size > this.maxBytes) {
      this.failure ??= new OutboundError(`response larger than ${this.maxBytes} bytes`, 'too_large', this.res.status);
      return cb(this.failure);
    }
    this.hash.update(chunk);
    this.arm();
    cb(null, chunk);
  }

  override _flush(cb: (e?: Error | null) => void): void {
    clearTimeout(this.timer);
    if (this.res.body.complete) return cb();
    this.failure ??= new OutboundError('response aborted: connection closed', 'network', this.res.status);
    cb(this.failure);
  }

  override _destroy(err: Error | null, cb: (e?: Error | null) => void): void {
    clearTimeout(this.timer);
    cb(err);
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}
