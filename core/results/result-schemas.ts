import { z } from 'zod';
import type { JobType } from '../jobs/job-params';
import { documentResultData } from './result-schemas-document';
import {
  audioResultData,
  detectLanguageResultData,
  hostedVideoResultData,
  imageOcrResultData,
  videoFramesResultData,
  videoResultData,
} from './result-schemas-media';
import { externalOcrResultData, pdfResultData } from './result-schemas-pdf';
import {
  eventSummaryResultData,
  sessionResultData,
  storyResultData,
  trackSummariesResultData,
  trackSummaryResultData,
  transformerResultData,
} from './result-schemas-text';

/**
 * The result contract: the schema of each job type's `data`, the object its synchronous endpoint answers, its
 * completion webhook carries and its results hold (with the job fields, `job-results.ts`), beside the job input
 * schemas (`job-params.ts`). The builders (`result-shapes.ts`) return these types; the routes' response schemas and
 * the OpenAPI document are built from these schemas (api/schemas/*), so a result shape is written once. The schemas
 * by area: result-schemas-pdf.ts (PDF, external OCR), result-schemas-document.ts, result-schemas-media.ts (image
 * OCR, audio, video) and result-schemas-text.ts (transformer, sessions, summaries); here what they share and the
 * table by job type.
 *
 * Plain zod with `.meta()` (the descriptions, examples and component names the OpenAPI document shows): the core
 * does not depend on the OpenAPI extension.
 */

/** What a job's language model calls cost (`UsageRecorder.summary()`). */
export const llmInfoSchema = z
  .object({
    total_tokens: z.number().int(),
    total_cost: z.number(),
    requests: z.array(
      z.object({ model: z.string(), purpose: z.string(), tokens: z.number().int(), duration_ms: z.number().int() }),
    ),
  })
  .meta({ id: 'LlmInfo' });

/**
 * Every job type with the schema of its `data` (the twin of `jobParamsByType`): where one job type answers more than
 * one endpoint (a transformer operation, a hosted video, language detection), the union of their shapes.
 */
export const jobResultDataByType = {
  pdf: pdfResultData,
  // A PDF or an image sent as a document answers as its own endpoint does (contract §12).
  document: z.union([documentResultData, pdfResultData, imageOcrResultData]),
  session: sessionResultData,
  transformer: z.union([
    transformerResultData.text,
    transformerResultData.template,
    transformerResultData.summarize,
    transformerResultData['html-to-markdown'],
    transformerResultData['extract-tables'],
    transformerResultData.blocks,
  ]),
  audio: z.union([audioResultData, detectLanguageResultData]),
  video: z.union([videoResultData, hostedVideoResultData]),
  imageocr: imageOcrResultData,
  external_ocr: externalOcrResultData,
  video_frames: videoFramesResultData,
  track_summary: z.union([trackSummaryResultData, trackSummariesResultData]),
  event_summary: eventSummaryResultData,
  story: storyResultData,
} as const satisfies Record<JobType, z.ZodType>;

/** The `data` of a job of type `T` (z.infer of the type's result schema). */
export type JobResultData<T extends JobType = JobType> = z.infer<(typeof jobResultDataByType)[T]>;
export type LlmInfoData = z.infer<typeof llmInfoSchema>;
