/** Blob-store layout of jobs and batches (architecture.md "State"). Keys are built here only. */
import { jobOfUpload } from '../jobs/ids';

export const jobRecordKey = (jobId: string): string => `records/jobs/${jobId}.json`;
export const batchRecordKey = (batchId: string): string => `records/batches/${batchId}.json`;
export const batchManifestKey = (batchId: string): string => `records/batches/${batchId}.manifest.json`;
/** Everything a job keeps in the blob store but its record (outputs and internal state). */
export const jobPrefix = (jobId: string): string => `jobs/${jobId}/`;
/**
 * The upload a job owns as its input (`uploads/<date>/<job_id><ext>`, api/uploads.ts), or null: kept as long as the
 * job can be restarted, removed with the job's files (retention; DELETE of the job).
 */
export function jobUploadKey(jobId: string, parameters: Record<string, unknown> | undefined): string | null {
  const key = parameters?.file_key;
  return typeof key === 'string' && jobOfUpload(key) === jobId ? key : null;
}
/** Files a job produced: what its archive holds. */
export const jobOutputPrefix = (jobId: string): string => `jobs/${jobId}/out/`;
export const jobOutputKey = (jobId: string, name: string): string => `${jobOutputPrefix(jobId)}${name}`;
/** Internal state of a job: full results, large parameters, finished steps. Never in the archive. */
export const jobInternalKey = (jobId: string, name: string): string => `jobs/${jobId}/internal/${name}`;
/** The job's results: the synchronous endpoint's `data` (see job-results.ts). */
export const jobResultsKey = (jobId: string): string => jobInternalKey(jobId, 'results.json');
/** The job fields of the results (`structured_data`, `assets`, ...), with references into the `data`. */
export const jobFieldsKey = (jobId: string): string => jobInternalKey(jobId, 'job-fields.json');
export const jobParametersKey = (jobId: string): string => jobInternalKey(jobId, 'parameters.json');
export const jobStepKey = (jobId: string, step: string): string => jobInternalKey(jobId, `steps/${step}.json`);
/** One answered model call of a job, by the hash of its request (so a retried step never pays for it again). */
export const jobModelCallKey = (jobId: string, requestHash: string): string =>
  jobInternalKey(jobId, `model-calls/${requestHash}.json`);
/** A model call of a job as sent, before its answer (its idempotency key, how often and when it was sent). */
export const jobModelCallSentKey = (jobId: string, requestHash: string): string =>
  jobInternalKey(jobId, `model-calls-sent/${requestHash}.json`);
/**
 * A marker per result-cache entry that points at this job's results (`<operation>.<key>`): removing the job removes
 * those entries (`dropJobCacheEntries`, core/stores/cache.ts) and then the markers. Outside the job's folder, so
 * every job's folder holds the same files whatever its cache entries are named.
 */
export const jobCacheRefPrefix = (jobId: string): string => `records/cache-refs/${jobId}/`;
/** The job's webhook delivery log (one line per attempt), written by its notifier alone and merged into reads. */
export const jobWebhookLogKey = (jobId: string): string => jobInternalKey(jobId, 'webhook-log.json');
