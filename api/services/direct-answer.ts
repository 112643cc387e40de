import type { Context } from 'koa';
import { BlobNotFoundError, type BlobStore } from '../../core/stores/blob-store';
import type { Config } from '../../core/config/config';
import { isHtmlOperation, type HtmlOutcome } from '../../core/html/outcome';
import type { TransformerParams } from '../../core/jobs/job-params';
import {
  cachedImageOcr,
  countImageOcrHit,
  imageOcrAnswer,
  imageOcrKey,
  entryMarkdown,
} from '../../capabilities/image-ocr';
import { cachedPdf, countPdfLookup, pdfKey } from '../../capabilities/pdf';
import {
  cachedTransform,
  convertHtml,
  countTransform,
  rememberTransform,
  transformAnswer,
  transformKey,
  type TransformOutcome,
} from '../../capabilities/transform';
import type { ApiEngines } from '../engines';
import type { AsyncPreference } from './async-preference';
import type { JobService } from './jobs';
import { streamData } from './sync-answer';

export interface DirectAnswerDeps {
  jobs: JobService;
  config: Pick<Config, 'INLINE_TRANSFORM_MAX_BYTES' | 'llm' | 'PDF_TEXT_ENGINE'>;
  engines: Pick<ApiEngines, 'transformHtml'>;
}

/** Bytes of the request's input (the HTML, the text, or the blocks as JSON): what the threshold is measured on. */
function inputBytes(params: TransformerParams): number {
  const p = params as Record<string, unknown>;
  if (typeof p.html === 'string') return Buffer.byteLength(p.html);
  if (Array.isArray(p.blocks)) return Buffer.byteLength(JSON.stringify(p.blocks));
  return Buffer.byteLength(typeof p.text === 'string' ? p.text : '');
}

/** Whether the client asked for a job instead of an answer (`Prefer: respond-async`, `wait_ms=0`). */
export function asksForJob(ctx: Context): boolean {
  const prefer = ctx.state.prefer as AsyncPreference | undefined;
  return Boolean(prefer?.respondAsync || prefer?.waitMs === 0);
}

function answer(ctx: Context, params: TransformerParams, r: TransformOutcome, hit: boolean): void {
  ctx.set('X-Cache', hit ? 'hit' : 'miss');
  ctx.body = { status: 'success', data: transformAnswer(params, r) };
}

/**
 * Answers a synchronous transformer request without a job when it can (issue 24), else returns false and the caller
 * runs the job as before (`answerSync`). Only for inputs of at most `INLINE_TRANSFORM_MAX_BYTES` (bigger answers are
 * streamed from the job's stored results, never built in the API's memory), and only when the client did not ask
 * for a job (`Prefer: respond-async`, `wait_ms`):
 * - a cache hit (unless `use_cache` is false) is answered from the entry the activity wrote, under the same key
 *   (capabilities/transform.ts, which both call), with the same `data` and `X-Cache: hit`;
 *   `wait_ms=N` (N > 0) still takes a hit, since the answer is there;
 * - a model-free HTML operation is computed by `engines.transformHtml` (the activity's code, in the API's worker
 *   threads: never on the event loop), written to the cache by the capability's code, and answered `X-Cache: miss`.
 *   It holds a heavy-request slot (429 when the bound is full) as a job would.
 * A client that asked for a job, or a larger input, goes through Temporal as before.
 */
export async function answerDirectly(
  ctx: Context,
  deps: DirectAnswerDeps,
  params: TransformerParams,
  opts: { templateSource?: string } = {},
): Promise<boolean> {
  if (asksForJob(ctx)) return false;
  if (inputBytes(params) > deps.config.INLINE_TRANSFORM_MAX_BYTES) return false;
  const store: BlobStore = deps.jobs.store;
  const operation = String(params.operation);
  const key = transformKey(params, { model: deps.config.llm?.model, templateSource: opts.templateSource });
  if (params.use_cache !== false) {
    const hit = await cachedTransform(store, key, { count: false });
    if (hit) {
      countTransform(true);
      answer(ctx, params, hit, true);
      return true;
    }
  }
  if (!isHtmlOperation(operation) || (ctx.state.prefer as AsyncPreference | undefined)?.waitMs !== undefined)
    return false;
  deps.jobs.heavy.enter(ctx);
  // A client that goes away stops the conversion (its thread is ended, the pool starts another).
  const gone = new AbortController();
  const onClose = () => gone.abort(new Error('client closed the request'));
  ctx.res.once('close', onClose);
  let computed: HtmlOutcome;
  try {
    computed = await convertHtml(deps.engines.transformHtml, operation, params, gone.signal);
  } finally {
    ctx.res.off('close', onClose);
  }
  if (params.use_cache !== false) countTransform(false);
  // A fresh success is written, also when the read was skipped (use_cache=false).
  await rememberTransform(store, key, computed);
  answer(ctx, params, computed, false);
  return true;
}

/**
 * Answers `/api/pdf/process` from the result cache without a job when the entry is there (issue 24): the key is the
 * activity's (capabilities/pdf.ts `pdfKey`: the upload's sha256 as the blob store computed it, the validated
 * parameters, the text engine and the vision model), and the answer is the earlier job's stored `data`, streamed as
 * a job's hit answers it (`X-Cache: hit`, the same bytes). False (run the job) for `use_cache` false, a request that
 * is not cached (a template, page images), a client that asked for a job (`Prefer: respond-async`, `wait_ms=0`),
 * a miss, or an entry whose job was swept.
 */
export async function answerPdfFromCache(
  ctx: Context,
  deps: { jobs: JobService; config: Pick<Config, 'llm' | 'PDF_TEXT_ENGINE'> },
  sha256: string,
  params: Record<string, unknown>,
): Promise<boolean> {
  if (asksForJob(ctx) || params.use_cache === false) return false;
  const { config } = deps;
  const key = pdfKey(sha256, params, { textEngine: config.PDF_TEXT_ENGINE, visionModel: config.llm?.visionModel });
  if (!key) return false;
  const store = deps.jobs.store;
  const ref = await cachedPdf(store, key);
  if (!ref) return false;
  try {
    const st = await store.stat(ref.fields);
    if (!st) return false;
    await streamData(ctx, store, ref.data, true);
  } catch (e) {
    if (e instanceof BlobNotFoundError) return false;
    throw e;
  }
  countPdfLookup(true);
  return true;
}

/**
 * Answers `/api/imageocr/process` (an upload) from the result cache without a job when the entry is there: the key
 * is the activity's (capabilities/image-ocr.ts `imageOcrKey`: the upload's sha256, the OCR languages and, with a template, its source and
 * the model), the answer the `data` the activity cached (`X-Cache: hit`). False (run the job) for `use_cache` false, a
 * client that asked for a job, a template that does not exist (the job answers its 404), or a miss.
 */
export async function answerImageFromCache(
  ctx: Context,
  deps: Pick<DirectAnswerDeps, 'jobs' | 'config'>,
  sha256: string,
  params: Record<string, unknown>,
): Promise<boolean> {
  if (asksForJob(ctx) || params.use_cache === false) return false;
  const key = await imageOcrKey(sha256, params, { model: deps.config.llm?.model });
  if (!key) return false;
  const hit = await cachedImageOcr(deps.jobs.store, key, { count: false });
  if (!hit) return false;
  countImageOcrHit();
  ctx.set('X-Cache', 'hit');
  ctx.body = { status: 'success', data: imageOcrAnswer(hit.extracted_text, hit.metadata, entryMarkdown(hit), params) };
  return true;
}
