import { cacheKey, canonicalJson, contentHash } from './cache';

/** Cache operation folder of the transformer (cache/transformer/<key>.json). */
export const TRANSFORM_CACHE_OPERATION = 'transformer';

const MODEL_FREE = new Set(['html-to-markdown', 'extract-tables']);

/**
 * The cache key of a transformer operation, computed the same way by the API (to answer a hit without a job) and by
 * the worker (which writes every fresh success). Parameters that do not change the result (use_cache, webhook) are
 * left out; a template's source is part of the key, so editing a template invalidates its entries.
 */
export function transformCacheKey(
  params: Record<string, unknown>,
  opts: { model?: string; templateSource?: string } = {},
): string {
  const { use_cache: _u, webhook: _w, ...rest } = params;
  (void _u, _w);
  const operation = String(rest.operation ?? '');
  return cacheKey({
    operation: `transformer-${operation}`,
    inputHash: contentHash(canonicalJson(rest)),
    params: opts.templateSource !== undefined ? { template_source: contentHash(opts.templateSource) } : {},
    model: MODEL_FREE.has(operation) ? '' : (opts.model ?? ''),
  });
}
