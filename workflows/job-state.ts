/**
 * Pure state transitions of a job (no workflow runtime calls; Temporal's failure types only), tested on their own.
 * Invariants: percent never goes backwards within a run; 100 only at `completed`; every change bumps `version`.
 */
import { ApplicationFailure, isCancellation } from '@temporalio/workflow';
import type { JobError, JobEvent, JobInput, JobLog, JobState, LogLevel } from './definitions';

export const MAX_LOGS = 1000;
export const MAX_EVENTS = 200;

/**
 * A job as accepted, before a worker takes it: the one builder of a pending state (the workflow's start, the API's
 * answer to a create or restart, a batch's pending records). `message` says why it waits.
 */
export function initialState(input: JobInput, now: string, message = 'Waiting to be processed'): JobState {
  return {
    job_id: input.jobId,
    job_type: input.jobType,
    status: 'pending',
    created_at: input.createdAt,
    updated_at: now,
    parameters: input.parameters,
    ...(input.userId ? { user_id: input.userId } : {}),
    ...(input.batchId ? { batch_id: input.batchId } : {}),
    progress: { step: 'queued', percent: 0, message },
    results: null,
    logs: [...(input.priorLogs ?? [])],
    events: [],
    version: 1,
    run: input.run,
    ...(input.legacy ? { legacy: true } : {}),
    input: withoutPriorLogs(input),
  };
}

function withoutPriorLogs(input: JobInput): JobState['input'] {
  const { priorLogs: _p, ...rest } = input;
  void _p;
  return rest;
}

function touch(s: JobState, now: string): void {
  s.updated_at = now;
  s.version += 1;
}

export function addLog(s: JobState, level: LogLevel, message: string, now: string): void {
  s.logs.push({ timestamp: now, level, message });
  if (s.logs.length > MAX_LOGS) s.logs.splice(10, s.logs.length - MAX_LOGS);
  touch(s, now);
}

function addEvent(s: JobState, ev: Omit<JobEvent, 'id'>, baseId: number): JobEvent {
  const last = s.events.length ? s.events[s.events.length - 1].id : baseId;
  const event = { id: last + 1, ...ev };
  s.events.push(event);
  if (s.events.length > MAX_EVENTS) s.events.splice(0, s.events.length - MAX_EVENTS);
  return event;
}

export function startProcessing(s: JobState, now: string): void {
  s.status = 'processing';
  s.progress = {
    step: 'started',
    percent: Math.max(1, s.progress.percent === 100 ? 0 : s.progress.percent),
    message: 'Processing started',
  };
  touch(s, now);
}

/** Applies a progress report; a lower percent is clamped to the current one. Returns the event to emit. */
export function reportProgress(
  s: JobState,
  step: string,
  percent: number,
  message: string,
  now: string,
  baseEventId = 0,
): JobEvent | null {
  if (s.status !== 'processing') return null;
  const p = Math.min(99, Math.max(s.progress.percent, Math.round(percent)));
  s.progress = { step, percent: p, message };
  touch(s, now);
  return addEvent(s, { phase: 'processing', progress: p, message, timestamp: now }, baseEventId);
}

export function complete(s: JobState, results: Record<string, unknown>, now: string, baseEventId = 0): JobEvent {
  s.status = 'completed';
  s.results = results;
  s.progress = { step: 'completed', percent: 100, message: 'Completed' };
  delete s.error;
  touch(s, now);
  return addEvent(s, { phase: 'completed', progress: 100, message: 'Job completed', timestamp: now }, baseEventId);
}

export function fail(s: JobState, error: JobError, now: string, baseEventId = 0): JobEvent {
  s.status = 'failed';
  s.error = error;
  s.progress = { ...s.progress, step: 'failed', message: error.message };
  touch(s, now);
  return addEvent(
    s,
    { phase: 'failed', progress: s.progress.percent, message: error.message, timestamp: now, error },
    baseEventId,
  );
}

export const isTerminal = (s: { status: string }): boolean => s.status === 'completed' || s.status === 'failed';

/** The logs a restart carries into the next run, with a line saying so. */
export function logsForRestart(logs: JobLog[], now: string): JobLog[] {
  return [...logs, { timestamp: now, level: 'info', message: 'Job restarted' }];
}

/**
 * The job's error for what ended its pipeline: a cancel (by `failJob`, whose reason it carries, or from outside),
 * the code of the application failure an activity or child job threw, or an internal error that names no server
 * detail.
 */
export function toJobError(err: unknown, failReason: string | undefined): JobError {
  if (failReason && isCancellation(err)) return { code: 'CANCELLED', message: failReason, details: {} };
  if (isCancellation(err))
    return {
      code: 'CANCELLED',
      message: 'The job was cancelled while it ran (a cancel request from an operator).',
      details: {},
    };
  let e = err as { cause?: unknown; type?: string; message?: string; details?: unknown[] };
  // Activity and child failures wrap the application failure that carries the code.
  while (e && !(e instanceof ApplicationFailure) && e.cause) e = e.cause as typeof e;
  if (e instanceof ApplicationFailure) {
    const details = (
      Array.isArray(e.details) && e.details[0] && typeof e.details[0] === 'object' ? e.details[0] : {}
    ) as Record<string, unknown>;
    if (e.type && /^[A-Z][A-Z0-9_]*$/.test(e.type)) return { code: e.type, message: e.message, details };
    // Not a code of ours (the class name of an unexpected error, e.g. `Error`): an internal error, without its
    // message, which can name server paths (the worker's log keeps it).
    return {
      code: 'INTERNAL_ERROR',
      message: 'The job failed on an unexpected internal error.',
      details: { error_type: e.type ?? 'unknown' },
    };
  }
  return {
    code: 'INTERNAL_ERROR',
    message: 'The job failed on an unexpected internal error.',
    details: { error_type: (err as Error)?.name ?? 'unknown' },
  };
}

/**
 * One run of a job as its workflow holds it: the live state the `jobState` query answers, a `failJob` request, how
 * the pipeline ended and the final state that makes it a record. Plain state and its transitions (the functions
 * above); the workflow only wires it to its handlers, the pipeline, the activities and the webhooks, the way the
 * Temporal samples' message-passing workflows keep theirs.
 */
export class JobRun {
  /** The live state; the same object throughout the run (the query answers it). */
  readonly state: JobState;
  private readonly baseEventId: number;
  private failReason: string | undefined;
  private error: JobError | undefined;
  private results: Record<string, unknown> | undefined;
  /** A cancel from outside (the Temporal UI, `temporal workflow cancel`), not by `failJob`. */
  private cancelled: unknown;

  /**
   * `eventTag`: set on every event of this run (a reset run's, whose numbers repeat those its predecessor sent), so
   * their webhook ids are their own (`JobEvent.tag`).
   */
  constructor(
    private readonly input: JobInput,
    private readonly now: () => string,
    private readonly eventTag?: string,
  ) {
    this.state = initialState(input, now());
    this.baseEventId = input.priorEventId ?? 0;
  }

  private tagged<T extends JobEvent | null>(ev: T): T {
    if (ev && this.eventTag) ev.tag = this.eventTag;
    return ev;
  }

  /** The job is one of a batch's, which it tells when it runs again and when it ends. */
  get inBatch(): boolean {
    return this.input.batchId !== undefined && this.input.batchIndex !== undefined;
  }

  /** Adds a log line (a bound function: the pipeline and the webhook sender log through it). */
  readonly log = (level: LogLevel, message: string): void => addLog(this.state, level, message, this.now());

  /** The run starts processing; a restarted run says which run it is. */
  start(): void {
    if (this.input.run > 1) this.log('info', `Run ${this.input.run} started`);
    startProcessing(this.state, this.now());
    this.log('info', `Processing ${this.input.jobType} job`);
  }

  /** A progress report of the pipeline: the event for the webhooks, or null when the job no longer processes. */
  readonly progress = (step: string, percent: number, message: string): JobEvent | null =>
    this.tagged(reportProgress(this.state, step, percent, message, this.now(), this.baseEventId));

  /** `failJob`: true for the first request while the job is not finished (the workflow then cancels the pipeline). */
  requestFail(reason: string): boolean {
    if (isTerminal(this.state) || this.failReason) return false;
    this.failReason = reason;
    return true;
  }

  /** How the pipeline ended: its results, or what it threw. A `failJob` request makes a success a cancel. */
  settle(outcome: { results: Record<string, unknown> } | { error: unknown }): void {
    if ('error' in outcome) {
      this.error = toJobError(outcome.error, this.failReason);
      // Cancelled from outside: the run ends as cancelled once the job has been wrapped up as failed.
      if (!this.failReason && isCancellation(outcome.error)) this.cancelled = outcome.error;
    } else this.results = outcome.results;
    if (this.failReason && !this.error) this.error = { code: 'CANCELLED', message: this.failReason, details: {} };
  }

  /**
   * The final state on a copy, with its final event: the workflow writes it as the record before it becomes the
   * live state (`commit`), so a reader never sees a finished job whose record is missing.
   */
  final(): { state: JobState; event: JobEvent } {
    const s: JobState = JSON.parse(JSON.stringify(this.state));
    const now = this.now();
    if (this.error) {
      const event = this.tagged(fail(s, this.error, now, this.baseEventId));
      addLog(s, 'error', `Job failed: ${this.error.code}: ${this.error.message}`, this.now());
      return { state: s, event };
    }
    const event = this.tagged(complete(s, this.results ?? {}, now, this.baseEventId));
    addLog(s, 'info', 'Job completed', this.now());
    return { state: s, event };
  }

  /** The recorded final state becomes the live one. */
  commit(final: JobState): void {
    Object.assign(this.state, final);
  }

  /**
   * How the workflow run ends: an outside cancel rethrown, a failed job as a non-retryable failure with its code
   * (operators see the run as Failed, and `restart` may start the next at once), else the status.
   */
  result(): { status: string } {
    if (this.cancelled) throw this.cancelled;
    if (this.error) throw ApplicationFailure.nonRetryable(this.error.message, this.error.code, this.error.details);
    return { status: this.state.status };
  }
}
