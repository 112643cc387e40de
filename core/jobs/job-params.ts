import { z } from 'zod';
import {
  audioParams,
  documentParams,
  externalOcrParams,
  imageOcrParams,
  pdfParams,
  videoFramesParams,
  videoParams,
} from './job-params-media';
import { sessionParams, summaryParams, transformerParams } from './job-params-text';

import { undeclaredOptions } from './job-fields';

export { knownLanguage, refinePageRange, webhookConfig } from './job-fields';
export { audioParams, documentParams, externalOcrParams, imageOcrParams, pdfParams, videoFramesParams, videoParams };
export {
  sessionFields,
  sessionParams,
  summaryParams,
  TRANSFORMER_OPERATIONS,
  transformerParams,
} from './job-params-text';

/**
 * The job contract: every job type with the schema of its parameters. The API parses a job's parameters with it
 * once, when the job is created (`parseJobParameters`, which also applies the defaults they record); from there the
 * inferred types travel through `JobInput` (workflows/definitions.ts), the pipeline table and the activities, which
 * trust them. A job type is added here, and the compiler then asks for its pipeline.
 */
export const jobParamsByType = {
  pdf: pdfParams,
  /** Documents of other formats (contract §12); PDFs and images sent as one run the pdf and imageocr pipelines. */
  document: documentParams,
  session: sessionParams,
  transformer: transformerParams,
  audio: audioParams,
  video: videoParams,
  /** Internal types, created only by their own routes (image OCR, external OCR, video frames). */
  imageocr: imageOcrParams,
  external_ocr: externalOcrParams,
  video_frames: videoFramesParams,
  /** Internal: the track and event summaries and stories over the session store (api/routes/tracks|events|story). */
  track_summary: summaryParams,
  event_summary: summaryParams,
  story: summaryParams,
} as const;

export type JobType = keyof typeof jobParamsByType;
/** The parameters of a job of type `T` as the API validated them (z.infer of the type's schema). */
export type JobParams<T extends JobType = JobType> = z.infer<(typeof jobParamsByType)[T]>;
/** A job type with its parameters: the discriminated union on `jobType` (`JobSpec<'pdf'>` is one member). */
export type JobSpec<T extends JobType = JobType> = { [K in JobType]: { jobType: K; parameters: JobParams<K> } }[T];

/** The job types a client may create through `/api/jobs/` and `/api/jobs/batch`. */
export const PUBLIC_JOB_TYPES = [
  'pdf',
  'document',
  'session',
  'transformer',
  'audio',
  'video',
] as const satisfies readonly JobType[];
export type PublicJobType = (typeof PUBLIC_JOB_TYPES)[number];

export type PdfParams = JobParams<'pdf'>;
export type DocumentParams = JobParams<'document'>;
export type ExternalOcrParams = JobParams<'external_ocr'>;
export type ImageOcrParams = JobParams<'imageocr'>;
export type AudioParams = JobParams<'audio'>;
/** An audio or a video job's parameters: what a transcription reads. */
export type TranscriptionParams = JobParams<'audio' | 'video'>;
export type VideoParams = JobParams<'video'>;
export type VideoFramesParams = JobParams<'video_frames'>;
export type TransformerParams = JobParams<'transformer'>;
/**
 * A session job's parameters, looked up by any name too: the session's readers copy fields by lists of names
 * (activities/session-output.ts). The schema's fields are all a new job holds; a job recorded before the schema
 * dropped undeclared ones (in its history, or its offloaded parameters) may hold others besides.
 */
export type SessionParams = JobParams<'session'>;
export type SummaryJobType = 'track_summary' | 'event_summary' | 'story';
export type SummaryParams = JobParams<SummaryJobType>;

/**
 * Parses `raw` with the job type's schema: the one validation of a job's parameters, at the API edge. `checked` names
 * fields of the schema the caller validated already, with the same definitions or stricter ones (a route's schema):
 * their values are taken as they are, and the rest is validated, with the schema's rules across fields and its
 * defaults.
 */
export function parseJobParameters<T extends JobType>(
  jobType: T,
  raw: unknown,
  checked: readonly string[] = [],
): z.ZodSafeParseResult<JobParams<T>> {
  const schema = jobParamsByType[jobType] as unknown as z.ZodObject;
  // An option of the contract this type does not offer (`chunking` on a transformer job) is refused, not dropped.
  const foreign = undeclaredOptions(raw, Object.keys(schema.shape), `${jobType} jobs`);
  if (foreign.length)
    return {
      success: false,
      error: new z.ZodError(foreign.map((f) => ({ code: 'custom', path: [f.path], message: f.message, input: raw }))),
    } as z.ZodSafeParseResult<JobParams<T>>;
  // Only the schema's own fields: a name it does not declare is still stripped (or refused by a strict one).
  const taken = checked.filter((k) => k in schema.shape);
  const trusting = taken.length ? schema.safeExtend(Object.fromEntries(taken.map((k) => [k, z.unknown()]))) : schema;
  return (trusting as unknown as z.ZodType<JobParams<T>>).safeParse(raw);
}

/** Pairs a job type with parameters of that type (the one place the pair is asserted). */
export function jobSpec<T extends JobType>(jobType: T, parameters: JobParams<T>): JobSpec<T> {
  return { jobType, parameters } as JobSpec<T>;
}

/** Strings longer than this are kept out of workflow history (the full parameters go to the blob store). */
export const INLINE_PARAMS_BYTES = 32 * 1024;

/**
 * A copy for history and listings: long strings replaced by a note of their length (a string still, so the copy
 * keeps its type; the activities read the full parameters from the blob store).
 */
export function summariseParameters<P extends Record<string, unknown>>(p: P): P {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) {
    if (typeof v === 'string' && v.length > 1024) out[k] = `[${v.length} characters]`;
    else if (v && typeof v === 'object' && !Array.isArray(v))
      out[k] = summariseParameters(v as Record<string, unknown>);
    else out[k] = v;
  }
  return out as P;
}

/** Removes the webhook token from parameters shown to clients and operators. */
export function redactParameters<P extends Record<string, unknown>>(p: P): P {
  const w = p.webhook as Record<string, unknown> | undefined;
  if (!w || typeof w !== 'object' || !('token' in w)) return p;
  return { ...p, webhook: { ...w, token: '[redacted]' } };
}
