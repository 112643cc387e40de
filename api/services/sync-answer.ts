import type { Context } from 'koa';
import { fromCache, resultData } from '../../core/job-results';
import type { JobState } from '../../workflows/definitions';

/**
 * Answers a synchronous request with its finished job's results: the endpoint's `data` is the results without the
 * job fields (the pipeline shaped it), and `X-Cache` says whether the pipeline took it from the result cache.
 */
export function answerWithResults(ctx: Context, done: JobState): void {
  ctx.set('X-Cache', fromCache(done.results) ? 'hit' : 'miss');
  ctx.body = { status: 'success', data: resultData(done.results) };
}
