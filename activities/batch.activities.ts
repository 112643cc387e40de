import { Context } from '@temporalio/activity';
import { cachedJsonReader, readBlobJson, writeBlobJson } from '../core/stores/blob-store';
import { mapPool } from '../core/runtime/pool';
import { batchRecordKey, jobRecordKey } from '../core/stores/records';
import { indexJob } from '../core/stores/job-index';
import type { BatchInput, BatchManifest, BatchState, JobState } from '../workflows/definitions';
import type { ActivityDeps } from './deps';

export function createBatchActivities(deps: ActivityDeps) {
  const { store } = deps;
  /** Manifests are read in slices; a small cache spares re-reading one for every slice. */
  const manifests = cachedJsonReader<BatchManifest>(store, 20);
  return {
    /** The specs of jobs `offset` to `offset + limit - 1` of a batch. */
    async loadManifestSlice({ manifestKey, offset, limit }: { manifestKey: string; offset: number; limit: number }) {
      const m = await manifests.read(manifestKey);
      return m.jobs.slice(offset, offset + limit);
    },

    /** The batch's final record; `runs` (restarted jobs' newest runs) lets a reopened batch ignore stale reports. */
    async writeBatchRecord({
      state,
      input,
      runs,
    }: {
      state: BatchState;
      input: Omit<BatchInput, 'carry'>;
      runs?: Record<number, number>;
    }): Promise<void> {
      await writeBlobJson(store, batchRecordKey(state.batch_id), { ...state, input, ...(runs ? { runs } : {}) });
    },

    /**
     * Marks jobs that never started as failed in their records (fail-all before they ran). Idempotent (a record
     * already failed or completed is left alone), so a retried attempt redoes only what is left; as a regular
     * activity it heartbeats as it goes.
     */
    async failPendingJobs({
      manifestKey,
      indexes,
      reason,
    }: {
      manifestKey: string;
      indexes: number[];
      reason: string;
    }): Promise<void> {
      const m = await manifests.read(manifestKey);
      const jobIds = indexes.map((i) => m.jobs[i].job_id);
      const now = new Date().toISOString();
      await mapPool(jobIds, 8, async (id, i) => {
        if ((i + 1) % 50 === 0 && !Context.current().info.isLocal) Context.current().heartbeat({ done: i + 1 });
        const rec = await readBlobJson<JobState>(store, jobRecordKey(id)).catch(() => null);
        if (!rec || rec.status === 'completed' || rec.status === 'failed') return;
        const error = { code: 'CANCELLED', message: reason, details: {} };
        const failed: JobState = {
          ...rec,
          status: 'failed',
          error,
          updated_at: now,
          progress: { ...rec.progress, step: 'failed', message: reason },
          logs: [...rec.logs, { timestamp: now, level: 'error', message: `Job failed: CANCELLED: ${reason}` }],
        };
        // The job index follows the record (core/stores/job-index.ts): its entry first, as every record writer does.
        await indexJob(store, failed);
        await writeBlobJson(store, jobRecordKey(id), failed);
      });
    },
  };
}
