import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, ActivityInterceptorsFactory, Next } from '@temporalio/worker';
import { AppError } from '../core/errors';

/** Retry delays a provider may ask for are honoured up to this cap (a longer wait is the retry policy's business). */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

/**
 * The one place where an activity's error becomes a Temporal failure, for every activity of the worker:
 *
 * - an `AppError` (a client-facing error with a contract code) fails the job with that code and its details, and is
 *   not retried: the same input fails the same way (a 401 from a model, an invalid format, a forbidden URL);
 * - an `AppError` marked `retryable` (a provider's 429, 5xx or timeout once its own attempts are spent) keeps its code
 *   and is retried by the activity's policy, after the provider's `Retry-After` when it gave one;
 * - cancellation and `ApplicationFailure`s pass through unchanged;
 * - anything else is unexpected and stays retryable (a crashed engine, a full disk, a network blip).
 */
export function toActivityFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure || err instanceof CancelledFailure) return err;
  if (!(err instanceof AppError)) return err;
  const retryable = (err as AppError & { retryable?: unknown }).retryable === true;
  const retryAfterMs = Number(err.details.retry_after_ms);
  return ApplicationFailure.create({
    message: err.message,
    type: err.code,
    details: [err.details],
    nonRetryable: !retryable,
    ...(retryable && Number.isFinite(retryAfterMs) && retryAfterMs > 0 ? { nextRetryDelay: Math.min(retryAfterMs, MAX_RETRY_AFTER_MS) } : {}),
  });
}

class ErrorBoundary implements ActivityInboundCallsInterceptor {
  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    try {
      return await next(input);
    } catch (err) {
      throw toActivityFailure(err);
    }
  }
}

/** Registered on every worker (and on `MockActivityEnvironment` in tests): `interceptors: { activity: [errorBoundary] }`. */
export const errorBoundary: ActivityInterceptorsFactory = () => ({ inbound: new ErrorBoundary() });
