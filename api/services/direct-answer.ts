import type { Context } from 'koa';
import type { BlobStore } from '../../core/blob-store';
import { peekCache, writeCache } from '../../core/cache';
import { TRANSFORM_CACHE_OPERATION, transformCacheKey } from '../../core/cache-keys';
import type { Config } from '../../core/config';
import { isHtmlOperation, type HtmlOutcome } from '../../core/html/outcome';
import type { TransformerParams } from '../../core/job-params';
import { countCacheLookup } from '../../core/metrics';
import { transformerData } from '../../core/result-shapes';
import type { ApiEngines } from '../engines';
import type { AsyncPreference } from './async-preference';
import type { JobService } from './jobs';

export interface DirectAnswerDeps {
  jobs: JobService;
  config: Pick<Config, 'INLINE_TRANSFORM_MAX_BYTES' | 'llm'>;
  engines: Pick<ApiEngines, 'transformHtml'>;
}

/** What the transformer activity caches of an operation (its `Computed`): the fields `transformerData` reads. */
interface CachedTransform {
  text: string;
  metadata: Record<string, unknown>;
  output?: Record<string, unknown>;
}

/** Bytes of the request's input (the HTML, the text, or the blocks as JSON): what the threshold is measured on. */
function inputBytes(params: TransformerParams): number {
  const p = params as Record<string, unknown>;
  if (typeof p.html === 'string') return Buffer.byteLength(p.html);
  if (Array.isArray(p.blocks)) return Buffer.byteLength(JSON.stringify(p.blocks));
  return Buffer.byteLength(typeof p.text === 'string' ? p.text : '');
}

function answer(ctx: Context, params: TransformerParams, r: CachedTransform, hit: boolean): void {
  ctx.set('X-Cache', hit ? 'hit' : 'miss');
  ctx.body = { status: 'success', data: transformerData(String(params.operation), params, r) };
}

/**
 * Answers a synchronous transformer request without a job when it can (issue 24), else returns false and the caller
 * runs the job as before (`answerSync`). Only for inputs of at most `INLINE_TRANSFORM_MAX_BYTES` (bigger answers are
 * streamed from the job's stored results, never built in the API's memory), and only when the client did not ask
 * for a job (`Prefer: respond-async`, `wait_ms`):
 * - a cache hit (unless `use_cache` is false) is answered from the entry the activity wrote, under the same key
 *   (core/cache-keys.ts, the same model identity and template source), with the same `data` and `X-Cache: hit`;
 *   `wait_ms=N` (N > 0) still takes a hit, since the answer is there;
 * - a model-free HTML operation is computed by `engines.transformHtml` (the activity's code, in the API's worker
 *   threads: never on the event loop), written to the cache as the activity writes it, and answered `X-Cache: miss`.
 *   It holds a heavy-request slot (429 when the bound is full) as a job would.
 * A client that asked for a job, or a larger input, goes through Temporal as before.
 */
export async function answerDirectly(
  ctx: Context,
  deps: DirectAnswerDeps,
  params: TransformerParams,
  opts: { templateSource?: string } = {},
): Promise<boolean> {
  const prefer = ctx.state.prefer as AsyncPreference | undefined;
  if (prefer?.respondAsync || prefer?.waitMs === 0) return false;
  if (inputBytes(params) > deps.config.INLINE_TRANSFORM_MAX_BYTES) return false;
  const store: BlobStore = deps.jobs.store;
  const operation = String(params.operation);
  const key = transformCacheKey(params, { model: deps.config.llm?.model, templateSource: opts.templateSource });
  if (params.use_cache !== false) {
    const hit = await peekCache<CachedTransform>(store, TRANSFORM_CACHE_OPERATION, key);
    if (hit) {
      countCacheLookup(TRANSFORM_CACHE_OPERATION, true);
      answer(ctx, params, hit, true);
      return true;
    }
  }
  if (!isHtmlOperation(operation) || prefer?.waitMs !== undefined) return false;
  deps.jobs.heavy.enter(ctx);
  // A client that goes away stops the conversion (its thread is ended, the pool starts another).
  const gone = new AbortController();
  const onClose = () => gone.abort(new Error('client closed the request'));
  ctx.res.once('close', onClose);
  let computed: HtmlOutcome;
  try {
    computed = await deps.engines.transformHtml(operation, String(params.html ?? ''), gone.signal);
  } finally {
    ctx.res.off('close', onClose);
  }
  if (params.use_cache !== false) countCacheLookup(TRANSFORM_CACHE_OPERATION, false);
  // As the activity: a fresh success is written, also when the read was skipped (use_cache=false).
  await writeCache(store, TRANSFORM_CACHE_OPERATION, key, computed);
  answer(ctx, params, computed, false);
  return true;
}
