import { activitiesFor, modelRoute } from '../routing';
import type { PipelineContext } from './context';

/** The operations that convert HTML in a thread; every other one asks the language model. */
const LOCAL_OPERATIONS = new Set(['html-to-markdown', 'extract-tables']);

/**
 * The transformer job type: one operation of the transformer endpoints. Its one step runs on the io worker (the llm
 * worker when it asks the model) as a regular activity (a large page converts for seconds, which must not hold the
 * workflow task: queries and
 * `failJob` are answered meanwhile); the step's output is kept for restarts.
 */
export async function transformerPipeline(ctx: PipelineContext<'transformer'>): Promise<Record<string, unknown>> {
  const { operation } = ctx.input.parameters;
  ctx.progress('transform', 10, `Running ${operation}`);
  const step = activitiesFor({ jobId: ctx.input.jobId, model: modelRoute(!LOCAL_OPERATIONS.has(operation)) });
  const summary = await step.runTransformerStep({ jobId: ctx.input.jobId, parameters: ctx.input.parameters });
  ctx.log('info', summary.reused ? `Step ${operation} reused from an earlier run` : `Step ${operation} done`);
  ctx.progress('transform', 90, `${operation} done`);
  return summary.results;
}
