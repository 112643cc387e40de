import { activitiesFor } from '../routing';
import type { PipelineContext } from './context';

/** Video frames (`/api/video/frames`): one media-queue step extracts the JPEGs into the job and writes the results. */
export async function videoFramesPipeline(ctx: PipelineContext<'video_frames'>): Promise<Record<string, unknown>> {
  const media = activitiesFor();
  ctx.progress('frames', 10, 'Extracting frames');
  const r = await media.extractVideoFrames({ jobId: ctx.input.jobId, parameters: ctx.input.parameters });
  ctx.log('info', `${r.frames} frames extracted`);
  return r.results;
}
