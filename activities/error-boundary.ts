import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, ActivityInterceptorsFactory, Next } from '@temporalio/worker';
import { AppError } from '../core/errors';

/**
 * The one place where an activity's error becomes a Temporal failure, for every activity of the worker:
 *
 * - an `AppError` (a client-facing error with a contract code) fails the job with that code and its details, and is
 *   not retried by Temporal: a permanent one (a model's 400/401/403/404, an invalid format, a forbidden URL) fails
 *   the same way every time, and a transient one (429, 5xx, a timeout) reaches the boundary only once the provider's
 *   own retries are spent (exponential backoff honouring `Retry-After`, `LLM_MAX_RETRIES`), so its last answer is
 *   the job's;
 * - cancellation and `ApplicationFailure`s pass through unchanged;
 * - anything else is unexpected and stays retryable (a crashed engine, a full disk, a dead worker's step).
 */
export function toActivityFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure || err instanceof CancelledFailure) return err;
  if (!(err instanceof AppError)) return err;
  return ApplicationFailure.create({ message: err.message, type: err.code, details: [err.details], nonRetryable: true });
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
