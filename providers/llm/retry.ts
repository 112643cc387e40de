import { loadedOpenAiSdk } from './openai-sdk';
import { AppError } from '../../core/errors';

/** The remote providers whose failures are `UpstreamError`s (`details.provider`). */
export type UpstreamProvider = 'llm' | 'speech';

/**
 * A provider failure the client may see: 502 `UPSTREAM_ERROR`, `details.provider` naming the provider. `retryable`
 * says whether the provider is out for now (429, 5xx, timeouts, network errors: trying the whole call again later
 * could help), not after a 401 or an answer that is no use; the error boundary waits such an outage out.
 * `details.retry_after_ms`, when present, is the provider's last `Retry-After`.
 */
export class UpstreamError extends AppError {
  constructor(
    message: string,
    details: { provider: UpstreamProvider; attempts: number; status?: number; retry_after_ms?: number } & Record<
      string,
      unknown
    >,
    retryable = false,
  ) {
    super('UPSTREAM_ERROR', message, details, { retryable, retryAfterMs: details.retry_after_ms });
    this.name = 'UpstreamError';
  }
}

/** Statuses worth another attempt. */
export const RETRYABLE_STATUS = new Set([408, 409, 429]);
export const isRetryableStatus = (status: number): boolean => RETRYABLE_STATUS.has(status) || status >= 500;

export interface BackoffPolicy {
  /** First wait; doubles each attempt. */
  baseMs: number;
  /** Cap of the computed wait. */
  maxMs: number;
  /** Cap of a server-given `Retry-After`. */
  maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 500, maxMs: 20_000, maxRetryAfterMs: 60_000 };

/**
 * Reads `retry-after-ms` (milliseconds) or `Retry-After` (seconds or an HTTP date) from response headers.
 * Returns undefined when absent or unreadable.
 */
export function parseRetryAfter(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return n;
  }
  const ra = headers.get('retry-after');
  if (ra === null || ra.trim() === '') return undefined;
  const secs = Number(ra);
  if (Number.isFinite(secs)) return secs >= 0 ? secs * 1000 : undefined;
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Wait before attempt `failedAttempt + 1`: exponential backoff, or the server's `Retry-After` when larger. */
export function backoffDelay(
  failedAttempt: number,
  retryAfterMs: number | undefined,
  policy = DEFAULT_BACKOFF,
): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, failedAttempt - 1));
  if (retryAfterMs === undefined) return exp;
  return Math.max(exp, Math.min(retryAfterMs, policy.maxRetryAfterMs));
}

/** How a failed request is handled. */
export interface Classified {
  retry: boolean;
  /**
   * The provider is out for now (408/409/429/5xx, a timeout, a network error): once the request's own retries are
   * spent, the failure is a retryable `UpstreamError` (the step is tried again within the outage window). A 2xx that
   * is no use (no choices, a broken body) is retried in the loop, but is no outage: the provider answered.
   */
  outage: boolean;
  /** Short, secret-free reason. */
  reason: string;
  status?: number;
  retryAfterMs?: number;
  /** The endpoint's own message (to be redacted before use). */
  upstreamMessage?: string;
  /**
   * The request went out and no answer came back (a timeout, a connection cut after it was sent): the endpoint may
   * still be computing it, and may charge for it. A refused connection or an HTTP answer (429, 5xx) is not in doubt.
   */
  inDoubt?: boolean;
}

/** Connection failures that happen before a request leaves (nothing reached the endpoint). */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The first `code` along an error's cause chain (undici puts the socket's code two causes down). */
function causeCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Stands for the SDK's error classes while it is not loaded: nothing is an instance of it. */
class NoSdkError extends Error {
  declare status?: number;
  declare error?: unknown;
  declare headers?: Headers;
}

/** A 2xx answer without what was asked for (no choices, no transcript): worth another try. */
export class MalformedAnswerError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'MalformedAnswerError';
  }
}

export function classifyError(err: unknown): Classified | 'abort' {
  // The SDK's error classes, when a call has loaded it (providers/llm/openai-sdk.ts); none of them exist before.
  const sdk = loadedOpenAiSdk();
  const APIUserAbortError = sdk?.APIUserAbortError ?? NoSdkError;
  const APIConnectionTimeoutError = sdk?.APIConnectionTimeoutError ?? NoSdkError;
  const APIConnectionError = sdk?.APIConnectionError ?? NoSdkError;
  const APIError = sdk?.APIError ?? NoSdkError;
  if (err instanceof APIUserAbortError) return 'abort';
  if (err instanceof MalformedAnswerError) return { retry: true, outage: false, reason: err.message };
  if (err instanceof APIConnectionTimeoutError) {
    const notSent = NOT_SENT_CODES.has(causeCode(err) ?? '');
    return { retry: true, outage: true, reason: notSent ? 'connect timeout' : 'timeout', inDoubt: !notSent };
  }
  if (err instanceof APIConnectionError) {
    const code = causeCode(err);
    const notSent = NOT_SENT_CODES.has(code ?? '');
    return {
      retry: true,
      outage: true,
      reason: notSent ? `connection failed (${code})` : 'network error',
      inDoubt: !notSent,
    };
  }
  if (err instanceof APIError && typeof err.status === 'number') {
    const body = err.error as { message?: unknown } | undefined;
    return {
      retry: isRetryableStatus(err.status),
      outage: isRetryableStatus(err.status),
      reason: `HTTP ${err.status}`,
      status: err.status,
      retryAfterMs: parseRetryAfter(err.headers),
      upstreamMessage: typeof body?.message === 'string' ? body.message : undefined,
    };
  }
  // A 2xx whose body is not JSON surfaces as a SyntaxError from the SDK: a broken answer, worth another try.
  if (err instanceof SyntaxError) return { retry: true, outage: false, reason: 'malformed response body' };
  return { retry: false, outage: false, reason: err instanceof Error ? err.name : 'unknown error' };
}

/** Removes the API key, and anything shaped like one, from text meant for clients and logs. */
export function redact(text: string, apiKey: string | undefined): string {
  let out = text;
  if (apiKey && apiKey.length >= 4) out = out.split(apiKey).join('***');
  return out.replace(/\b(sk|pk|rk)-[A-Za-z0-9_*.-]{4,}/g, '***').replace(/Bearer\s+\S+/gi, 'Bearer ***');
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** What a retry loop reports before each wait. */
export interface RetryWait {
  /** The attempt that failed (1-based). */
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  status?: number;
  reason: string;
}

export interface RetryLoopOptions {
  maxAttempts: number;
  /**
   * Whether a request in doubt (`Classified.inDoubt`) is sent again in the loop; default true. False when a second
   * request could be paid a second time (an endpoint that does not answer a repeated idempotency key from the first):
   * then the loop ends with `fail` at once.
   */
  resendInDoubt?: boolean;
  backoff: BackoffPolicy;
  signal?: AbortSignal;
  onRetry?: (wait: RetryWait) => void;
  /** The error thrown when a failure is not worth another try or the attempts are spent. */
  fail: (failure: Classified, attempts: number) => Error;
}

/**
 * Runs `attempt` (an OpenAI SDK call with its own retries off) until it answers. Failures are classified by
 * `classifyError`; retryable ones wait `backoffDelay` (honouring `Retry-After`) and try again, except a request in
 * doubt when `resendInDoubt` is false. `attempt` is told how many earlier requests of the loop were in doubt. An
 * abort through `signal` is thrown as the signal's reason, during a request or a wait.
 */
export async function withRetries<T>(
  attempt: (inDoubtBefore: number) => Promise<T>,
  opts: RetryLoopOptions,
): Promise<T> {
  let inDoubt = 0;
  for (let n = 1; ; n++) {
    let failure: Classified;
    try {
      return await attempt(inDoubt);
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason ?? err;
      const c = classifyError(err);
      if (c === 'abort') throw err;
      failure = c;
      if (!c.retry && !c.status) failure.upstreamMessage = err instanceof Error ? err.message : String(err);
    }
    if (failure.inDoubt) inDoubt += 1;
    const resend = !failure.inDoubt || opts.resendInDoubt !== false;
    if (!failure.retry || !resend || n >= opts.maxAttempts) throw opts.fail(failure, n);
    const delayMs = backoffDelay(n, failure.retryAfterMs, opts.backoff);
    opts.onRetry?.({
      attempt: n,
      maxAttempts: opts.maxAttempts,
      delayMs,
      status: failure.status,
      reason: failure.reason,
    });
    await sleep(delayMs, opts.signal);
  }
}
