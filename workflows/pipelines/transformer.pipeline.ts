import { isCancellation, patched } from '@temporalio/workflow';
import { SMALL_TRANSFORM_IN_TASK } from '../patches';
import { activitiesFor, modelRoute } from '../routing';
import type { PipelineContext } from './context';

/** The operations that convert HTML in a thread; every other one asks the language model. */
const LOCAL_OPERATIONS = new Set(['html-to-markdown', 'extract-tables']);

/**
 * The largest inline HTML (characters) converted in the job's workflow task (a local activity: milliseconds); a
 * larger page, or one kept out of the input (`[N characters]`, core/jobs/job-params.ts summariseParameters), is a regular
 * activity.
 */
export const SMALL_TRANSFORM_CHARS = 16 * 1024;

const OFFLOADED = /^\[\d+ characters\]$/;

/** An HTML conversion whose page is in the input and small. */
function smallHtml(operation: string, parameters: Record<string, unknown>): boolean {
  const html = parameters.html;
  return (
    LOCAL_OPERATIONS.has(operation) &&
    typeof html === 'string' &&
    html.length <= SMALL_TRANSFORM_CHARS &&
    !OFFLOADED.test(html)
  );
}

/**
 * The transformer job type: one operation of the transformer endpoints. Its one step runs on the io worker (the llm
 * worker when it asks the model) as a regular activity (a large page converts for seconds, which must not hold the
 * workflow task: queries and `failJob` are answered meanwhile); a small inline HTML conversion runs in the workflow
 * task itself (`patched('small-transform-in-task')`), once: a failed attempt goes on as the regular activity. The
 * step's output is kept for restarts.
 */
export async function transformerPipeline(ctx: PipelineContext<'transformer'>): Promise<Record<string, unknown>> {
  const { operation } = ctx.input.parameters;
  ctx.progress('transform', 10, `Running ${operation}`);
  const inTask = smallHtml(operation, ctx.input.parameters) && patched(SMALL_TRANSFORM_IN_TASK);
  const route = { jobId: ctx.input.jobId, model: modelRoute(!LOCAL_OPERATIONS.has(operation)) };
  const args = { jobId: ctx.input.jobId, parameters: ctx.input.parameters };
  const summary = inTask
    ? // One attempt in the task; a failed one is retried as a regular activity, so no retry holds the task.
      await activitiesFor({ ...route, local: true })
        .runTransformerStep(args)
        .catch((err: unknown) => {
          if (isCancellation(err)) throw err;
          return activitiesFor(route).runTransformerStep(args);
        })
    : await activitiesFor(route).runTransformerStep(args);
  ctx.log('info', summary.reused ? `Step ${operation} reused from an earlier run` : `Step ${operation} done`);
  ctx.progress('transform', 90, `${operation} done`);
  return summary.results;
}
