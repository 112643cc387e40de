import { ApplicationFailure, patched } from '@temporalio/workflow';
import type { JobType } from '../definitions';
import { audioPipeline } from './audio.pipeline';
import type { Pipeline, PipelineContext } from './context';
import { documentPipeline } from './document.pipeline';
import { externalOcrPipeline } from './external-ocr.pipeline';
import { imageOcrPipeline } from './imageocr.pipeline';
import { pdfPipeline } from './pdf.pipeline';
import { summaryPipeline } from './summary.pipeline';
import { sessionPipeline } from './session.pipeline';
import { transformerPipeline } from './transformer.pipeline';
import { videoFramesPipeline } from './video-frames.pipeline';
import { videoPipeline } from './video.pipeline';

export type { Pipeline, PipelineContext } from './context';

/**
 * A job type's pipeline; `patch` names the marker of a pipeline added after jobs of its type could already run (and
 * fail) without one, so a replay of such a run still takes the old path.
 */
export interface PipelineEntry<T extends JobType> {
  pipeline: Pipeline<T>;
  patch?: string;
}

/** Every job type's pipeline: exhaustive over the job types (core/jobs/job-params.ts), so none is half-registered. */
export type PipelineTable = { [T in JobType]: PipelineEntry<T> };

const PIPELINES: PipelineTable = {
  transformer: { pipeline: transformerPipeline },
  imageocr: { pipeline: imageOcrPipeline },
  external_ocr: { pipeline: externalOcrPipeline },
  // Created only by /api/video/frames, which came with this pipeline: no patch needed for replay.
  video_frames: { pipeline: videoFramesPipeline },
  // No audio job could be created before its pipeline existed: no patch needed for replay.
  audio: { pipeline: audioPipeline },
  // Video jobs were refused at creation (not a public job type) before this pipeline existed: no patch needed.
  video: { pipeline: videoPipeline },
  // Internal types created only by the summary and story routes, which came with this pipeline: no patch needed.
  track_summary: { pipeline: summaryPipeline },
  event_summary: { pipeline: summaryPipeline },
  story: { pipeline: summaryPipeline },
  pdf: { pipeline: pdfPipeline, patch: 'pdf-pipeline' },
  // Document jobs were refused at creation (not a job type) before this pipeline existed: no patch needed.
  document: { pipeline: documentPipeline },
  // Session jobs could be created (and failed with NOT_IMPLEMENTED) before this pipeline existed.
  session: { pipeline: sessionPipeline, patch: 'session-pipeline' },
};

/**
 * Dispatches on the job type. A type without a pipeline (a history's type this version does not know, or a patched
 * pipeline in a run recorded before it) fails the job with `NOT_IMPLEMENTED`.
 */
export async function runPipeline<T extends JobType>(ctx: PipelineContext<T>): Promise<Record<string, unknown>> {
  const entry: PipelineEntry<T> | undefined = PIPELINES[ctx.input.jobType];
  const pipeline = entry && (entry.patch === undefined || patched(entry.patch)) ? entry.pipeline : undefined;
  if (!pipeline) {
    throw ApplicationFailure.nonRetryable(
      `Job type '${ctx.input.jobType}' has no processing pipeline in this version of the service.`,
      'NOT_IMPLEMENTED',
      { job_type: ctx.input.jobType },
    );
  }
  return pipeline(ctx);
}
