import type { BlobStore } from '../core/stores/blob-store';
import { cacheFileKey, noteJobCacheEntry, readCacheRef, writeCacheRef, type CacheRef } from '../core/stores/cache';
import { PDF_CACHE_OPERATION, pdfCacheKey } from '../core/stores/cache-keys';
import { countCacheLookup } from '../core/runtime/metrics';
import { directPdfResult, pdfPageEntry, type DirectPdfResult } from '../core/results/pdf-text';
import type { ResultPreview } from '../core/results/job-results';
import { jobFieldsKey, jobOutputKey, jobResultsKey } from '../core/stores/records';

/**
 * The PDF capability (text, and Markdown with `output_format=markdown`), for the pdf job's end
 * (activities/pdf-results.ts) and the API's own answer (api/services/direct-pdf.ts, direct-answer.ts): the result
 * cache's key (the document's sha256, the validated parameters, the text engine and the vision model), its entry (a
 * reference to stored results: a job's, or the API's under `cache/files/`), and the result of a text layer read
 * without a job. An entry one path writes is the entry the other reads.
 */

/** The parts of a deployment the key depends on. */
export interface PdfKeyContext {
  textEngine: string;
  visionModel?: string;
}

/** The key of this document under these parameters; null when the request is not cached (a template, page images). */
export const pdfKey = (sha256: string, params: Record<string, unknown>, ctx: PdfKeyContext): string | null =>
  pdfCacheKey(sha256, params, ctx);

/** The entry's reference to stored results, or null (not counted: `countPdfLookup`). */
export const cachedPdf = (store: BlobStore, key: string): Promise<CacheRef | null> =>
  readCacheRef(store, PDF_CACHE_OPERATION, key);

export const countPdfLookup = (hit: boolean): void => countCacheLookup(PDF_CACHE_OPERATION, hit);

/**
 * A job's fresh results, pointed at by the entry (the text stored once, in the job's folder); noted under the job, so
 * that deleting the job deletes the entry.
 */
export async function rememberJobPdf(
  store: BlobStore,
  key: string,
  jobId: string,
  preview: Pick<ResultPreview, 'structured_data'>,
): Promise<void> {
  await noteJobCacheEntry(store, jobId, PDF_CACHE_OPERATION, key);
  await writeCacheRef(store, PDF_CACHE_OPERATION, key, {
    job_id: jobId,
    data: jobResultsKey(jobId),
    fields: jobFieldsKey(jobId),
    files: { 'result.md': jobOutputKey(jobId, 'result.md') },
    preview: { structured_data: preview.structured_data },
  });
}

/**
 * A result read without a job, stored as a job stores its results (the `data` bytes, the job fields, `result.md`)
 * under `cache/files/`, and the entry pointed at it (the entry last): a later request is a hit, in the API or in a job
 * (which copies it).
 */
export async function rememberDirectPdf(store: BlobStore, key: string, r: DirectPdfResult): Promise<void> {
  const files = {
    data: cacheFileKey(PDF_CACHE_OPERATION, key, 'data.json'),
    fields: cacheFileKey(PDF_CACHE_OPERATION, key, 'fields.json'),
    md: cacheFileKey(PDF_CACHE_OPERATION, key, 'result.md'),
  };
  await Promise.all([
    store.put(files.data, Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength), {
      mime: 'application/json',
    }),
    store.put(files.md, r.md, { mime: 'text/markdown; charset=utf-8' }),
    store.put(files.fields, JSON.stringify(r.fields), { mime: 'application/json' }),
  ]);
  await writeCacheRef(store, PDF_CACHE_OPERATION, key, {
    data: files.data,
    fields: files.fields,
    files: { 'result.md': files.md },
    preview: r.preview,
  });
}

/** The result of a `native` text read of `meta.pages` (one text per page, in order), as a job builds it. */
export function nativeTextResult(
  meta: { pageCount: number; title: string; author: string; pages: readonly number[] },
  texts: readonly string[],
): DirectPdfResult {
  if (texts.length !== meta.pages.length)
    throw new Error(`pdftotext read ${texts.length} pages of ${meta.pages.length}`);
  return directPdfResult(
    meta,
    meta.pages.map((page, i) => pdfPageEntry({ page, text: texts[i], method: 'native' })),
  );
}
