import type { BlobStore } from '../core/stores/blob-store';
import { peekCache, readCache, writeCache } from '../core/stores/cache';
import { TRANSFORM_CACHE_OPERATION, transformCacheKey } from '../core/stores/cache-keys';
import type { HtmlOperation, HtmlOutcome } from '../core/html/outcome';
import { countCacheLookup } from '../core/runtime/metrics';
import type { TransformerResult } from '../core/results/result-schemas-text';
import { transformerData } from '../core/results/result-shapes';

/**
 * The transformer capability (HTML to Markdown, tables, translation, template, summary, blocks), for its one step in
 * the worker (activities/transformer.activities.ts) and the API's own answer (api/services/direct-answer.ts): the
 * cache key, the cache entry (read, written), the HTML conversion through its engine, and the endpoint's `data`.
 * Both paths call these, so an entry one writes is the entry the other reads.
 */

/** What an operation produced, as cached: the fields `transformerData` reads (the activity's entry has more). */
export interface TransformOutcome {
  text: string;
  metadata: Record<string, unknown>;
  output?: Record<string, unknown>;
}

/** What the key depends on besides the parameters: the model's identity and, for `template`, the template's text. */
export interface TransformKeyContext {
  model?: string;
  templateSource?: string;
}

export const transformKey = (params: Record<string, unknown>, ctx: TransformKeyContext): string =>
  transformCacheKey(params, ctx);

/**
 * The cached outcome under `key`, or null. `count` (the activity) counts the lookup as a hit or a miss; the API counts
 * only what it answers itself (`countTransform`), a miss it hands to a job being counted by the job.
 */
export async function cachedTransform<T extends TransformOutcome>(
  store: BlobStore,
  key: string,
  opts: { count: boolean },
): Promise<T | null> {
  return opts.count
    ? readCache<T>(store, TRANSFORM_CACHE_OPERATION, key)
    : peekCache<T>(store, TRANSFORM_CACHE_OPERATION, key);
}

/** A fresh success, written under its key (also when the read was skipped: `use_cache=false`). */
export const rememberTransform = (store: BlobStore, key: string, outcome: TransformOutcome): Promise<void> =>
  writeCache(store, TRANSFORM_CACHE_OPERATION, key, outcome);

/** Counts a lookup the API answered itself: a hit, or a miss it computed. */
export const countTransform = (hit: boolean): void => countCacheLookup(TRANSFORM_CACHE_OPERATION, hit);

/** The endpoint's `data` of an outcome (a job's results and the API's answer alike). */
export const transformAnswer = (params: Record<string, unknown>, outcome: TransformOutcome): TransformerResult =>
  transformerData(String(params.operation), params, outcome);

/**
 * The engine of the model-free HTML operations: core/html/run.ts `runHtmlOperation` (depth check, conversion,
 * shape), run off the caller's event loop (the activity's converter threads, the API's worker threads).
 */
export type HtmlEngine = (operation: HtmlOperation, html: string, signal?: AbortSignal) => Promise<HtmlOutcome>;

/** An HTML operation of the parameters through its engine. */
export const convertHtml = (
  engine: HtmlEngine,
  operation: HtmlOperation,
  params: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<HtmlOutcome> => engine(operation, String(params.html ?? ''), signal);
