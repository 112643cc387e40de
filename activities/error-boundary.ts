import { Context, type Info } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure, type RetryPolicy } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import type {
  ActivityExecuteInput,
  ActivityInboundCallsInterceptor,
  ActivityInterceptorsFactory,
  Next,
} from '@temporalio/worker';
import { AppError } from '../core/errors';
import type { Logger } from '../core/runtime/logger';

/**
 * The one place where an activity's error becomes a Temporal failure, for every activity of the worker:
 *
 * - a permanent `AppError` (a client-facing error with a contract code: a model's 400/401/403/404, an invalid format,
 *   a forbidden URL) fails the job with that code and its details, and is not retried: it fails the same way every
 *   time;
 * - a transient one (`AppError.retryable`: 429, 5xx, a timeout, a network error, a full local model queue, raised
 *   once the provider's own quick retries are spent) is a provider outage, and the step is tried again by Temporal,
 *   after `nextRetryDelay` = the larger of the provider's `Retry-After` and the retry policy's exponential backoff,
 *   for as long as the next attempt starts within `PROVIDER_OUTAGE_MAX_MS` of the step's first attempt (its first
 *   scheduled time, `Info.scheduledTimestampMs`). Past that window, or on the policy's last attempt where it has a
 *   limit, the job fails with the code, its details and `details.outage` ({@link OutageDetails}). The steps'
 *   journals (`JournaledModel`, `runStep`) make a retry repeat none of the calls that already answered;
 * - cancellation and `ApplicationFailure`s pass through unchanged;
 * - anything else is unexpected (a crashed engine, a full disk) and stays retryable, by the step's retry policy.
 *
 * The presets that wait out outages (`modelCall`, `providerCall` in workflows/activity-options.ts) have no attempt
 * limit, since how many attempts an outage takes depends on its Retry-After. So the boundary bounds the rest itself,
 * for steps whose policy has no limit: an unexpected error on attempt {@link UNEXPECTED_ATTEMPTS} or later is made
 * non-retryable (5 attempts, as the presets had before), and an attempt later than that which starts after the
 * outage window (plus a minute for clocks) is refused before it runs: its earlier attempts timed out or their
 * worker died, which the boundary cannot see, and the window already bounds every outage retry. Counting is over all
 * the step's attempts: an unexpected error after a long outage fails at once. Policies with a limit (`cpuBound`: 5,
 * bookkeeping: 50) keep it for unexpected errors, and one the server did not send (an old server) is left to it.
 *
 * Every outage retry and give-up is a warning in the worker log (job id, activity, attempt, delay, waited time).
 */
export interface ErrorBoundaryOptions {
  /** `PROVIDER_OUTAGE_MAX_MS`: how long a step waits out a provider outage, from its first attempt; 0: not at all. */
  outageMaxMs: number;
  /** Where every outage retry and give-up is logged; default: the activity's logger. */
  logger?: Logger;
}

/** Attempts an unexpected (non-`AppError`) error gets on a step whose retry policy has no attempt limit. */
export const UNEXPECTED_ATTEMPTS = 5;

/** Slack between worker and server clocks when refusing a late attempt. */
const LATE_ATTEMPT_GRACE_MS = 60_000;

/** `details.outage` of a job failed by a provider outage that lasted too long. */
export interface OutageDetails {
  /**
   * `window`: `PROVIDER_OUTAGE_MAX_MS` passed (or would have before the next attempt); `attempts`: the policy's limit.
   */
  gave_up: 'window' | 'attempts';
  window_ms: number;
  /** From the step's first attempt to this failure. */
  waited_ms: number;
  /** Attempts of the step, this one included. */
  attempts: number;
}

/** What of the activity's `Info` the decision reads. */
export type StepInfo = Pick<
  Info,
  'attempt' | 'scheduledTimestampMs' | 'currentAttemptScheduledTimestampMs' | 'retryPolicy'
>;

/** How the boundary handled an error, for the log. */
export type BoundaryOutcome =
  | { kind: 'pass' }
  | { kind: 'permanent' }
  | { kind: 'outage_retry'; delayMs: number; waitedMs: number }
  | { kind: 'outage_given_up'; outage: OutageDetails }
  | { kind: 'unexpected_given_up' };

/** A policy without an attempt limit (a server too old to say leaves it unknown: then the policy decides alone). */
const unlimited = (policy: RetryPolicy | undefined): boolean => policy !== undefined && !policy.maximumAttempts;
const ms = (d: RetryPolicy['initialInterval']): number | undefined =>
  d === undefined || d === null ? undefined : typeof d === 'number' ? d : msToNumber(d);

/** The wait the retry policy itself would give after `attempt` failed (Temporal's defaults where it says nothing). */
export function policyDelayMs(attempt: number, policy: RetryPolicy | undefined): number {
  const initial = ms(policy?.initialInterval) ?? 1000;
  const max = ms(policy?.maximumInterval) ?? 100 * initial;
  return Math.min(max, initial * (policy?.backoffCoefficient ?? 2) ** Math.max(0, attempt - 1));
}

/**
 * The failure an activity's error becomes (see {@link ErrorBoundaryOptions} for the rules), and how it was decided.
 * Pure: `now` is the time of the failure.
 */
export function decideFailure(
  err: unknown,
  info: StepInfo,
  opts: ErrorBoundaryOptions,
  now = Date.now(),
): { failure: unknown; outcome: BoundaryOutcome } {
  if (err instanceof ApplicationFailure || err instanceof CancelledFailure)
    return { failure: err, outcome: { kind: 'pass' } };
  if (!(err instanceof AppError)) {
    if (unlimited(info.retryPolicy) && info.attempt >= UNEXPECTED_ATTEMPTS && err instanceof Error) {
      return {
        failure: ApplicationFailure.fromError(err, { nonRetryable: true }),
        outcome: { kind: 'unexpected_given_up' },
      };
    }
    return { failure: err, outcome: { kind: 'pass' } };
  }
  const fail = (message: string, details: Record<string, unknown>) =>
    ApplicationFailure.create({ message, type: err.code, details: [details], nonRetryable: true });
  if (!err.retryable) return { failure: fail(err.message, err.details), outcome: { kind: 'permanent' } };
  const waitedMs = Math.max(0, now - info.scheduledTimestampMs);
  const delayMs = Math.max(err.retryAfterMs ?? 0, policyDelayMs(info.attempt, info.retryPolicy));
  const limit = info.retryPolicy?.maximumAttempts;
  const lastAttempt = !!limit && info.attempt >= limit;
  if (lastAttempt || waitedMs + delayMs > opts.outageMaxMs) {
    const outage: OutageDetails = {
      gave_up: lastAttempt ? 'attempts' : 'window',
      window_ms: opts.outageMaxMs,
      waited_ms: waitedMs,
      attempts: info.attempt,
    };
    const why = lastAttempt
      ? `given up after ${info.attempt} attempts of the step`
      : opts.outageMaxMs === 0
        ? 'provider outages are not waited out (PROVIDER_OUTAGE_MAX_MS=0)'
        : `given up after waiting out the provider outage for ${seconds(waitedMs)} (${info.attempt} attempt${info.attempt === 1 ? '' : 's'} of the step; the window is ${seconds(opts.outageMaxMs)}, PROVIDER_OUTAGE_MAX_MS)`;
    return {
      failure: fail(`${err.message}; ${why}`, { ...err.details, outage }),
      outcome: { kind: 'outage_given_up', outage },
    };
  }
  const failure = ApplicationFailure.create({
    message: err.message,
    type: err.code,
    details: [err.details],
    nonRetryable: false,
    nextRetryDelay: delayMs,
  });
  return { failure, outcome: { kind: 'outage_retry', delayMs, waitedMs } };
}

/**
 * An attempt that must not run: a later one than {@link UNEXPECTED_ATTEMPTS} of a step without an attempt limit,
 * started after the outage window (its earlier attempts timed out or their worker died; see the module comment).
 */
export function lateAttemptFailure(info: StepInfo, opts: ErrorBoundaryOptions): ApplicationFailure | undefined {
  if (!unlimited(info.retryPolicy) || info.attempt <= UNEXPECTED_ATTEMPTS) return undefined;
  const since = info.currentAttemptScheduledTimestampMs - info.scheduledTimestampMs;
  if (since <= opts.outageMaxMs + LATE_ATTEMPT_GRACE_MS) return undefined;
  return ApplicationFailure.create({
    message: `The step was given up after ${info.attempt - 1} attempts: they timed out or their worker stopped.`,
    type: 'INTERNAL_ERROR',
    details: [{ attempts: info.attempt - 1, waited_ms: since }],
    nonRetryable: true,
  });
}

const seconds = (n: number): string => `${(n / 1000).toFixed(1)} s`;

class ErrorBoundary implements ActivityInboundCallsInterceptor {
  constructor(private readonly opts: ErrorBoundaryOptions) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const ctx = Context.current();
    const at = {
      jobId: ctx.info.workflowExecution?.workflowId,
      activity: ctx.info.activityType,
      attempt: ctx.info.attempt,
    };
    const late = lateAttemptFailure(ctx.info, this.opts);
    if (late) {
      this.warn(ctx, at, late.message);
      throw late;
    }
    try {
      return await next(input);
    } catch (err) {
      // A cancelled activity's error, whatever it is, is the cancellation's: Temporal reports it as such.
      if (ctx.cancellationSignal.aborted) throw err;
      const { failure, outcome } = decideFailure(err, ctx.info, this.opts);
      const app =
        err instanceof AppError ? { code: err.code, status: err.details.status, provider: err.details.provider } : {};
      const message = err instanceof Error ? err.message : String(err);
      if (outcome.kind === 'outage_retry') {
        const fields = {
          ...at,
          ...app,
          delayMs: outcome.delayMs,
          waitedMs: outcome.waitedMs,
          windowMs: this.opts.outageMaxMs,
        };
        this.warn(ctx, fields, `provider outage: the step is tried again in ${seconds(outcome.delayMs)} (${message})`);
      } else if (outcome.kind === 'outage_given_up') {
        this.warn(ctx, { ...at, ...app, outage: outcome.outage }, `provider outage: the step is given up (${message})`);
      } else if (outcome.kind === 'unexpected_given_up') {
        this.warn(
          ctx,
          { ...at, err },
          `the step failed unexpectedly on its attempt ${ctx.info.attempt}, and is not tried again`,
        );
      }
      throw failure;
    }
  }

  private warn(ctx: Context, fields: Record<string, unknown>, message: string): void {
    if (this.opts.logger) this.opts.logger.warn(fields, message);
    else ctx.log.warn(message, fields);
  }
}

/**
 * The boundary, registered on every worker (and on `MockActivityEnvironment` in tests):
 * `interceptors: { activity: [errorBoundary({ outageMaxMs: config.PROVIDER_OUTAGE_MAX_MS, logger })] }`.
 */
export function errorBoundary(opts: ErrorBoundaryOptions): ActivityInterceptorsFactory {
  return () => ({ inbound: new ErrorBoundary(opts) });
}
