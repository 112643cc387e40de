import { BlobNotFoundError, readBlobJson, writeBlobJson, type BlobStore } from '../stores/blob-store';
import { putJsonWithBase64 } from './json-base64';
import type { JobType } from '../jobs/job-params';
import { jobFieldsKey, jobResultsKey } from '../stores/records';
import type { JobResultData, LlmInfoData } from './result-schemas';

/**
 * One result shape for every entry point (jobs, synchronous endpoints, webhooks, SSE). A job's `results` blob
 * (records.ts `jobResultsKey`) is the synchronous endpoint's `data` object plus the job fields of spec §2
 * (`structured_data`, `assets`, `target_dir`) and the bookkeeping the service adds (`llm_info`, `from_cache`).
 * Activities build it with {@link jobResults}; readers take the `data` back with {@link resultData}, so the two
 * stay symmetric by construction.
 */

/** What a job's language model calls cost (`UsageRecorder.summary()`; `llmInfoSchema`). */
export type LlmInfo = LlmInfoData;

/** The fields of a job's results that are not the endpoint's `data` (spec §2 Job `results`). */
export type JobFields = {
  structured_data: { extracted_text: string; metadata: Record<string, unknown> };
  assets: string[];
  target_dir: string;
  llm_info?: LlmInfo;
  /** True when the result came from the result cache (the route answers `X-Cache: hit`). */
  from_cache: boolean;
};

/**
 * A finished job's results, typed per job type like its parameters (`JobParams<T>`): the endpoint's `data` of the
 * type (core/results/result-schemas.ts) and the job fields.
 */
export type JobResult<T extends JobType = JobType> = JobResultData<T> & JobFields;

const JOB_FIELDS: ReadonlySet<string> = new Set<keyof JobFields>([
  'structured_data',
  'assets',
  'target_dir',
  'llm_info',
  'from_cache',
]);

/** A job's results: the endpoint's `data`, then the job fields. */
export function jobResults<D extends Record<string, unknown>>(data: D, job: JobFields): D & JobFields {
  for (const k of Object.keys(data))
    if (JOB_FIELDS.has(k)) throw new Error(`data field ${k} collides with a job field`);
  return { ...data, ...job };
}

/** The synchronous endpoint's `data` inside a job's results: every field but the job fields. */
export function resultData(results: Record<string, unknown> | null | undefined): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(results ?? {})) if (!JOB_FIELDS.has(k)) data[k] = v;
  return data;
}

/** Whether a job's results came from the result cache. */
export const fromCache = (results: Record<string, unknown> | null | undefined): boolean => results?.from_cache === true;

const PREVIEW_CHARS = 2000;

/** What a job's last activity returns and its workflow keeps ({@link resultPreview}): never the `data`. */
export type ResultPreview = {
  structured_data: JobFields['structured_data'];
  assets: string[];
  target_dir: string;
  from_cache: boolean;
};

/**
 * What the workflow keeps of the results (its history holds it; the full results stay in the blob store): the job
 * fields with the text cut to {@link PREVIEW_CHARS} characters and the metadata's scalar values only (no page
 * texts, tables or image lists).
 */
export function resultPreview(job: JobFields): ResultPreview {
  const { extracted_text: text, metadata } = job.structured_data;
  const scalars = Object.fromEntries(Object.entries(metadata).filter(([, v]) => v === null || typeof v !== 'object'));
  return {
    structured_data: {
      extracted_text: text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text,
      metadata: scalars,
    },
    assets: job.assets,
    target_dir: job.target_dir,
    from_cache: job.from_cache,
  };
}

/**
 * How a finished job's results are stored (the text once, referenced elsewhere). The results blob (`jobResultsKey`)
 * holds the endpoint's `data` exactly as the synchronous answer carries it, so the API streams it without parsing;
 * the job fields go to `jobFieldsKey`, with every `structured_data` value that is a field of `data` (the same
 * object, or a long equal string) stored as a reference to that field (`refs`). The record points at both
 * (`results_ref`) instead of embedding them.
 */
export interface StoredJobFields {
  /** `structured_data` without the values `refs` names (null in their place, so the key order holds). */
  job: JobFields;
  /** Path inside `structured_data` (`extracted_text`, `metadata`, `metadata.<key>`) → the `data` field it equals. */
  refs: Record<string, string>;
}

/** Where a record's results live. */
export interface ResultsRef {
  data: string;
  fields: string;
}

/** Strings shorter than this are kept inline: a reference would not save anything. */
const MIN_REF_CHARS = 64;

/** The job fields with the values `data` already holds replaced by references (see {@link StoredJobFields}). */
export function packJobFields(data: Record<string, unknown>, job: JobFields): StoredJobFields {
  const fieldOf = (v: unknown): string | undefined => {
    if (v === null || (typeof v !== 'object' && !(typeof v === 'string' && v.length >= MIN_REF_CHARS)))
      return undefined;
    return Object.keys(data).find((k) => data[k] === v);
  };
  const refs: Record<string, string> = {};
  const sd = job.structured_data;
  let extracted: string | null = sd.extracted_text;
  const textRef = fieldOf(extracted);
  if (textRef) [refs.extracted_text, extracted] = [textRef, null];
  let metadata: Record<string, unknown> | null = sd.metadata;
  const metaRef = fieldOf(metadata);
  if (metaRef) [refs.metadata, metadata] = [metaRef, null];
  else {
    metadata = { ...sd.metadata };
    for (const [k, v] of Object.entries(metadata)) {
      const r = fieldOf(v);
      if (r) [refs[`metadata.${k}`], metadata[k]] = [r, null];
    }
  }
  return {
    job: {
      ...job,
      structured_data: { extracted_text: extracted as string, metadata: metadata as Record<string, unknown> },
    },
    refs,
  };
}

/** The job's full results from the stored `data` and job fields: what {@link jobResults} built before storing. */
export function unpackJobResults(data: Record<string, unknown>, stored: StoredJobFields): Record<string, unknown> {
  const sd = { ...stored.job.structured_data };
  const refs = stored.refs ?? {};
  if (refs.extracted_text) sd.extracted_text = data[refs.extracted_text] as string;
  if (refs.metadata) sd.metadata = data[refs.metadata] as Record<string, unknown>;
  else {
    sd.metadata = { ...sd.metadata };
    for (const [path, field] of Object.entries(refs))
      if (path.startsWith('metadata.')) sd.metadata[path.slice(9)] = data[field];
  }
  return jobResults(data, { ...stored.job, structured_data: sd });
}

/**
 * Writes a job's results in the stored layout: the `data` once, the job fields beside it. `base64`: a field of
 * `data` that holds a blob's bytes in Base64 (an images archive), streamed into the data blob from the store.
 */
export async function writeJobResults(
  store: BlobStore,
  jobId: string,
  data: JobResultData,
  job: JobFields,
  base64?: { field: string; blobKey: string },
): Promise<void> {
  jobResults(data, job); // the collision check
  // The fields go last: their presence says the data blob is complete.
  if (base64) await putJsonWithBase64(store, jobResultsKey(jobId), data, base64.field, base64.blobKey);
  else await writeBlobJson(store, jobResultsKey(jobId), data);
  await writeBlobJson(store, jobFieldsKey(jobId), packJobFields(data, job));
}

/** The results reference of a job whose results are stored, or null (none stored). */
export async function storedResultsRef(store: BlobStore, jobId: string): Promise<ResultsRef | null> {
  return (await store.stat(jobFieldsKey(jobId))) ? { data: jobResultsKey(jobId), fields: jobFieldsKey(jobId) } : null;
}

/** A record as stored: a job state whose results may be a reference. */
export interface StoredRecord {
  job_id: string;
  results?: Record<string, unknown> | null;
  results_ref?: ResultsRef;
}

/**
 * The record with its full results in `results`, read and unpacked when it points at them (a record without a
 * reference, of a job not completed, is answered as it is). Missing results blobs (swept) leave `results` null.
 */
export async function withResults<T extends StoredRecord>(store: BlobStore, rec: T): Promise<T> {
  const ref = rec.results_ref;
  if (!ref) return rec;
  const { results_ref: _r, ...rest } = rec;
  void _r;
  try {
    const [data, fields] = await Promise.all([
      readBlobJson<Record<string, unknown>>(store, ref.data),
      readBlobJson<StoredJobFields>(store, ref.fields),
    ]);
    return { ...rest, results: unpackJobResults(data, fields) } as T;
  } catch (e) {
    if (e instanceof BlobNotFoundError) return { ...rest, results: null } as T;
    throw e;
  }
}
