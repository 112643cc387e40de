import { createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { readBlobJson, BlobNotFoundError, type BlobStore } from '../../core/stores/blob-store';
import { AppError, isErrorCode } from '../../core/errors';
import { isJobId, newJobId } from '../../core/jobs/ids';
import { redactParameters, type JobSpec, type JobType } from '../../core/jobs/job-params';
import { withResults, type ResultsRef } from '../../core/results/job-results';
import { sealWebhook } from '../../core/stores/webhook-secret';
import { jobRecordKey } from '../../core/stores/records';
import { jobSearchAttributes } from '../../core/runtime/search-attributes';
// Workflows are started by name (the worker registers each under its function's name): the API loads no workflow code.
import type { jobWorkflow } from '../../workflows/job.workflow';
import { jobInput, jobStateQuery, type JobInput, type JobState, type WebhookConfig } from '../../workflows/definitions';
import { initialState, isTerminal, logsForRestart } from '../../workflows/job-state';
import type { TemporalGateway } from '../temporal';
import { JobAccepted, type AsyncPreference } from './async-preference';
import { offloadParameters } from './job-intake';
import { awaitRunClosed, awaitRunRecord, QUERY_DEADLINE_MS, SharedReads, withWebhookLog } from './job-runs';
import { RequestBound } from './request-bound';
import type { StoredUpload, UploadOffer } from '../uploads';

/** A job to create: its type and validated parameters (`validateParameters`), and who asks. */
export type CreateJob<T extends JobType = JobType> = JobSpec<T> & {
  userId?: string;
  webhook?: WebhookConfig;
  legacy?: boolean;
  idempotencyKey?: string;
};

/** How often the waiters of a job query its workflow, together. */
const SHARED_QUERY_MS = 500;
/** How long one read of a job's record serves every waiter. */
const SHARED_RECORD_MS = 20;
/**
 * A backstop only: a start to a Temporal that stopped answering is answered 503 by the reachability probe's verdict
 * (`whileReachable`, within about 1.5 s); this deadline ends a start that hangs while the probes still answer.
 */
const START_DEADLINE_MS = 5000;
/**
 * How long after this API created a job a long-poll of it reads only the job's record before its first query (see
 * `requireForWait`): about the time a small job takes from its start to its record on a busy 2-core machine.
 */
const FIRST_TASK_GRACE_MS = 300;

/** A uuid-shaped id derived from a client key, so a repeated key names the same job without a lookup race. */
export function idFromKey(prefix: 'job' | 'batch', key: string, scope = ''): string {
  const h = createHash('sha256').update(`${prefix}\0${scope}\0${key}`).digest('hex');
  return `${prefix}-${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

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
 * Jobs on Temporal: one workflow per job (workflow id = job id). A finished job is read from its record in the
 * blob store; a live one from the workflow's query; a batch job that has not started from its pending record.
 */
export class JobService {
  /** The bound on concurrent heavy requests (synchronous processing), shared by every route of the app. */
  readonly heavy: RequestBound;
  /** Reads shared by the waiters of a job (see `shared`). */
  private readonly reads = new SharedReads();
  /** Jobs this API created in the last FIRST_TASK_GRACE_MS, with when (oldest first). */
  private readonly young = new Map<string, number>();
  /** Uploads of requests in flight, by blob key, that a job started on them takes as its input (`offerUpload`). */
  private readonly offers = new Map<string, { jobId: string; taken: boolean }>();

  constructor(
    private readonly temporal: TemporalGateway,
    readonly store: BlobStore,
    private readonly webhookRetryScale = 1,
    opts: { maxHeavyRequests?: number } = {},
  ) {
    this.heavy = new RequestBound(opts.maxHeavyRequests ?? 0);
  }

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

  private async bareState(jobId: string): Promise<JobState | null> {
    if (!isJobId(jobId)) return null;
    const rec = await this.readRecord(jobId);
    if (rec && isTerminal(rec)) return rec;
    this.temporal.ensureReachable();
    const handle = this.temporal.client.workflow.getHandle(jobId);
    try {
      // A query needs a worker; without one it would wait, so it gets a deadline and a fallback.
      const live = await this.temporal.whileReachable(() =>
        this.temporal.connection.withDeadline(Date.now() + QUERY_DEADLINE_MS, () => handle.query(jobStateQuery)),
      );
      // Finished between the record read above and the query: the record (written before the terminal status
      // became visible) carries the full results, the live state only a summary.
      if (isTerminal(live)) return (await this.readRecord(jobId)) ?? live;
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
  private noteYoung(jobId: string): void {
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

  /**
   * Offers a request's upload to the job the request starts on it (api/uploads.ts `withUpload`): that job gets the id
   * the upload's key names and owns the upload from the moment its start is sent (`taken`).
   */
  offerUpload(upload: StoredUpload): UploadOffer {
    const offer = { jobId: upload.jobId, taken: false };
    this.offers.set(upload.key, offer);
    return {
      get taken() {
        return offer.taken;
      },
      withdraw: () => {
        if (this.offers.get(upload.key) === offer) this.offers.delete(upload.key);
      },
    };
  }

  /** Starts a job. With an idempotency key, a repeated request answers the job the first one created. */
  async create(req: CreateJob): Promise<{ state: JobState; created: boolean }> {
    // Before anything is written: a job refused for an unreachable Temporal leaves nothing behind.
    this.temporal.ensureReachable();
    const fileKey = (req.parameters as { file_key?: unknown }).file_key;
    const offer = typeof fileKey === 'string' ? this.offers.get(fileKey) : undefined;
    const jobId = req.idempotencyKey ? idFromKey('job', req.idempotencyKey) : (offer?.jobId ?? newJobId());
    if (req.idempotencyKey) {
      const existing = await this.state(jobId);
      if (existing) return { state: existing, created: false };
    }
    const createdAt = new Date().toISOString();
    const sealed = await sealWebhook(this.store, jobId, req.webhook, req.parameters);
    const input: JobInput = jobInput(req.jobType, await offloadParameters(this.store, jobId, sealed.parameters), {
      jobId,
      createdAt,
      run: 1,
      ...(req.userId ? { userId: req.userId } : {}),
      ...(sealed.webhook ? { webhook: sealed.webhook } : {}),
      ...(req.legacy ? { legacy: true } : {}),
      ...(this.webhookRetryScale !== 1 ? { webhookRetryScale: this.webhookRetryScale } : {}),
    });
    // From here the upload is the job's input: a start given up at its deadline may still have started the job (an
    // upload no job took is removed by retention as a leftover).
    if (offer) offer.taken = true;
    try {
      // A start that hangs (Temporal stopped, not dead) ends with 503 when the probe finds Temporal unreachable
      // (retry with the key).
      await this.temporal.whileReachable(() =>
        this.temporal.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
          this.temporal.client.workflow.start<typeof jobWorkflow>('jobWorkflow', {
            workflowId: jobId,
            taskQueue: this.temporal.queues.io,
            args: [input],
            workflowIdReusePolicy: 'REJECT_DUPLICATE',
            typedSearchAttributes: jobSearchAttributes({ jobType: req.jobType, userId: req.userId }),
            memo: { summary: `${req.jobType} job${req.userId ? ` of ${req.userId}` : ''}` },
          }),
        ),
      );
    } catch (e) {
      if (e instanceof WorkflowExecutionAlreadyStartedError && req.idempotencyKey) {
        const existing = await this.state(jobId);
        if (existing) return { state: existing, created: false };
      }
      throw e;
    }
    this.noteYoung(jobId);
    return { state: initialState(input, createdAt), created: true };
  }

  /**
   * Runs a job and waits for it (synchronous endpoints). Past `timeoutMs` it answers 504 `TIMEOUT` with the job id,
   * and the work goes on. A failed job becomes the error it failed with.
   */
  async runSync(
    req: CreateJob,
    timeoutMs: number,
    opts: { results?: boolean; prefer?: AsyncPreference } = {},
  ): Promise<JobRecord> {
    const { state } = await this.create(req);
    const prefer = opts.prefer;
    if (prefer?.respondAsync || prefer?.waitMs === 0) throw new JobAccepted(state, prefer.respondAsync);
    // The client's own wait: past it, the job is handed over (202), not a 504.
    const asked = prefer?.waitMs;
    if (asked !== undefined) timeoutMs = Math.min(timeoutMs, asked);
    const handle = this.temporal.client.workflow.getHandle(state.job_id);
    // Past the limit the long poll for the result is aborted, not left open until the job ends.
    const stop = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      this.temporal.connection
        .withAbortSignal(stop.signal, () => handle.result())
        .then(
          () => 'done' as const,
          () => (stop.signal.aborted ? ('timeout' as const) : ('done' as const)),
        ),
      new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs))),
      // Temporal gone (refused or hanging): the caller learns it within seconds, with the job to poll later.
      this.temporal.whenUnreachable(stop.signal).then(() => 'unreachable' as const),
    ]);
    clearTimeout(timer);
    stop.abort();
    if (outcome === 'unreachable') {
      throw new AppError(
        'UNAVAILABLE',
        `The job engine (Temporal) became unreachable while the job ran; poll GET ` +
          `/api/jobs/${state.job_id} once it is back.`,
        {
          job_id: state.job_id,
          reason: 'temporal_unreachable',
        },
      );
    }
    if (outcome === 'timeout' && asked !== undefined)
      throw new JobAccepted({ job_id: state.job_id, status: 'processing' }, false);
    if (outcome === 'timeout') {
      throw new AppError(
        'TIMEOUT',
        `The job is still running after ${timeoutMs} ms; poll GET /api/jobs/${state.job_id}.`,
        { job_id: state.job_id },
      );
    }
    const done = (await this.readRecord(state.job_id, opts)) ?? (await this.require(state.job_id));
    if (done.status === 'failed') throw jobErrorToAppError(done.error, state.job_id);
    return done;
  }

  /**
   * `failed` → `pending` under the same id; the new run reuses the steps already done. The API only starts the run:
   * the run writes its own record and reports itself to its batch (one writer per record), so no interleaving of a
   * fast-failing run with this request can leave a stale record or batch count behind. Answered once the run's
   * record shows it (normally within a workflow task; after {@link RESTART_VISIBLE_MS} without a worker), as the
   * job was accepted: `pending`.
   */
  async restart(jobId: string): Promise<JobState> {
    // The job's own logs (the webhook log stays apart, and is merged into reads of every run).
    const s = await this.bareState(jobId);
    if (!s) throw new AppError('JOB_NOT_FOUND', `No job with id ${jobId}.`, { job_id: jobId });
    if (s.status !== 'failed') {
      throw new AppError('INVALID_STATE', `Only a failed job can be restarted; this one is ${s.status}.`, {
        job_id: jobId,
        status: s.status,
      });
    }
    const prev = s.input;
    if (!prev)
      throw new AppError('INVALID_STATE', 'This job cannot be restarted: its input was not recorded.', {
        job_id: jobId,
      });
    const now = new Date().toISOString();
    const lastEvent = s.events.length ? s.events[s.events.length - 1].id : 0;
    const input: JobInput = {
      ...prev,
      run: (s.run ?? 1) + 1,
      priorLogs: logsForRestart(s.logs, now),
      priorEventId: lastEvent,
    };
    // A run closed out by the sweeper may still be handing its failure over; the failed run itself closes right
    // after its record (its webhooks are the notifier's): both are a matter of moments.
    const closedOutRun = typeof s.error?.details?.run_id === 'string' ? s.error.details.run_id : undefined;
    this.temporal.ensureReachable();
    await awaitRunClosed(this.temporal, jobId, s.run ?? 1, closedOutRun);
    try {
      await this.temporal.client.workflow.start<typeof jobWorkflow>('jobWorkflow', {
        workflowId: jobId,
        taskQueue: this.temporal.queues.io,
        args: [input],
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
        typedSearchAttributes: jobSearchAttributes({ jobType: s.job_type, batchId: s.batch_id, userId: s.user_id }),
        memo: { summary: `${s.job_type} job, run ${input.run}` },
      });
    } catch (e) {
      if (e instanceof WorkflowExecutionAlreadyStartedError) {
        throw new AppError('INVALID_STATE', 'The job is already running again.', { job_id: jobId });
      }
      throw e;
    }
    // The answer is the job as accepted (`pending`); reads after it see the new run's own record.
    await awaitRunRecord((id) => this.readRecord(id, { results: false }), jobId, input.run);
    return initialState(input, now, 'Restarted; waiting to be processed');
  }

  /** The job with its webhook delivery lines merged into its logs (job-runs.ts). */
  withWebhookLog<T extends JobState>(s: T): Promise<T> {
    return withWebhookLog(this.store, s);
  }
}

/** The client-facing error of a failed job run synchronously. */
export function jobErrorToAppError(err: JobState['error'], jobId: string): AppError {
  const code = err?.code ?? 'INTERNAL_ERROR';
  const details = { ...(err?.details ?? {}), job_id: jobId };
  if (isErrorCode(code)) return new AppError(code, err?.message ?? 'The job failed.', details);
  return new AppError('INTERNAL_ERROR', err?.message ?? 'The job failed.', { ...details, job_error_code: code });
}
