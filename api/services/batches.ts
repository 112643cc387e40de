import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import {
  BlobNotFoundError,
  cachedJsonReader,
  readBlobJson,
  writeBlobJson,
  type BlobStore,
  type CachedJsonReader,
} from '../../core/stores/blob-store';
import { AppError } from '../../core/errors';
import { isBatchId, newBatchId, newJobId } from '../../core/jobs/ids';
import type { JobSpec } from '../../core/jobs/job-params';
import { withResults } from '../../core/results/job-results';
import { sealWebhook } from '../../core/stores/webhook-secret';
import { mapPool } from '../../core/runtime/pool';
import { batchSearchAttributes } from '../../core/runtime/search-attributes';
import { indexBatch, putJobEntry } from '../../core/stores/job-index';
import { batchManifestKey, batchRecordKey, jobRecordKey } from '../../core/stores/records';
import {
  batchStateQuery,
  CODE_STATUS,
  failAllUpdate,
  jobInput,
  toggleActiveSignal,
  type BatchInput,
  type BatchManifest,
  type BatchState,
  type JobState,
  type WebhookConfig,
} from '../../workflows/definitions';
import type { batchWorkflow } from '../../workflows/batch.workflow';
import { initialState } from '../../workflows/job-state';
import type { TemporalGateway } from '../temporal';
import { offloadParameters } from './job-intake';
import { idFromKey } from './job-starts';

export interface CreateBatch {
  batchName: string;
  jobs: (JobSpec & { webhook?: WebhookConfig })[];
  userId?: string;
  legacy?: boolean;
  idempotencyKey?: string;
}

/**
 * Batches on Temporal: one `batchWorkflow` per batch (workflow id = batch id) whose children are the jobs. The
 * manifest (every job's spec) lives in the blob store; each job gets a pending record at creation so it is
 * readable before the batch starts it.
 */
export class BatchService {
  /** Manifests never change once written: the newest 50 read or written are kept. */
  private readonly manifests: CachedJsonReader<BatchManifest>;

  constructor(
    private readonly temporal: TemporalGateway,
    private readonly store: BlobStore,
    private readonly window: number,
    private readonly webhookRetryScale = 1,
  ) {
    this.manifests = cachedJsonReader(store, 50);
  }

  manifest(batchId: string): Promise<BatchManifest> {
    return this.manifests.read(batchManifestKey(batchId));
  }

  async create(req: CreateBatch): Promise<{ state: BatchState; jobs: JobState[]; created: boolean }> {
    // Before the manifest and the pending records are written: a refused batch leaves nothing behind.
    this.temporal.ensureReachable();
    const batchId = req.idempotencyKey ? idFromKey('batch', req.idempotencyKey) : newBatchId();
    if (req.idempotencyKey) {
      const existing = await this.state(batchId);
      if (existing) return { state: existing, jobs: await this.jobRecords(batchId), created: false };
    }
    const createdAt = new Date().toISOString();
    const manifest: BatchManifest = {
      batch_id: batchId,
      batch_name: req.batchName,
      created_at: createdAt,
      ...(req.userId ? { user_id: req.userId } : {}),
      ...(req.legacy ? { legacy: true } : {}),
      jobs: req.jobs.map((j, i) => ({
        job_id: req.idempotencyKey ? idFromKey('job', `${req.idempotencyKey}\0${i}`) : newJobId(),
        job_type: j.jobType,
        parameters: j.parameters,
        ...(j.webhook ? { webhook: j.webhook } : {}),
      })),
    };
    // Webhook tokens and large parameters go to the blob store; the manifest and workflow history keep neither.
    await mapPool(manifest.jobs, 16, async (j) => {
      const sealed = await sealWebhook(this.store, j.job_id, j.webhook, j.parameters);
      j.parameters = await offloadParameters(this.store, j.job_id, sealed.parameters);
      if (sealed.webhook) j.webhook = sealed.webhook;
    });
    const manifestKey = batchManifestKey(batchId);
    await writeBlobJson(this.store, manifestKey, manifest);
    const jobs = manifest.jobs.map((j, index) =>
      initialState(
        jobInput(j.job_type, j.parameters, {
          jobId: j.job_id,
          batchId,
          batchIndex: index,
          createdAt,
          run: 1,
          ...(req.userId ? { userId: req.userId } : {}),
          ...(j.webhook ? { webhook: j.webhook } : {}),
          ...(req.legacy ? { legacy: true } : {}),
        }),
        createdAt,
      ),
    );
    // Listed from their creation (core/stores/job-index.ts), the entries before the records, as every writer does.
    await indexBatch(this.store, {
      batch_id: batchId,
      batch_name: req.batchName,
      created_at: createdAt,
      user_id: req.userId,
    });
    await mapPool(jobs, 16, async (j) => {
      await putJobEntry(this.store, j);
      await writeBlobJson(this.store, jobRecordKey(j.job_id), j);
    });
    const input: BatchInput = {
      batchId,
      batchName: req.batchName,
      createdAt,
      jobCount: manifest.jobs.length,
      manifestKey,
      window: this.window,
      ...(this.webhookRetryScale !== 1 ? { webhookRetryScale: this.webhookRetryScale } : {}),
      ...(req.userId ? { userId: req.userId } : {}),
      ...(req.legacy ? { legacy: true } : {}),
    };
    try {
      // Temporal found unreachable while the start is under way (a stopped server): 503 at once.
      await this.temporal.whileReachable(() =>
        this.temporal.client.workflow.start<typeof batchWorkflow>('batchWorkflow', {
          workflowId: batchId,
          taskQueue: this.temporal.queues.io,
          args: [input],
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          typedSearchAttributes: batchSearchAttributes({ batchId, userId: req.userId }),
          memo: { summary: `batch ${req.batchName} (${manifest.jobs.length} jobs)` },
        }),
      );
    } catch (e) {
      if (!(e instanceof WorkflowExecutionAlreadyStartedError && req.idempotencyKey)) throw e;
    }
    this.manifests.remember(manifestKey, manifest);
    const state: BatchState = {
      batch_id: batchId,
      batch_name: req.batchName,
      status: 'pending',
      active: true,
      created_at: createdAt,
      updated_at: createdAt,
      job_count: jobs.length,
      completed_count: 0,
      failed_count: 0,
      processing_count: 0,
      pending_count: jobs.length,
      statuses: 'p'.repeat(jobs.length),
    };
    return { state, jobs, created: true };
  }

  async readRecord(batchId: string): Promise<BatchState | null> {
    try {
      const { input: _i, ...rec } = await readBlobJson<BatchState & { input?: unknown }>(
        this.store,
        batchRecordKey(batchId),
      );
      void _i;
      return rec;
    } catch (e) {
      if (e instanceof BlobNotFoundError) return null;
      throw e;
    }
  }

  async state(batchId: string): Promise<BatchState | null> {
    if (!isBatchId(batchId)) return null;
    this.temporal.ensureReachable();
    try {
      const live = await this.temporal.whileReachable(() =>
        this.temporal.client.workflow.getHandle(batchId).query(batchStateQuery),
      );
      if (live.status !== 'completed') return live;
      // A finished batch keeps its flag in its record: toggle-active after the end writes it there only.
      const rec = await this.readRecord(batchId);
      return rec?.status === 'completed' ? { ...live, active: rec.active } : live;
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) return this.readRecord(batchId);
      // A closed workflow cannot always be queried (no worker, or past retention): the record answers.
      const rec = await this.readRecord(batchId);
      if (rec) return rec;
      throw e;
    }
  }

  /**
   * The batch as `state` reads it, a finished one from its record alone unless Temporal runs it again (a job restarted
   * after the batch completed reopens it): a listing then sends no query, which a closed workflow answers only by
   * replaying its history on a worker.
   */
  async current(batchId: string): Promise<BatchState | null> {
    if (!isBatchId(batchId)) return null;
    const rec = await this.readRecord(batchId);
    if (rec?.status === 'completed') {
      const d = await this.temporal.client.workflow
        .getHandle(batchId)
        .describe()
        .catch((e: unknown) => {
          if (e instanceof WorkflowNotFoundError) return null;
          throw e;
        });
      if (d?.status.name !== 'RUNNING') return rec;
    }
    return this.state(batchId);
  }

  async require(batchId: string): Promise<BatchState> {
    const s = await this.state(batchId);
    if (!s) throw new AppError('BATCH_NOT_FOUND', `No batch with id ${batchId}.`, { batch_id: batchId });
    return s;
  }

  /** `[{job_id, status}]` in manifest order. */
  async jobStatuses(s: BatchState): Promise<{ job_id: string; status: string }[]> {
    const m = await this.manifest(s.batch_id);
    return m.jobs.map((j, i) => ({ job_id: j.job_id, status: CODE_STATUS[s.statuses[i]] ?? 'pending' }));
  }

  async jobRecords(batchId: string): Promise<JobState[]> {
    const m = await this.manifest(batchId);
    return mapPool(m.jobs, 16, async (j) =>
      withResults(this.store, await readBlobJson<JobState>(this.store, jobRecordKey(j.job_id))),
    );
  }

  /**
   * Flips the batch's flag, or sets it to `active` when given (idempotent). Answers the flag after the change. A
   * running batch takes it as a signal; a finished one keeps it in its final record, which the batch's last step
   * writes after its state reads `completed`: the toggle waits for that step (the workflow's close), also when the
   * batch closes between the read and the signal.
   */
  async toggleActive(batchId: string, active?: boolean): Promise<boolean> {
    const before = await this.require(batchId);
    if (before.status !== 'completed') {
      const handle = this.temporal.client.workflow.getHandle(batchId);
      try {
        await handle.signal(toggleActiveSignal, active === undefined ? {} : { active });
        const after = await handle.query(batchStateQuery);
        return after.active;
      } catch (e) {
        if (!(e instanceof WorkflowNotFoundError)) throw e;
      }
    }
    await this.closed(batchId);
    return this.toggleRecord(batchId, await this.require(batchId), active);
  }

  /** Resolves once the batch's workflow has closed (its final record written), however it ended. */
  private async closed(batchId: string): Promise<void> {
    await this.temporal.client.workflow
      .getHandle(batchId)
      .result()
      .catch(() => undefined);
  }

  /** A finished batch keeps its flag in its record (nothing is left to start). */
  private async toggleRecord(batchId: string, s: BatchState, wanted?: boolean): Promise<boolean> {
    const raw = await readBlobJson<Record<string, unknown>>(this.store, batchRecordKey(batchId));
    const active = wanted ?? !s.active;
    await writeBlobJson(this.store, batchRecordKey(batchId), { ...raw, active, updated_at: new Date().toISOString() });
    return active;
  }

  async failAll(batchId: string, reason: string): Promise<number> {
    const s = await this.require(batchId);
    if (s.status === 'completed') return 0;
    try {
      const r = await this.temporal.client.workflow
        .getHandle(batchId)
        .executeUpdate(failAllUpdate, { args: [{ reason }] });
      return r.failed_count;
    } catch (e) {
      // The batch closed between the read and the update: every job had ended, nothing is left to fail.
      if (e instanceof WorkflowNotFoundError) return 0;
      throw e;
    }
  }
}
