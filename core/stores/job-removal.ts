import { BlobNotFoundError, readBlobJson, type BlobStore } from './blob-store';
import { dropJobCacheEntries } from './cache';
import { unindexJob, type IndexedJob } from './job-index';
import { jobParametersKey, jobPrefix, jobRecordKey, jobUploadKey } from './records';
import { deleteCachedSessionOf } from './session-store';
import { mapPool } from '../runtime/pool';

/** What the removal reads of a job's record. */
export type RemovableJob = Omit<IndexedJob, 'status'> & { parameters?: Record<string, unknown> };

/** The job's parameters in full: its record keeps a summary of large ones, which live in its folder. */
async function parametersOf(store: BlobStore, job: RemovableJob): Promise<Record<string, unknown>> {
  try {
    return await readBlobJson<Record<string, unknown>>(store, jobParametersKey(job.job_id));
  } catch (e) {
    if (e instanceof BlobNotFoundError) return job.parameters ?? {};
    throw e;
  }
}

/**
 * Deletes what a finished job keeps in the blob store (`DELETE /api/jobs/{job_id}`): the result-cache entries that
 * name it (`dropJobCacheEntries`) and its cached session entry, so that no cache answers from files that are gone;
 * its folder (`jobs/<id>/`: outputs, internal state, step outputs, webhook secret and log); the upload it owns as its
 * input; its entries in the job index; and last its record, so a removal cut short is finished by the next one (the
 * record still names the job). The same parts as retention deletes of an expired job (worker/retention-sweeper.ts),
 * plus the cache entries and the index. The caller makes sure the job is finished and Temporal holds no run of it.
 */
export async function removeJobBlobs(store: BlobStore, job: RemovableJob): Promise<void> {
  const parameters = await parametersOf(store, job);
  await dropJobCacheEntries(store, job.job_id);
  if (job.job_type === 'session') {
    const { event, session, url } = parameters;
    if (typeof event === 'string' && typeof session === 'string' && typeof url === 'string')
      await deleteCachedSessionOf(store, { event, session, url }, job.job_id);
  }
  await mapPool(await store.listKeys(jobPrefix(job.job_id)), 16, (key) => store.delete(key));
  const upload = jobUploadKey(job.job_id, parameters) ?? jobUploadKey(job.job_id, job.parameters);
  if (upload) await store.delete(upload);
  await unindexJob(store, job);
  await store.delete(jobRecordKey(job.job_id));
}
