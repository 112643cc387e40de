import { ApplicationFailure } from '@temporalio/activity';
import { AppError } from '../core/errors';

/**
 * An error meant for the client (a provider's 502 `UPSTREAM_ERROR` once its own retries are spent, a 400
 * `INVALID_FORMAT`, a 403 `FORBIDDEN` download) fails the job with its code and details instead of as an internal
 * error, and is not retried as an activity: the same input fails the same way, and a provider has retried already.
 * Anything else is rethrown for Temporal's retry policy.
 */
export function clientFailure(err: unknown): never {
  if (err instanceof AppError) throw ApplicationFailure.nonRetryable(err.message, err.code, err.details);
  throw err;
}
