import type { Client } from '@temporalio/client';
import { BlobNotFoundError, readBlobJson, type BlobStat, type BlobStore } from '../core/stores/blob-store';
import type { Logger } from '../core/runtime/logger';
import { jobOfUpload } from '../core/jobs/ids';
import { batchManifestKey, batchRecordKey, jobPrefix, jobRecordKey, jobUploadKey } from '../core/stores/records';
import { unindexJob } from '../core/stores/job-index';
import { dropJobCacheMarkers } from '../core/stores/cache';

const DAY_MS = 24 * 3600_000;
/** Sweeps run at most hourly, and four times per retention period when that is shorter (never under a second). */
const sweepInterval = (retentionMs: number) => Math.max(1000, Math.min(3600_000, retentionMs / 4));

/** What one sweep deleted. */
export interface SweepCounts {
  jobs: number;
  batches: number;
  /** Cache entries, idempotency records and leftover uploads (of requests that started no job). */
  blobs: number;
}

export interface RetentionSweeperOptions {
  store: BlobStore;
  retentionDays: number;
  /**
   * Asked whether Temporal still knows a job's workflow (running, or closed within its retention) before anything of it
   * is deleted.
   */
  client?: Client;
  logger: Logger;
}

interface FinishedState {
  status?: string;
  updated_at?: string;
  parameters?: Record<string, unknown>;
  /** What the job index (core/stores/job-index.ts) names a job by. */
  job_type?: string;
  created_at?: string;
  batch_id?: string;
  user_id?: string;
}

const ids = (s: FinishedState) => ({
  ...(s.batch_id ? { batch_id: s.batch_id } : {}),
  ...(s.user_id ? { user_id: s.user_id } : {}),
});
const finished = (s: FinishedState | null): boolean => s?.status === 'completed' || s?.status === 'failed';
const expired = (s: FinishedState, cutoff: number): boolean => Date.parse(s.updated_at ?? '') < cutoff;

/**
 * Deletes what a finished job leaves behind once `RETENTION_DAYS` have passed since it last changed (issue #13,
 * defect 8): its files and internal state (`jobs/<id>/`) and its uploaded input (`jobUploadKey`: kept until then so a
 * restart has it), then its record; finished batches likewise; and by age the result-cache entries (which point at a
 * job's results, or hold a value), idempotency records and uploads no job owns (left by crashed requests; an upload
 * whose job still has a record or a workflow goes with that job). A job is deleted only when its record says it finished before the cutoff and Temporal no
 * longer knows its workflow (neither running, as after a restart, nor closed within the namespace's retention: the
 * record must outlive the workflow; the check runs again just before the record goes); pending and processing jobs, and
 * job folders without a record (a job still starting), are never touched.
 * The record goes last, so a sweep cut short finishes at the next one.
 */
export function createRetentionSweeper(opts: RetentionSweeperOptions) {
  const { store, client, logger } = opts;
  const retentionMs = opts.retentionDays * DAY_MS;

  async function readState(key: string): Promise<FinishedState | null> {
    try {
      return await readBlobJson<FinishedState>(store, key);
    } catch (e) {
      if (e instanceof BlobNotFoundError || e instanceof SyntaxError) return null;
      throw e;
    }
  }

  /**
   * True while Temporal knows the job's workflow: running (a restarted job), or closed and still within the namespace's
   * retention. Contract §3: a job's record outlives its workflow, so nothing is deleted until Temporal forgot it.
   */
  async function knownToTemporal(jobId: string): Promise<boolean> {
    if (!client) return false;
    try {
      await client.workflow.getHandle(jobId).describe();
      return true;
    } catch (e) {
      if ((e as Error).name === 'WorkflowNotFoundError') return false;
      throw e;
    }
  }

  /** An upload whose job still exists (a record, or a workflow starting): it goes with the job, not by its age. */
  async function ownedByJob(key: string): Promise<boolean> {
    const owner = jobOfUpload(key);
    return !!owner && ((await readState(jobRecordKey(owner))) !== null || (await knownToTemporal(owner)));
  }

  const deleteAll = async (blobs: BlobStat[]) => {
    for (const b of blobs) await store.delete(b.key);
  };

  async function sweepJob(jobId: string, cutoff: number): Promise<boolean> {
    const rec = await readState(jobRecordKey(jobId));
    if (!rec || !finished(rec) || !expired(rec, cutoff) || (await knownToTemporal(jobId))) return false;
    await deleteAll(await store.list(jobPrefix(jobId)));
    // The markers of the cache entries that name it (the entries themselves go by age, below).
    await dropJobCacheMarkers(store, jobId);
    const upload = jobUploadKey(jobId, rec.parameters);
    if (upload) await store.delete(upload);
    // Restarted meanwhile (its pending record written, its workflow started): the record stays.
    const again = await readState(jobRecordKey(jobId));
    if (!again || !finished(again) || again.updated_at !== rec.updated_at || (await knownToTemporal(jobId)))
      return false;
    // Its entry in the job index before its record, as a removal does (core/stores/job-removal.ts): the list stops
    // naming a job that is gone (it would drop the entry itself, later).
    if (rec.job_type && rec.created_at)
      await unindexJob(store, { job_id: jobId, job_type: rec.job_type, created_at: rec.created_at, ...ids(rec) });
    await store.delete(jobRecordKey(jobId));
    return true;
  }

  /** One sweep as of `now` (ms since the epoch; tests pass a later time instead of waiting for days). */
  async function sweep(now = Date.now()): Promise<SweepCounts> {
    const counts: SweepCounts = { jobs: 0, batches: 0, blobs: 0 };
    if (retentionMs <= 0) return counts;
    const cutoff = now - retentionMs;
    const old = (b: BlobStat) => Date.parse(b.modifiedAt) < cutoff;
    // A record cannot have changed after its blob was written: only old blobs can hold expired jobs.
    for (const b of (await store.list('records/jobs/')).filter(old)) {
      if (await sweepJob(b.key.slice('records/jobs/'.length, -'.json'.length), cutoff)) counts.jobs += 1;
    }
    for (const b of (await store.list('records/batches/')).filter((x) => old(x) && !x.key.endsWith('.manifest.json'))) {
      const batchId = b.key.slice('records/batches/'.length, -'.json'.length);
      const rec = await readState(batchRecordKey(batchId));
      if (!rec || rec.status !== 'completed' || !expired(rec, cutoff) || (await knownToTemporal(batchId))) continue;
      await store.delete(batchManifestKey(batchId));
      await store.delete(batchRecordKey(batchId));
      counts.batches += 1;
    }
    for (const prefix of ['cache/', 'records/idempotency/', 'uploads/']) {
      const stale = (await store.list(prefix)).filter(old);
      for (const b of stale) {
        if (prefix === 'uploads/' && (await ownedByJob(b.key))) continue;
        await store.delete(b.key);
        counts.blobs += 1;
      }
    }
    if (counts.jobs || counts.batches || counts.blobs)
      logger.info({ ...counts, retentionDays: opts.retentionDays }, 'retention sweep deleted expired jobs and blobs');
    return counts;
  }

  return { sweep, intervalMs: sweepInterval(retentionMs) };
}

/** Runs the sweeper in the background until `stop` (nothing when retention is 0). */
export function startRetentionSweeper(opts: RetentionSweeperOptions): { stop(): Promise<void> } {
  if (opts.retentionDays <= 0) return { stop: async () => undefined };
  const sweeper = createRetentionSweeper(opts);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const loop = () => {
    if (stopped) return;
    running = sweeper
      .sweep()
      .catch((err: unknown) => opts.logger.warn({ err }, 'retention sweep failed; trying again later'))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, sweeper.intervalMs);
      });
  };
  timer = setTimeout(loop, Math.min(sweeper.intervalMs, 60_000));
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
