/**
 * One result shape for every entry point (jobs, synchronous endpoints, webhooks, SSE). A job's `results` blob
 * (records.ts `jobResultsKey`) is the synchronous endpoint's `data` object plus the job fields of spec §2
 * (`structured_data`, `assets`, `target_dir`) and the bookkeeping the service adds (`llm_info`, `from_cache`).
 * Activities build it with {@link jobResults}; readers take the `data` back with {@link resultData}, so the two
 * stay symmetric by construction.
 */

/** What a job's language model calls cost (`UsageRecorder.summary()`). */
export interface LlmInfo {
  total_tokens: number;
  total_cost: number;
  requests: { model: string; purpose: string; tokens: number; duration_ms: number }[];
}

/** The fields of a job's results that are not the endpoint's `data` (spec §2 Job `results`). */
export interface JobFields {
  structured_data: { extracted_text: string; metadata: Record<string, unknown> };
  assets: string[];
  target_dir: string;
  llm_info?: LlmInfo;
  /** True when the result came from the result cache (the route answers `X-Cache: hit`). */
  from_cache: boolean;
}

const JOB_FIELDS: ReadonlySet<string> = new Set<keyof JobFields>(['structured_data', 'assets', 'target_dir', 'llm_info', 'from_cache']);

/** A job's results: the endpoint's `data`, then the job fields. */
export function jobResults(data: Record<string, unknown>, job: JobFields): Record<string, unknown> {
  for (const k of Object.keys(data)) if (JOB_FIELDS.has(k)) throw new Error(`data field ${k} collides with a job field`);
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

/**
 * What the workflow keeps of the results (its history holds it; the full results stay in the blob store): the job
 * fields with the text cut to {@link PREVIEW_CHARS} characters and the metadata's scalar values only (no page
 * texts, tables or image lists).
 */
export function resultPreview(job: JobFields): Record<string, unknown> {
  const { extracted_text: text, metadata } = job.structured_data;
  const scalars = Object.fromEntries(Object.entries(metadata).filter(([, v]) => v === null || typeof v !== 'object'));
  return {
    structured_data: { extracted_text: text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text, metadata: scalars },
    assets: job.assets,
    target_dir: job.target_dir,
    from_cache: job.from_cache,
  };
}
