import { createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { BlobStore } from '../../core/stores/blob-store';
import { AppError, isErrorCode } from '../../core/errors';
import { newJobId } from '../../core/jobs/ids';
import type { JobSpec, JobType } from '../../core/jobs/job-params';
import { sealWebhook } from '../../core/stores/webhook-secret';
import { putJobEntry, unindexJob } from '../../core/stores/job-index';
import { jobSearchAttributes } from '../../core/runtime/search-attributes';
// Workflows are started by name (the worker registers each under its function's name): the API loads no workflow code.
import type { jobWorkflow } from '../../workflows/job.workflow';
import { jobInput, type JobInput, type JobState, type WebhookConfig } from '../../workflows/definitions';
import { initialState } from '../../workflows/job-state';
import type { TemporalGateway } from '../temporal';
import { JobAccepted, type AsyncPreference } from './async-preference';
import { offloadParameters } from './job-intake';
import { JobReads, type JobRecord } from './job-reads';
import { RequestBound } from './request-bound';
import type { StoredUpload, UploadOffer } from '../uploads';

/** A job to create: its type and validated parameters (`validateParameters`), and who asks. */
export type CreateJob<T extends JobType = JobType> = JobSpec<T> & {
  userId?: string;
  webhook?: WebhookConfig;
  legacy?: boolean;
  idempotencyKey?: string;
};

/**
 * A backstop only: a start to a Temporal that stopped answering is answered 503 by the reachability probe's verdict
 * (`whileReachable`, within about 1.5 s); this deadline ends a start that hangs while the probes still answer.
 */
const START_DEADLINE_MS = 5000;

/** A uuid-shaped id derived from a client key, so a repeated key names the same job without a lookup race. */
export function idFromKey(prefix: 'job' | 'batch', key: string, scope = ''): string {
  const h = createHash('sha256').update(`${prefix}\0${scope}\0${key}`).digest('hex');
  return `${prefix}-${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Starts jobs, or starts them and waits for them (synchronous endpoints), on top of `JobReads` (job-reads.ts): the
 * base of `JobService` (jobs.ts).
 */
export class JobStarts extends JobReads {
  /** The bound on concurrent heavy requests (synchronous processing), shared by every route of the app. */
  readonly heavy: RequestBound;
  /** Uploads of requests in flight, by blob key, that a job started on them takes as its input (`offerUpload`). */
  private readonly offers = new Map<string, { jobId: string; taken: boolean }>();

  constructor(
    temporal: TemporalGateway,
    store: BlobStore,
    private readonly webhookRetryScale = 1,
    opts: { maxHeavyRequests?: number } = {},
  ) {
    super(temporal, store);
    this.heavy = new RequestBound(opts.maxHeavyRequests ?? 0);
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
    // Listed from its start (core/stores/job-index.ts): the entry is written before the workflow can write its record.
    const listed = { job_id: jobId, job_type: req.jobType, created_at: createdAt, user_id: req.userId };
    await putJobEntry(this.store, { ...listed, status: 'pending' });
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
      const started = e instanceof WorkflowExecutionAlreadyStartedError;
      const existing = started && req.idempotencyKey ? await this.state(jobId) : null;
      // An entry is left only for a job that exists, at the position of its own creation: not for a start that failed
      // (one given up at its deadline that did start writes its entry again with its record), nor for the loser of two
      // requests with one key (the winner's entry is the job's).
      if (!started || (existing && existing.created_at !== createdAt))
        await unindexJob(this.store, listed).catch(() => undefined);
      if (existing) return { state: existing, created: false };
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
}

/** The client-facing error of a failed job run synchronously. */
export function jobErrorToAppError(err: JobState['error'], jobId: string): AppError {
  const code = err?.code ?? 'INTERNAL_ERROR';
  const details = { ...(err?.details ?? {}), job_id: jobId };
  if (isErrorCode(code)) return new AppError(code, err?.message ?? 'The job failed.', details);
  return new AppError('INTERNAL_ERROR', err?.message ?? 'The job failed.', { ...details, job_error_code: code });
}
