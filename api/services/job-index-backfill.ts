import { readBlobJson, type BlobStore } from '../../core/stores/blob-store';
import {
  INDEX_BACKFILLED_KEY,
  indexBatch,
  indexedBatchIds,
  indexedJobIds,
  putJobEntry,
} from '../../core/stores/job-index';
import { batchManifestKey, jobRecordKey } from '../../core/stores/records';
import { mapPool } from '../../core/runtime/pool';
import type { BatchManifest, JobState } from '../../workflows/definitions';

const RECORD = /^records\/jobs\/(job-[0-9a-f-]{36})\.json$/;
const MANIFEST = /^records\/batches\/(batch-[0-9a-f-]{36})\.manifest\.json$/;

/**
 * Indexes the jobs and batches a store held before the job index existed (core/stores/job-index.ts), once per store:
 * every job record and batch manifest without an entry gets one, then a marker says it is done. Jobs and batches
 * created since are indexed by their writers; this only reads what those writers never saw. An entry is only added
 * (a writer that changes a job's state meanwhile writes its own, and a listing reads the job's true state).
 */
export async function backfillIndex(store: BlobStore): Promise<void> {
  if (await store.stat(INDEX_BACKFILLED_KEY)) return;
  const [jobIds, batchIds, recordKeys, batchKeys] = await Promise.all([
    indexedJobIds(store),
    indexedBatchIds(store),
    store.listKeys('records/jobs/'),
    store.listKeys('records/batches/'),
  ]);
  const jobs = recordKeys.map((k) => RECORD.exec(k)?.[1]).filter((id) => id !== undefined && !jobIds.has(id));
  await mapPool(jobs, 16, async (id) => {
    const rec = await readBlobJson<JobState>(store, jobRecordKey(id!)).catch(() => null);
    if (rec && rec.job_id === id && rec.created_at) await putJobEntry(store, rec);
  });
  const batches = batchKeys.map((k) => MANIFEST.exec(k)?.[1]).filter((id) => id !== undefined && !batchIds.has(id));
  await mapPool(batches, 8, async (id) => {
    const m = await readBlobJson<BatchManifest>(store, batchManifestKey(id!)).catch(() => null);
    if (m && m.batch_id === id) await indexBatch(store, m);
  });
  await store.put(INDEX_BACKFILLED_KEY, JSON.stringify({ at: new Date().toISOString(), jobs: jobs.length }), {
    mime: 'application/json',
  });
}
