import { randomUUID } from 'node:crypto';

/** Ids and task-queue names are built here and nowhere else. */
export const newJobId = (): string => `job-${randomUUID()}`;
export const newBatchId = (): string => `batch-${randomUUID()}`;
export const newRequestId = (): string => randomUUID();

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
export const JOB_ID_PATTERN = new RegExp(`^job-${UUID}$`);
export const BATCH_ID_PATTERN = new RegExp(`^batch-${UUID}$`);
export const isJobId = (s: string): boolean => JOB_ID_PATTERN.test(s);
export const isBatchId = (s: string): boolean => BATCH_ID_PATTERN.test(s);

export interface TaskQueues {
  /** CPU-bound work: OCR, speech, ffmpeg, rendering. Concurrency near the core count. */
  media: string;
  /** I/O-bound work and all workflow tasks: bookkeeping, HTTP, webhooks. High concurrency. */
  io: string;
  /** Model calls (templates, translations, summaries): slots sized to the model's capacity (`WORKER_LLM_SLOTS`). */
  llm: string;
  /**
   * Downloads into a job (URL inputs, hosted video, session pages and attachments): slots of their own on the io
   * worker process (`WORKER_DOWNLOAD_SLOTS`), so an hour-long download never holds a slot bookkeeping needs.
   */
  download: string;
}

/** The queues of a prefix. Workflows derive the siblings of their io queue the same way (workflows/routing.ts). */
export function taskQueues(prefix: string): TaskQueues {
  return { media: `${prefix}-media`, io: `${prefix}-io`, llm: `${prefix}-llm`, download: `${prefix}-download` };
}

/**
 * Blob key for a stored upload: generated, never derived from a client file name. The upload of a request that may
 * become a job is named after that job (`uploads/<date>/<job_id><ext>`, the job's id chosen before the upload is
 * stored): the job owns it from its start, and retention removes it with the job (`jobOfUpload`).
 */
export const newUploadKey = (ext = '', jobId?: string): string => {
  const d = new Date().toISOString().slice(0, 10);
  const safeExt = /^\.[a-z0-9]{1,8}$/i.test(ext) ? ext.toLowerCase() : '';
  return `uploads/${d}/${jobId && isJobId(jobId) ? jobId : randomUUID()}${safeExt}`;
};

const UPLOAD_OF_JOB = new RegExp(`^uploads/\\d{4}-\\d{2}-\\d{2}/(job-${UUID})(\\.[a-z0-9]{1,8})?$`);

/** The job an upload key names as its owner (`newUploadKey` with a job id), or null. */
export const jobOfUpload = (key: string): string | null => UPLOAD_OF_JOB.exec(key)?.[1] ?? null;

/** The workflow that closes out one run of a job that ended without its own wrap-up (terminated, timed out). */
export const closeoutWorkflowId = (jobId: string, runId: string): string => `closeout-${jobId}-${runId}`;
