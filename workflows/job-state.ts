/**
 * Pure state transitions of a job (no Temporal imports, tested on their own). Invariants: percent never goes
 * backwards within a run; 100 only at `completed`; every change bumps `version`.
 */
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
