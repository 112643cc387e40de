import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { cpuBound } from '../activity-options';
import { siblingQueue } from '../routing';
import type { PipelineContext } from './context';

/** Video frames (`/api/video/frames`): one media-queue step extracts the JPEGs into the job and writes the results. */
export async function videoFramesPipeline(ctx: PipelineContext<'video_frames'>): Promise<Record<string, unknown>> {
  const media = proxyActivities<Activities>({ ...cpuBound, taskQueue: siblingQueue('media') });
  ctx.progress('frames', 10, 'Extracting frames');
  const r = await media.extractVideoFrames({ jobId: ctx.input.jobId, parameters: ctx.input.parameters });
  ctx.log('info', `${r.frames} frames extracted`);
  return r.results;
}
