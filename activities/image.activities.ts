import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createReadStream } from 'node:fs';
import { cancellationSignal } from '@temporalio/activity';
import { writeBlobJson } from '../core/blob-store';
import { jobInternalKey, jobOutputKey, jobOutputPrefix, jobResultsKey } from '../core/records';
import { downloadToFile } from '../providers/http/download';
import { DEFAULT_DPI, imageMetadata } from '../providers/image/metadata';
import { ocrImage, toTesseractLanguages } from '../providers/ocr/tesseract';
import { clientFailure } from './failures';
import type { ActivityDeps } from './deps';
import { applyTemplate } from './llm-ops';
import { localCopy } from './local-copy';

export function createImageActivities(deps: ActivityDeps) {
  const { store, config } = deps;
  const policy = { allowPrivate: config.loopbackOnly || config.ALLOW_PRIVATE_URLS };
  return {
    /** Downloads an image URL (SSRF-guarded, size-limited) into the job. */
    async fetchImage({ jobId, url }: { jobId: string; url: string }) {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'docproc-fetch-'));
      try {
        const r = await downloadToFile(url, path.join(dir, 'image'), { policy, maxBytes: 50 * 1024 * 1024, timeoutMs: 60_000, accept: ['image/'] }).catch(clientFailure);
        const ref = await store.put(jobInternalKey(jobId, 'input-image'), createReadStream(r.path), { mime: r.mime });
        return { key: ref.key, sha256: ref.sha256 };
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    },

    /** Reads the image's metadata from its header and recognises its text with tesseract. */
    async ocrImageBlob({ jobId, key, sha256, languages }: { jobId: string; key: string; sha256: string; languages?: string }) {
      const file = await localCopy(store, key, sha256, '.img');
      const meta = await imageMetadata(file).catch(clientFailure);
      const langs = toTesseractLanguages(languages ? languages.split(/[,+ ]+/) : undefined);
      const r = await ocrImage(file, { languages: langs, dpi: meta.dpi ?? 300, signal: cancellationSignal() });
      const metadata = { width: meta.width, height: meta.height, format: meta.format, dpi: meta.dpi ?? DEFAULT_DPI, confidence: Math.round(r.confidence) };
      await writeBlobJson(store, jobInternalKey(jobId, 'ocr.json'), { text: r.text, metadata });
      return { chars: r.text.length, metadata };
    },

    /** Applies the template (when given) and writes the results. */
    async finishImageOcr({ jobId, parameters }: { jobId: string; parameters: Record<string, unknown> }) {
      const { text: raw, metadata } = JSON.parse(
        await (async () => {
          const chunks: Buffer[] = [];
          for await (const c of await store.get(jobInternalKey(jobId, 'ocr.json'))) chunks.push(c as Buffer);
          return Buffer.concat(chunks).toString('utf8');
        })(),
      ) as { text: string; metadata: Record<string, unknown> };
      let text = raw;
      let output: Record<string, unknown> | undefined;
      if (typeof parameters.template === 'string' && parameters.template) {
        const r = await applyTemplate(deps.llm ?? null, { text, template: parameters.template, context: (parameters.context ?? {}) as Record<string, unknown> });
        text = r.text;
        output = r.output;
      }
      await store.put(jobOutputKey(jobId, 'result.md'), text, { mime: 'text/markdown; charset=utf-8' });
      const results = {
        structured_data: { extracted_text: text, metadata },
        assets: [jobOutputKey(jobId, 'result.md')],
        target_dir: jobOutputPrefix(jobId).slice(0, -1),
        ...(output ? { output, original_text: raw } : {}),
      };
      await writeBlobJson(store, jobResultsKey(jobId), results);
      return { results: { ...results, structured_data: { extracted_text: text.slice(0, 2000), metadata } } };
    },
  };
}
