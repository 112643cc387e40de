/**
 * Webhook logic of contract §4 shared by workflows and activities: bodies, response classification and the retry
 * schedule. Pure and free of Node built-ins, so workflow code may import it; signing (node:crypto) lives on the
 * activity side, in providers/webhook/signature.ts. The only clock read is {@link retryDelayMs}'s default `nowMs`,
 * which is deterministic inside a workflow.
 */

/** The workflow id of a job's webhook notifier: one per job, across its runs. */
export const notifierWorkflowId = (jobId: string): string => `notify-${jobId}`;

/** Default number of delivery attempts; with {@link retryDelayMs} they span about an hour. */
export const DEFAULT_WEBHOOK_ATTEMPTS = 8;

export type DeliveryOutcome = 'delivered' | 'retry' | 'give-up';

/** 2xx delivered; 5xx, 408 and 429 are worth another attempt; any other status (3xx, 4xx) is final. */
export function classifyResponse(status: number): DeliveryOutcome {
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 500 || status === 408 || status === 429) return 'retry';
  return 'give-up';
}

/** First gap of the backoff. */
const WEBHOOK_RETRY_BASE_MS = 10_000;
/** Growth per attempt. */
const WEBHOOK_RETRY_FACTOR = 3;
/** Longest computed gap: 10 s, 30 s, 90 s, 270 s, 810 s, 1200 s, 1200 s = 3610 s (about an hour) over 7 gaps. */
const WEBHOOK_RETRY_CAP_MS = 20 * 60_000;
/** Longest wait a receiver's `Retry-After` may ask for. */
const WEBHOOK_RETRY_AFTER_CAP_MS = 60 * 60_000;

/** `Retry-After` (delta seconds or HTTP date) as milliseconds from `nowMs`, or null when absent or unusable. */
function parseRetryAfter(header: string | null | undefined, nowMs: number = Date.now()): number | null {
  if (header == null) return null;
  const v = header.trim();
  if (!v) return null;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (!/[a-z]/i.test(v)) return null; // a bare or signed number in any other form is not an HTTP date
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - nowMs);
}

/**
 * Delay before attempt `attempt + 1`, after attempt `attempt` (1-based) failed: `base · factor^(n-1)` capped, or the
 * receiver's `Retry-After` when it asks for longer (itself capped at an hour). Deterministic (no jitter) because
 * workflows compute it; `nowMs` only matters for an HTTP-date `Retry-After`.
 */
export function retryDelayMs(attempt: number, retryAfterHeader?: string | null, nowMs: number = Date.now()): number {
  const n = Number.isFinite(attempt) ? Math.max(1, Math.floor(attempt)) : 1;
  const exponent = Math.min(n - 1, 32); // the cap is reached long before; keeps the power finite
  const backoff = Math.min(WEBHOOK_RETRY_CAP_MS, WEBHOOK_RETRY_BASE_MS * WEBHOOK_RETRY_FACTOR ** exponent);
  const asked = parseRetryAfter(retryAfterHeader, nowMs);
  if (asked === null) return backoff;
  return Math.max(backoff, Math.min(asked, WEBHOOK_RETRY_AFTER_CAP_MS));
}

interface WebhookRefs {
  /** Our job id. */
  process: { id: string };
  /** The client's own job id, null when it gave none. */
  job: { id: string | null };
}

interface ProgressWebhookBody extends WebhookRefs {
  phase: 'processing';
  progress: number;
  message: string;
}

interface CompletedWebhookBody extends WebhookRefs {
  phase: 'completed';
  message: string;
  data: unknown;
}

interface FailedWebhookBody extends WebhookRefs {
  phase: 'failed';
  message: string;
  error: unknown;
}

export function progressBody(
  jobId: string,
  clientJobId: string | null | undefined,
  percent: number,
  message: string,
): ProgressWebhookBody {
  return { phase: 'processing', progress: percent, message, process: { id: jobId }, job: { id: clientJobId ?? null } };
}

export function completedBody(
  jobId: string,
  clientJobId: string | null | undefined,
  message: string,
  data: unknown,
): CompletedWebhookBody {
  return { phase: 'completed', message, process: { id: jobId }, job: { id: clientJobId ?? null }, data };
}

export function failedBody(
  jobId: string,
  clientJobId: string | null | undefined,
  message: string,
  error: unknown,
): FailedWebhookBody {
  return { phase: 'failed', message, process: { id: jobId }, job: { id: clientJobId ?? null }, error };
}
