import fs from 'node:fs/promises';
import { ApplicationFailure, cancellationSignal, heartbeat } from '@temporalio/activity';
import { readBlobJson, writeBlobJson } from '../core/blob-store';
import { jobInternalKey, jobOutputKey, jobOutputPrefix, jobResultsKey } from '../core/records';
import { createExternalOcr } from '../providers/external-ocr/mistral';
import type { ExternalOcrRaw } from '../providers/external-ocr/types';
import { clientFailure } from './failures';
import type { ActivityDeps } from './deps';
import { localCopy } from './local-copy';

export function createExternalOcrActivities(deps: ActivityDeps) {
  const { store, config } = deps;
  const provider = createExternalOcr(config.externalOcr);
  return {
    /** Sends the document (split by page range when big) to the external OCR service; the raw answer goes to the job. */
    async externalOcrPdf(input: { jobId: string; inputKey: string; sha256: string; pages: number[]; pageCount: number; includeImages: boolean }) {
      if (!provider) {
        throw ApplicationFailure.nonRetryable('External OCR is not configured: set EXTERNAL_OCR_URL (and EXTERNAL_OCR_API_KEY).', 'PROVIDER_NOT_CONFIGURED', {});
      }
      const bytes = await fs.readFile(await localCopy(store, input.inputKey, input.sha256, '.pdf'));
      let raw: ExternalOcrRaw;
      try {
        raw = await provider.ocrPdf(bytes, {
          pages: input.pages.map((p) => p - 1),
          pageCount: input.pageCount,
          includeImages: input.includeImages,
          signal: cancellationSignal(),
          onProgress: (done, total) => heartbeat({ done, total }),
        });
      } catch (err) {
        clientFailure(err);
      }
      await writeBlobJson(store, jobInternalKey(input.jobId, 'external-ocr.json'), raw);
      return { pages: raw.pages.length, model: raw.model };
    },

    /** Assembles the spec's result: page-separated Markdown, the raw answer, the pages archive reference. */
    async finishExternalOcr(input: { jobId: string; parameters: Record<string, unknown>; pageCount: number; fileSize: number; pagesArchive?: string }) {
      const raw = await readBlobJson<ExternalOcrRaw>(store, jobInternalKey(input.jobId, 'external-ocr.json'));
      const text = raw.pages.map((p) => p.markdown.trim()).join('\n\n---\n\n');
      await store.put(jobOutputKey(input.jobId, 'result.md'), text, { mime: 'text/markdown; charset=utf-8' });
      await writeBlobJson(store, jobOutputKey(input.jobId, 'external-ocr.json'), raw);
      const results = {
        structured_data: {
          extracted_text: text,
          metadata: {
            page_count: input.pageCount,
            file_name: String(input.parameters.original_name ?? 'document.pdf'),
            file_size: input.fileSize,
            extraction_method: 'external_ocr',
          },
        },
        external_ocr_raw: raw,
        pages_archive: input.pagesArchive ?? null,
        assets: [jobOutputKey(input.jobId, 'result.md'), jobOutputKey(input.jobId, 'external-ocr.json'), ...(input.pagesArchive ? [jobOutputKey(input.jobId, input.pagesArchive)] : [])],
        target_dir: jobOutputPrefix(input.jobId).slice(0, -1),
      };
      await writeBlobJson(store, jobResultsKey(input.jobId), results);
      return { results: { target_dir: results.target_dir, assets: results.assets, pages_archive: results.pages_archive, structured_data: { extracted_text: text.slice(0, 2000), metadata: results.structured_data.metadata } } };
    },
  };
}
