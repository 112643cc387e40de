import { ApplicationFailure, patched } from '@temporalio/workflow';
import type { JobInput } from '../definitions';
import { audioPipeline } from './audio.pipeline';
import type { Pipeline, PipelineContext } from './context';
import { externalOcrPipeline } from './external-ocr.pipeline';
import { imageOcrPipeline } from './imageocr.pipeline';
import { pdfPipeline } from './pdf.pipeline';
import { summaryPipeline } from './summary.pipeline';
import { sessionPipeline } from './session.pipeline';
import { transformerPipeline } from './transformer.pipeline';
import { videoFramesPipeline } from './video-frames.pipeline';
import { videoPipeline } from './video.pipeline';

export type { Pipeline, PipelineContext } from './context';

const PIPELINES: Partial<Record<JobInput['jobType'], Pipeline>> = {
  transformer: transformerPipeline,
  imageocr: imageOcrPipeline,
  external_ocr: externalOcrPipeline,
  // Created only by /api/video/frames, which came with this pipeline: no patch needed for replay.
  video_frames: videoFramesPipeline,
  // No audio job could be created before its pipeline existed: no patch needed for replay.
  audio: audioPipeline,
  // Video jobs were refused at creation (not in JOB_TYPES) before this pipeline existed: no patch needed for replay.
  video: videoPipeline,
  // Internal types created only by the summary and story routes, which came with this pipeline: no patch needed.
  track_summary: summaryPipeline,
  event_summary: summaryPipeline,
  story: summaryPipeline,
};

/** Pipelines added after jobs of their type could already run (and fail) without one: patched for replay. */
const PATCHED_PIPELINES: Partial<Record<JobInput['jobType'], { patch: string; pipeline: Pipeline }>> = {
  pdf: { patch: 'pdf-pipeline', pipeline: pdfPipeline },
  // Session jobs could be created (and failed with NOT_IMPLEMENTED) before this pipeline existed.
  session: { patch: 'session-pipeline', pipeline: sessionPipeline },
};

/** Dispatches on the job type. A type without a pipeline fails the job with `NOT_IMPLEMENTED`. */
export async function runPipeline(ctx: PipelineContext): Promise<Record<string, unknown>> {
  const added = PATCHED_PIPELINES[ctx.input.jobType];
  const pipeline = PIPELINES[ctx.input.jobType] ?? (added && patched(added.patch) ? added.pipeline : undefined);
  if (!pipeline) {
    throw ApplicationFailure.nonRetryable(
      `Job type '${ctx.input.jobType}' has no processing pipeline in this version of the service.`,
      'NOT_IMPLEMENTED',
      { job_type: ctx.input.jobType },
    );
  }
  return pipeline(ctx);
}
