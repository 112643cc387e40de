/**
 * Inputs, outputs and messages shared by workflows, the API and the worker. Types and message definitions only:
 * renaming a message or a workflow breaks running jobs.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { JobParams, JobSpec, JobType } from '../core/jobs/job-params';

export type { JobType } from '../core/jobs/job-params';

export type JobStatus = 'pending' | 'processing' | 'completed' | 'failed';
export type LogLevel = 'debug' | 'info' | 'warning' | 'error';

export interface JobProgress {
  step: string;
  percent: number;
  message: string;
}

export interface JobLog {
  timestamp: string;
  level: LogLevel;
  message: string;
}

export interface JobError {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

export interface WebhookConfig {
  url: string;
  /** Only in jobs started before tokens were sealed; new jobs keep it in the blob store (`sealed`). */
  token?: string;
  jobId?: string;
  /** The token is in the job's blob (core/stores/webhook-secret.ts), out of workflow inputs and histories. */
  sealed?: boolean;
}

/** One event of a job, as sent to webhooks and streamed over SSE. `id` increases within a job. */
export interface JobEvent {
  id: number;
  phase: 'processing' | 'completed' | 'failed';
  progress: number;
  message: string;
  timestamp: string;
  error?: JobError;
  /**
   * Set on events that are not the next of the job's own sequence: a closeout's failure (`closeout`) and the events
   * of a reset run (`reset-<run>`), whose numbers may repeat those an earlier run sent; it makes their webhook ids
   * (`X-Webhook-Id`) their own, so a deduplicating receiver never drops a real outcome for an earlier event.
   */
  tag?: string;
}

/** What a job's input holds besides its type and parameters. */
export interface JobRun {
  jobId: string;
  userId?: string;
  batchId?: string;
  /** Position in the batch's manifest. */
  batchIndex?: number;
  createdAt: string;
  webhook?: WebhookConfig;
  /** 1 for the first run, +1 per restart. */
  run: number;
  /** Logs of earlier runs (restart keeps them). */
  priorLogs?: JobLog[];
  /** Last event id of earlier runs, so event ids keep increasing across restarts. */
  priorEventId?: number;
  legacy?: boolean;
  /** Multiplies the webhook retry delays (1 in production; tests shrink it, the schedule's shape stays). */
  webhookRetryScale?: number;
  /**
   * Set by a batch run that counts its children by their completion (`patched('batch-counts-completions')`): the
   * first run of this job then sends no `jobFinished` signal, its close is the report. Restarted runs (`run` > 1),
   * which the batch did not start, still signal.
   */
  reportsByCompletion?: boolean;
}

/**
 * The input of `jobWorkflow`: a discriminated union on `jobType` (core/jobs/job-params.ts), its parameters typed by the
 * job type as the API validated them; `JobInput<'pdf'>` is the pdf member, the one the pdf pipeline gets.
 */
export type JobInput<T extends JobType = JobType> = JobRun & JobSpec<T>;

/**
 * A job's input from its type and parameters held apart (a request, a manifest entry, a child job): the one place
 * the pair is asserted to match. Keys in the order inputs always had: `jobId`, `jobType`, `parameters`, then `run`'s.
 */
export function jobInput<T extends JobType>(jobType: T, parameters: JobParams<T>, run: JobRun): JobInput<T> {
  const { jobId, ...rest } = run;
  return { jobId, jobType, parameters, ...rest } as JobInput<T>;
}

/** Live state of a job; the query answers it. Large results live in the blob store, not here. */
export interface JobState {
  job_id: string;
  job_type: JobType;
  status: JobStatus;
  created_at: string;
  updated_at: string;
  parameters: Record<string, unknown>;
  user_id?: string;
  batch_id?: string;
  progress: JobProgress;
  results: Record<string, unknown> | null;
  logs: JobLog[];
  error?: JobError;
  events: JobEvent[];
  /** Increases at every change; long-polls and SSE wait on it. */
  version: number;
  run: number;
  legacy?: boolean;
  /** The input of the latest run (restart builds the next run from it). */
  input?: Omit<JobRun, 'priorLogs'> & JobSpec;
}

export const jobStateQuery = defineQuery<JobState>('jobState');
/** Fails the job: cancels running work and records `reason`. */
export const failJobSignal = defineSignal<[{ reason: string }]>('failJob');

export interface BatchInput {
  batchId: string;
  batchName: string;
  createdAt: string;
  userId?: string;
  jobCount: number;
  /** Blob key of the manifest: `BatchManifest`. */
  manifestKey: string;
  legacy?: boolean;
  /** How many jobs may run at once. */
  window: number;
  /** State carried over continue-as-new. */
  carry?: BatchCarry;
  /** History length at which the batch continues as new (default 8000; tests lower it). */
  historyLimit?: number;
  webhookRetryScale?: number;
  /**
   * The run that closes out a run of this batch that ended without its own end (terminated, cancelled, timed out or
   * failed: worker/batch-closeout.ts starts it with that run's last state as `carry`): it fails the jobs that never
   * started, cancels the running ones with `failJob`, counts how each ended and writes the batch's record.
   */
  closing?: { status: BatchClosedStatus; runId: string };
}

/** How a batch's run ended without writing its record. */
export type BatchClosedStatus = 'TERMINATED' | 'CANCELLED' | 'TIMED_OUT' | 'FAILED';

export interface BatchCarry {
  statuses: string;
  next: number;
  active: boolean;
  /** Job ids of the jobs running now, by manifest index (fail-all signals them). */
  running?: Record<number, string>;
  /** The newest run of each job restarted at least once, by manifest index (stale run reports are ignored). */
  runs?: Record<number, number>;
}

/** Job status codes in `BatchState.statuses`, one character per job in manifest order. */
export const STATUS_CODE = { pending: 'p', processing: 'r', completed: 'c', failed: 'f' } as const;
export const CODE_STATUS: Record<string, JobStatus> = { p: 'pending', r: 'processing', c: 'completed', f: 'failed' };

export interface BatchManifest {
  batch_id: string;
  batch_name: string;
  created_at: string;
  user_id?: string;
  legacy?: boolean;
  jobs: { job_id: string; job_type: JobType; parameters: JobParams; webhook?: WebhookConfig }[];
}

export interface BatchState {
  batch_id: string;
  batch_name: string;
  status: 'pending' | 'processing' | 'completed';
  active: boolean;
  created_at: string;
  updated_at: string;
  job_count: number;
  completed_count: number;
  failed_count: number;
  processing_count: number;
  pending_count: number;
  statuses: string;
  legacy?: boolean;
}

export const batchStateQuery = defineQuery<BatchState>('batchState');
/** The state a run of the batch would carry over continue-as-new: what its closeout continues from. */
export const batchCarryQuery = defineQuery<BatchCarry>('batchCarry');
/**
 * Without an argument (the spec's bare call) the flag flips; with `{active}` it is set, so a retried call is harmless.
 */
export const toggleActiveSignal = defineSignal<[{ active?: boolean }?]>('toggleActive');
/**
 * A job of the batch ended its run `run` (absent from runs started before runs were numbered in signals). The batch
 * ignores the report of a run older than the newest run it knows of for that job: a late signal of a replaced run.
 */
export const jobFinishedSignal = defineSignal<[{ index: number; status: JobStatus; run?: number }]>('jobFinished');
/**
 * A restarted job of this batch is running again: sent by the new run itself (`run`, `jobId`), so the batch counts
 * it as running and fail-all can reach it; a report of a run older than one the batch already knows is ignored.
 */
export const jobRestartedSignal = defineSignal<[{ index: number; run?: number; jobId?: string }]>('jobRestarted');
export interface FailAllResult {
  failed_count: number;
}
export const failAllUpdate = defineUpdate<FailAllResult, [{ reason: string }]>('failAll');

/** The workflow type of a job's webhook notifier (activities start it by name). */
export const NOTIFIER_WORKFLOW_TYPE = 'jobNotifierWorkflow';

/**
 * One notifier per job (workflow id `notify-<job id>`, core/jobs/ids.ts) delivers the job's webhook events, in order,
 * across its runs: the job's run hands events over with this signal (or signal-with-start) and closes without
 * waiting for delivery, so a failed job can be restarted while its failure webhook is still being retried.
 */
export interface NotifierInput {
  jobId: string;
  webhook: WebhookConfig;
  webhookRetryScale?: number;
  /** Events not yet delivered when the notifier continued as new. */
  queued?: JobEvent[];
}
export const notifyEventsSignal = defineSignal<[{ events: JobEvent[] }]>('notifyEvents');

export interface PingResult {
  io: string;
  media: string;
}

export interface PingInput {
  ioQueue: string;
  mediaQueue: string;
}
