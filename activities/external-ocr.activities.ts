import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import { readBlobBuffer, readBlobJson, writeBlobJson } from '../core/stores/blob-store';
import { readCache, writeCache } from '../core/stores/cache';
import type { ExternalOcrParams } from '../core/jobs/job-params';
import { type JobFields, resultPreview, writeJobResults } from '../core/results/job-results';
import { EXTERNAL_OCR_CACHE_OPERATION, externalOcrCacheKey } from '../core/stores/cache-keys';
import { jobInternalKey, jobOutputKey, jobOutputPrefix } from '../core/stores/records';
import { externalOcrData } from '../core/results/result-shapes';
import { createExternalOcr } from '../providers/external-ocr/mistral';
import type { ExternalOcrRaw } from '../domain/engines/external-ocr';
import type { ActivityDeps } from './deps';
import { heartbeating } from './job-steps';

export function createExternalOcrActivities(deps: ActivityDeps) {
  const { store, config } = deps;
  const provider = createExternalOcr(config.externalOcr);
  return {
    /**
     * Sends the document (split by page range when big) to the external OCR service; the raw answer goes to the job
     * and to the result cache. Unless `useCache` is false, a cached answer for the same document, pages and service
     * is used instead of calling the service.
     */
    async externalOcrPdf(input: {
      jobId: string;
      inputKey: string;
      sha256: string;
      pages: number[];
      pageCount: number;
      includeImages: boolean;
      useCache?: boolean;
    }) {
      if (!provider) {
        throw ApplicationFailure.nonRetryable(
          'External OCR is not configured: set EXTERNAL_OCR_URL (and EXTERNAL_OCR_API_KEY).',
          'PROVIDER_NOT_CONFIGURED',
          {},
        );
      }
      const key = externalOcrCacheKey(input.sha256, input, {
        url: config.externalOcr!.url,
        model: config.externalOcr!.model,
      });
      // Each request may take minutes (EXTERNAL_OCR_TIMEOUT_MS): the step heartbeats every second throughout (the
      // input's read, the wait, the answer's writes), and with the pages done after each request.
      return heartbeating(async (signal) => {
        const hit =
          input.useCache === false ? null : await readCache<ExternalOcrRaw>(store, EXTERNAL_OCR_CACHE_OPERATION, key);
        const raw: ExternalOcrRaw =
          hit ??
          (await provider.ocrPdf(await readBlobBuffer(store, input.inputKey), {
            pages: input.pages.map((p) => p - 1),
            pageCount: input.pageCount,
            includeImages: input.includeImages,
            signal,
            onProgress: (done, total) => heartbeat({ done, total }),
          }));
        if (!hit) await writeCache(store, EXTERNAL_OCR_CACHE_OPERATION, key, raw);
        await writeBlobJson(store, jobInternalKey(input.jobId, 'external-ocr.json'), raw);
        return { pages: raw.pages.length, model: raw.model, fromCache: hit !== null };
      });
    },

    /** Assembles the spec's result: page-separated Markdown, metadata, the raw answer and the pages archive. */
    async finishExternalOcr(input: {
      jobId: string;
      parameters: ExternalOcrParams;
      pageCount: number;
      fileSize: number;
      pagesArchive?: string;
      fromCache?: boolean;
    }) {
      // Reads the raw answer and writes the results, the pages archive streamed in as Base64: heartbeating throughout.
      return heartbeating(async () => {
        const { jobId } = input;
        const raw = await readBlobJson<ExternalOcrRaw>(store, jobInternalKey(jobId, 'external-ocr.json'));
        const text = raw.pages.map((p) => p.markdown.trim()).join('\n\n---\n\n');
        await store.put(jobOutputKey(jobId, 'result.md'), text, { mime: 'text/markdown; charset=utf-8' });
        await writeBlobJson(store, jobOutputKey(jobId, 'external-ocr.json'), raw);
        const metadata = {
          page_count: input.pageCount,
          file_name: String(input.parameters.original_name ?? 'document.pdf'),
          file_size: input.fileSize,
          extraction_method: 'external_ocr',
        };
        // The archive's Base64 (`pages_archive_data`) streams from its blob into the results blob (writeJobResults).
        const pages = input.pagesArchive ? { filename: `${jobId}-pages.zip`, data: '' } : null;
        const job: JobFields = {
          structured_data: { extracted_text: text, metadata },
          assets: [
            jobOutputKey(jobId, 'result.md'),
            jobOutputKey(jobId, 'external-ocr.json'),
            ...(input.pagesArchive ? [jobOutputKey(jobId, input.pagesArchive)] : []),
          ],
          target_dir: jobOutputPrefix(jobId).slice(0, -1),
          from_cache: input.fromCache === true,
        };
        await writeJobResults(
          store,
          jobId,
          externalOcrData(text, metadata, raw, pages),
          job,
          input.pagesArchive
            ? { field: 'pages_archive_data', blobKey: jobOutputKey(jobId, input.pagesArchive) }
            : undefined,
        );
        return { results: resultPreview(job) };
      });
    },
  };
}
