import { cacheKey, contentHash } from './cache';

/** Cache operation folder of image OCR results (cache/imageocr/<key>.json): the endpoint's `data`. */
export const IMAGE_OCR_CACHE_OPERATION = 'imageocr';

/**
 * The result-cache key of an image OCR: the image's sha256, the OCR languages and, with a template, the template's
 * source and context and the model that fills it (editing a template or switching models invalidates the entry).
 * A URL is keyed by the bytes it served, so a changed image is recognised again.
 */
export function imageOcrCacheKey(
  imageSha256: string,
  params: Record<string, unknown>,
  ctx: { templateSource?: string; model?: string },
): string {
  const template = ctx.templateSource !== undefined;
  return cacheKey({
    operation: IMAGE_OCR_CACHE_OPERATION,
    inputHash: imageSha256,
    params: {
      languages: String(params.ocr_language ?? params.source_language ?? ''),
      ...(template ? { template_source: contentHash(ctx.templateSource!), context: params.context ?? {} } : {}),
    },
    model: template ? (ctx.model ?? '') : '',
  });
}

/** Cache operation folder of external OCR answers (cache/external-ocr/<key>.json): the service's raw answer. */
export const EXTERNAL_OCR_CACHE_OPERATION = 'external-ocr';

/** The cache key of an external OCR answer: the document, the pages asked for, the images option and the service. */
export function externalOcrCacheKey(
  pdfSha256: string,
  req: { pages: number[]; includeImages: boolean },
  service: { url: string; model: string },
): string {
  return cacheKey({
    operation: EXTERNAL_OCR_CACHE_OPERATION,
    inputHash: pdfSha256,
    params: { pages: req.pages, include_images: req.includeImages },
    model: `${service.url} ${service.model}`,
  });
}
