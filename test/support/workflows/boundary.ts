import { decideFailure, type StepInfo } from '../../../activities/error-boundary';

/** What the worker's error boundary makes of an error on a step's first attempt (the default outage window). */
export function toActivityFailure(err: unknown): unknown {
  const info: StepInfo = {
    attempt: 1,
    scheduledTimestampMs: Date.now(),
    currentAttemptScheduledTimestampMs: Date.now(),
    retryPolicy: undefined,
  };
  return decideFailure(err, info, { outageMaxMs: 900_000 }).failure;
}
