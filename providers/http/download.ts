import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import { AppError } from '../../core/errors';
import { isRetryableStatus, parseRetryAfter } from '../llm/retry';
import { ForbiddenTargetError, guardedFetch, type GuardedResponse, OutboundError, type OutboundPolicy } from './ssrf';

/**
 * Downloads a client-given URL (image/video/session URLs, attachments) to a file through {@link guardedFetch}, so
 * private, loopback, link-local and metadata targets are refused after DNS and on every redirect unless the policy
 * allows them. guardedFetch buffers the body in memory, capped at `maxBytes`; the file is written only once the whole
 * body is in, under a temporary name renamed into place, so no failure leaves a partial file at `dest` or beside it.
 * Errors carry the host only, never the path or query (which may hold tokens).
 */

export interface DownloadOptions {
  policy: OutboundPolicy;
  /** Largest body accepted; beyond it 413 `PAYLOAD_TOO_LARGE`. */
  maxBytes: number;
  /** Overall limit for every hop, DNS included; default 30 s. */
  timeoutMs?: number;
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

const singleValued = (headers: GuardedResponse['headers']): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, Array.isArray(v) ? v.join(', ') : v]])),
  );

function mimeOf(res: GuardedResponse): string {
  const raw = res.headers['content-type'];
  const value = (Array.isArray(raw) ? raw[0] : raw) ?? '';
  return value.split(';')[0].trim().toLowerCase() || 'application/octet-stream';
}

/** Downloads `url` to `dest` within `opts.policy`; see the module comment for the guarantees. */
export async function downloadToFile(url: string, dest: string, opts: DownloadOptions): Promise<DownloadResult> {
  let res: GuardedResponse;
  try {
    const headers = {
      Accept: opts.accept?.length
        ? [...opts.accept.map((a) => (a.endsWith('/') ? `${a}*` : a)), '*/*;q=0.1'].join(', ')
        : '*/*',
    };
    res = await guardedFetch(
      url,
      { method: 'GET', headers, timeoutMs: opts.timeoutMs ?? 30_000, maxBytes: opts.maxBytes },
      opts.policy,
    );
  } catch (err) {
    throw downloadError(err, url, opts.maxBytes);
  }
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
  const tmp = `${dest}.part-${randomUUID().slice(0, 8)}`;
  try {
    await fs.writeFile(tmp, res.body, { flag: 'wx' });
    await fs.rename(tmp, dest);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
  return { path: dest, size: res.body.length, mime, finalUrl: res.url };
}
