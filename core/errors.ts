/** Error codes of contract §1 with their HTTP status. */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  INVALID_FORMAT: 400,
  NO_ARCHIVE: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  JOB_NOT_FOUND: 404,
  BATCH_NOT_FOUND: 404,
  TEMPLATE_NOT_FOUND: 404,
  TRACK_NOT_FOUND: 404,
  EVENT_NOT_FOUND: 404,
  TOPIC_NOT_FOUND: 404,
  FILE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NOT_IMPLEMENTED: 501,
  INVALID_STATE: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNPROCESSABLE_INPUT: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  UPSTREAM_ERROR: 502,
  PROVIDER_NOT_CONFIGURED: 503,
  UNAVAILABLE: 503,
  TIMEOUT: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const isErrorCode = (s: unknown): s is ErrorCode => typeof s === 'string' && s in ERROR_STATUS;

/**
 * How an `AppError` may be retried. `retryable` marks a transient provider failure (429, 5xx, a timeout, a network
 * error, a full local model queue) that is worth trying again later; `retryAfterMs` is the provider's own
 * `Retry-After`. The activity error boundary (activities/error-boundary.ts) is the one place that acts on them: it
 * retries the step within `PROVIDER_OUTAGE_MAX_MS`, every other `AppError` fails the job at once.
 */
interface AppErrorOptions extends ErrorOptions {
  retryable?: boolean;
  retryAfterMs?: number;
}

/** An error meant for the client: its code, message and details are safe to show. */
export class AppError extends Error {
  readonly status: number;
  /** A transient provider failure: the step may be tried again later (see `AppErrorOptions`). */
  readonly retryable: boolean;
  /** The provider's `Retry-After`, when it gave one. */
  readonly retryAfterMs?: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    options?: AppErrorOptions,
  ) {
    super(message, options);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
    this.retryable = options?.retryable ?? false;
    if (options?.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }
}

export interface ErrorBody {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/** One problem of a request: where (`a.b.0.c`, empty for the whole body) and what. */
interface ValidationIssue {
  path: string;
  message: string;
}

const MISSING = /received undefined$|^required$/i;
const MAX_NAMED = 6;

function listing(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/**
 * A sentence that names what is wrong, for `error.message` (the issues stay in `details.issues`): the missing fields
 * first ("session, url, filename and track are required"), then each other problem with its field
 * ("page_end: must be at least 1"), at most six named. Field names keep their case, also at the start.
 */
export function validationMessage(issues: ValidationIssue[]): string {
  if (issues.length === 0) return 'The request is invalid.';
  const missing = [...new Set(issues.filter((i) => MISSING.test(i.message) && i.path).map((i) => i.path))];
  const others = issues.filter((i) => !(MISSING.test(i.message) && i.path));
  const parts: string[] = [];
  if (missing.length) {
    const named = missing.slice(0, MAX_NAMED);
    parts.push(
      `${listing(named)}${missing.length > named.length ? ` (and ${missing.length - named.length} more)` : ''} ${missing.length === 1 ? 'is' : 'are'} required`,
    );
  }
  const room = Math.max(1, MAX_NAMED - Math.min(missing.length, MAX_NAMED));
  for (const i of others.slice(0, room)) parts.push(i.path ? `${i.path}: ${i.message}` : i.message);
  if (others.length > room) parts.push(`and ${others.length - room} more problem(s) in details.issues`);
  const sentence = parts.join('; ');
  // A sentence that starts with a field name keeps the name as the client spells it (`output_format`, not
  // `Output_format`); only one that starts with a message of its own is capitalised.
  const startsWithField = missing.length > 0 || Boolean(others[0]?.path);
  return `${startsWithField ? sentence.charAt(0) : sentence.charAt(0).toUpperCase()}${sentence.slice(1)}.`;
}
