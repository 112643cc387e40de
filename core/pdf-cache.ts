import { cacheKey } from './cache';

/** Cache operation folder of PDF text results (cache/pdf/<key>.json). */
export const PDF_CACHE_OPERATION = 'pdf';

/** What a cached PDF result holds: the `structured_data` of the job's results. */
export interface PdfCachedResult {
  extracted_text: string;
  metadata: Record<string, unknown>;
}

/**
 * The rule `combined` reads a page by, part of its cache keys (result and page cache), so results read under an
 * earlier rule are not reused: `image-pages` OCRs only pages that paint an image and have no usable text layer.
 */
export const COMBINED_RULE = 'image-pages';

/** The parts of a deployment that change a PDF's text: the text engine and the vision model, when there is one. */
export interface PdfCacheContext {
  textEngine: string;
  visionModel?: string;
}

/**
 * The result-cache key of a PDF text extraction, computed the same way by the API (to answer a hit without a job)
 * and by the worker (which writes every fresh success): the document's sha256, the method, the page range, the OCR
 * languages, and what the method depends on (the text engine for `native` and `combined`, the vision model for
 * `vision_llm` and `combined`). Null when the request is not cached: a template (the model's answer is the
 * transformer's to cache) or page images (an archive, not text).
 */
export function pdfCacheKey(inputSha256: string, params: Record<string, unknown>, ctx: PdfCacheContext): string | null {
  if (!inputSha256 || params.template || params.includeImages) return null;
  const method = String(params.extraction_method ?? 'native');
  const usesTextLayer = method === 'native' || method === 'combined';
  const usesVision = method === 'vision_llm' || method === 'combined';
  return cacheKey({
    operation: `pdf-${method}`,
    inputHash: inputSha256,
    params: {
      page_start: params.page_start ?? null,
      page_end: params.page_end ?? null,
      languages: method === 'native' ? null : String(params.ocr_language ?? params.source_language ?? ''),
      ...(usesTextLayer ? { engine: ctx.textEngine } : {}),
      ...(method === 'combined' ? { rule: COMBINED_RULE } : {}),
    },
    model: usesVision ? (ctx.visionModel ?? '') : '',
  });
}
