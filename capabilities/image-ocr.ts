import type { BlobStore } from '../core/stores/blob-store';
import { peekCache, readCache, writeCache } from '../core/stores/cache';
import { IMAGE_OCR_CACHE_OPERATION, imageOcrCacheKey } from '../core/stores/cache-keys';
import { countCacheLookup } from '../core/runtime/metrics';
import type { ImageOcrMetadata, ImageOcrResultData } from '../core/results/result-schemas-media';
import { imageOcrData } from '../core/results/result-shapes';
import { keyTemplateSource } from './template-source';
import { documentChunks, type ChunkParams } from './chunks';
import { documentMarkdown } from '../domain/pdf/markdown/document';
import { ocrPageLayout, type OcrLayout } from '../domain/pdf/markdown/ocr-layout';

/**
 * The image OCR capability's result cache, for the worker (activities/image.activities.ts) and the API's hit
 * (api/services/direct-answer.ts): the key (the image's sha256, the OCR languages and, with a template, its source
 * and the model), the entry (the endpoint's `data`), and the `data` of a result.
 */

/** The entry: the endpoint's `data`. */
export type ImageOcrEntry = ImageOcrResultData;

/** The key of this image under these parameters; null when the named template does not exist. */
export async function imageOcrKey(
  sha256: string,
  p: Record<string, unknown>,
  ctx: { model?: string },
): Promise<string | null> {
  const source = await keyTemplateSource(p);
  if (source === null) return null;
  return imageOcrCacheKey(sha256, p, { templateSource: source, model: ctx.model });
}

/** The entry under `key`, or null; `count` counts the lookup (the activity), else the caller counts what it answers. */
export const cachedImageOcr = (
  store: BlobStore,
  key: string,
  opts: { count: boolean },
): Promise<ImageOcrEntry | null> =>
  opts.count
    ? readCache<ImageOcrEntry>(store, IMAGE_OCR_CACHE_OPERATION, key)
    : peekCache<ImageOcrEntry>(store, IMAGE_OCR_CACHE_OPERATION, key);

/** A fresh success's `data`, written under its key. */
export const rememberImageOcr = (store: BlobStore, key: string, data: ImageOcrResultData): Promise<void> =>
  writeCache(store, IMAGE_OCR_CACHE_OPERATION, key, data);

export const countImageOcrHit = (): void => countCacheLookup(IMAGE_OCR_CACHE_OPERATION, true);

/** The image's Markdown and its blocks, boxes in the image's pixels (contract §13), from tesseract's words. */
export type ImageMarkdown = Required<Pick<ImageOcrResultData, 'markdown' | 'blocks'>>;

/**
 * The image's Markdown by the PDF Markdown rules on the page its words make, read at the image's resolution (the
 * rules measure in points), and the blocks' boxes turned back into the image's pixels from its top-left.
 */
export function imageMarkdown(layout: OcrLayout, dpi: number): ImageMarkdown {
  const page = documentMarkdown([ocrPageLayout(1, layout, dpi)]).pages[0];
  const px = (v: number) => Math.round((v * dpi) / 72);
  const blocks = page.blocks.map((b) => ({ ...b, bbox: b.bbox.map(px) as typeof b.bbox }));
  return { markdown: page.markdown, blocks };
}

/** An entry's Markdown and blocks, when it holds them (output_format=markdown). */
export const entryMarkdown = (e: ImageOcrEntry): ImageMarkdown | undefined =>
  e.markdown === undefined ? undefined : { markdown: e.markdown, blocks: e.blocks ?? [] };

/**
 * The endpoint's `data` (a job's results, the entry, the API's answer); `md` with output_format=markdown; with
 * chunking=true (`p`) its chunks, of the Markdown with its blocks' boxes in pixels, or of the text.
 */
export const imageOcrAnswer = (
  text: string,
  metadata: ImageOcrMetadata,
  md?: ImageMarkdown,
  p: ChunkParams = {},
): ImageOcrResultData => ({
  ...imageOcrData(text, metadata, md),
  ...documentChunks(md?.markdown ?? text, [{ page: 1, text: md?.markdown ?? text, blocks: md?.blocks }], p),
});
