import { WorkflowNotFoundError } from '@temporalio/client';
import { readBlobJson, BlobNotFoundError, type BlobStore } from '../../core/stores/blob-store';
import { AppError } from '../../core/errors';
import { isJobId } from '../../core/jobs/ids';
import { redactParameters } from '../../core/jobs/job-params';
import { withResults, type ResultsRef } from '../../core/results/job-results';
import { jobRecordKey } from '../../core/stores/records';
import { jobStateQuery, type JobState } from '../../workflows/definitions';
import { isTerminal } from '../../workflows/job-state';
import type { TemporalGateway } from '../temporal';
import { QUERY_DEADLINE_MS, SharedReads, withWebhookLog } from './job-runs';

/** How often the waiters of a job query its workflow, together. */
const SHARED_QUERY_MS = 500;
/** How long one read of a job's record serves every waiter. */
const SHARED_RECORD_MS = 20;
/**
 * How long after this API created a job a long-poll of it reads only the job's record before its first query (see
 * `requireForWait`): about the time a small job takes from its start to its record on a busy 2-core machine.
 */
const FIRST_TASK_GRACE_MS = 300;

/** A job's state as its record holds it: finished jobs point at their results (`core/results/job-results.ts`). */
export type JobRecord = JobState & { results_ref?: ResultsRef };

/** What clients see of a job: internal fields dropped, the webhook token redacted. */
export function jobView(s: JobState): Record<string, unknown> {
  const {
    events: _e,
    version: _v,
    run: _r,
    legacy: _l,
    input: _i,
    results_ref: _f,
    ...rest
  } = s as JobRecord & { input?: unknown };
  (void _e, _v, _r, _l, _i, _f);
  return { ...rest, parameters: redactParameters(s.parameters), results: s.results ?? null };
}

/**
 * How jobs are read (record, query, pending record: see `JobService`). The base of `JobStarts` (job-starts.ts) and so
 * of `JobService` (jobs.ts), which start and restart jobs on top of these reads.
 */
export class JobReads {
  /** Reads shared by the waiters of a job (see `shared`). */
  private readonly reads = new SharedReads();
  /** Jobs this API created in the last FIRST_TASK_GRACE_MS, with when (oldest first). */
  private readonly young = new Map<string, number>();

  constructor(
    protected readonly temporal: TemporalGateway,
    readonly store: BlobStore,
  ) {}

  /**
   * The job's record, or null. With `results: false` a record that points at its results (`results_ref`) is
   * answered without reading them (its `results` is null): what a streamed answer needs.
   */
  async readRecord(jobId: string, opts: { results?: boolean } = {}): Promise<JobRecord | null> {
    try {
      const rec = await readBlobJson<JobRecord>(this.store, jobRecordKey(jobId));
      return opts.results === false ? rec : await withResults(this.store, rec);
    } catch (e) {
      if (e instanceof BlobNotFoundError) return null;
      throw e;
    }
  }

  /** The job's current state (webhook delivery lines merged into its logs), or null when there is no such job. */
  async state(jobId: string): Promise<JobState | null> {
    // Concurrent reads of one job share the read in flight (never an older one).
    return this.reads.get(`live:${jobId}`, 0, async () => {
      const s = await this.bareState(jobId);
      return s ? this.withWebhookLog(s) : null;
    });
  }

  /**
   * The job's state as `state` reads it, without its results or webhook lines: what a listing shows of it (status,
   * progress, times, error).
   */
  summaryState(jobId: string): Promise<JobState | null> {
    return this.bareState(jobId, { results: false });
  }

  protected async bareState(jobId: string, opts: { results?: boolean } = {}): Promise<JobState | null> {
    if (!isJobId(jobId)) return null;
    const rec = await this.readRecord(jobId, opts);
    if (rec && isTerminal(rec)) return rec;
    this.temporal.ensureReachable();
    const handle = this.temporal.client.workflow.getHandle(jobId);
    try {
      // A query needs a worker; without one it would wait, so it gets a deadline and a fallback.
      const live = await this.temporal.whileReachable(() =>
        this.temporal.connection.withDeadline(Date.now() + QUERY_DEADLINE_MS, () => handle.query(jobStateQuery)),
      );
      // Finished between the record read above and the query: the record (written before the terminal status
      // became visible) carries the full results, the live state only a summary. A finished run without a record is
      // a deleted job whose workflow Temporal has not removed yet (it does so in the background, within a minute).
      if (isTerminal(live)) return this.readRecord(jobId, opts);
      return live;
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) return rec;
      if (rec) return rec;
      // Temporal found unreachable during the query (whileReachable): no describe, that would hang the same way.
      if (e instanceof AppError && e.code === 'UNAVAILABLE') throw e;
      const d = await handle.describe().catch((err: unknown) => {
        if (err instanceof WorkflowNotFoundError) return null;
        throw err;
      });
      if (!d) return null;
      throw new AppError('UNAVAILABLE', 'The job exists but no worker answers for it right now; try again shortly.', {
        job_id: jobId,
        workflow_status: d.status.name,
      });
    }
  }

  async require(jobId: string): Promise<JobState> {
    const s = await this.state(jobId);
    if (!s) throw new AppError('JOB_NOT_FOUND', `No job with id ${jobId}.`, { job_id: jobId });
    return s;
  }

  /**
   * The state a long-poll (`wait`) starts from. A job this API created less than FIRST_TASK_GRACE_MS ago is most
   * likely in its first workflow task, which a small job completes in (a conversion in the task, the record, the
   * end): a query then makes the worker answer it in the middle of the task and finish the job in a second task,
   * through the server once more. So its record is read first, for up to the grace (within the wait): a job
   * finished by then answers from its record, as a waiting client would have been answered; past the grace, or for
   * any other job, the state as `require` reads it (the long-poll then waits for a change from that state).
   */
  async requireForWait(jobId: string, seconds: number): Promise<JobState> {
    const born = this.young.get(jobId);
    if (born !== undefined) {
      const until = Math.min(born + FIRST_TASK_GRACE_MS, Date.now() + seconds * 1000);
      // Every 10 ms (a stat-sized read; waiters of the job share the read in flight): the grace is short.
      for (;;) {
        const rec = await this.reads.get(`first:${jobId}`, 0, () => this.readRecord(jobId, { results: false }));
        if ((rec && isTerminal(rec)) || Date.now() >= until) break;
        await new Promise((r) => setTimeout(r, Math.max(1, Math.min(10, until - Date.now()))));
      }
    }
    return this.require(jobId);
  }

  /** Notes a job this API just created (`requireForWait`), forgetting those past the grace. */
  protected noteYoung(jobId: string): void {
    const now = Date.now();
    for (const [id, at] of this.young) {
      if (now - at < FIRST_TASK_GRACE_MS) break;
      this.young.delete(id);
    }
    this.young.set(jobId, now);
  }

  /**
   * Waits up to `seconds` for the job to change from `s` (any status or progress change), then answers the newest
   * state. A finished job answers at once.
   */
  async waitForChange(s: JobState, seconds: number): Promise<JobState> {
    if (isTerminal(s) || seconds <= 0) return s;
    // Read-only waiting: the job's record is written before a terminal status shows, so polling it (a cheap blob
    // read) sees the end within tens of milliseconds; a query every 500 ms sees progress. No workflow Update is opened,
    // so
    // waiting clients add nothing to the job's history and are not capped by the server's in-flight update limit.
    const deadline = Date.now() + seconds * 1000;
    const changed = (now: JobState) =>
      now.status !== s.status || now.version !== s.version || now.updated_at !== s.updated_at;
    let interval = 25;
    let lastQuery = Date.now();
    for (;;) {
      await new Promise((r) => setTimeout(r, Math.max(1, Math.min(interval, deadline - Date.now()))));
      const rec = await this.reads.get(`record:${s.job_id}`, SHARED_RECORD_MS, () =>
        this.readRecord(s.job_id, { results: false }),
      );
      if (rec && (isTerminal(rec) || (rec.status !== s.status && s.status !== 'processing')))
        return withResults(this.store, rec);
      if (Date.now() - lastQuery >= SHARED_QUERY_MS || Date.now() >= deadline) {
        lastQuery = Date.now();
        const now = (await this.reads.get(`state:${s.job_id}`, SHARED_QUERY_MS, () => this.state(s.job_id))) ?? s;
        if (changed(now) || Date.now() >= deadline) return now;
      }
      interval = Math.min(250, Math.round(interval * 1.25));
    }
  }

  /** The job with its webhook delivery lines merged into its logs (job-runs.ts). */
  withWebhookLog<T extends JobState>(s: T): Promise<T> {
    return withWebhookLog(this.store, s);
  }
}
