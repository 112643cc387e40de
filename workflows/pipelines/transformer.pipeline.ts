import { proxyLocalActivities } from '@temporalio/workflow';
import type { createActivities } from '../../activities';
import { quickTransform } from '../activity-options';
import type { PipelineContext } from './index';

type Activities = ReturnType<typeof createActivities>;
const local = proxyLocalActivities<Activities>(quickTransform);

/**
 * The transformer job type: one operation of the transformer endpoints. Its one step runs in-process on the io
 * worker (a local activity): these are fast text operations, and the step's output is kept for restarts.
 */
export async function transformerPipeline(ctx: PipelineContext): Promise<Record<string, unknown>> {
  const operation = String(ctx.input.parameters.operation ?? '');
  ctx.progress('transform', 10, `Running ${operation}`);
  const summary = await local.runTransformerStep({ jobId: ctx.input.jobId, parameters: ctx.input.parameters });
  ctx.log('info', summary.reused ? `Step ${operation} reused from an earlier run` : `Step ${operation} done`);
  ctx.progress('transform', 90, `${operation} done`);
  return summary.results;
}
