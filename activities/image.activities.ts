import path from 'node:path';
import { createReadStream } from 'node:fs';
import { readBlobJson, writeBlobJson } from '../core/stores/blob-store';
import type { ImageOcrParams } from '../core/jobs/job-params';
import { type JobFields, resultPreview, writeJobResults } from '../core/results/job-results';
import {
  cachedImageOcr,
  entryMarkdown,
  imageMarkdown,
  imageOcrAnswer,
  imageOcrKey,
  rememberImageOcr,
  type ImageMarkdown,
} from '../capabilities/image-ocr';
import { jobInternalKey, jobOutputKey, jobOutputPrefix } from '../core/stores/records';
import { scratchAt } from '../core/stores/scratch';
import type { ImageOcrMetadata } from '../core/results/result-schemas-media';
import { downloadToFile } from '../providers/http/download';
import { checkPixelBudget } from '../core/jobs/input-budgets';
import { DEFAULT_DPI, imageMetadata } from '../providers/image/metadata';
import type { ActivityDeps } from './deps';
import { applyTemplate, templateNotFound } from './text-operations';
import { jobModel } from './model-journal';
import { heartbeating } from './job-steps';
import { outboundPolicy } from '../providers/http/ssrf';

/** What the OCR step hands to `finishImageOcr` (under the job): the text, or the cached result, and the cache key. */
interface OcrStep {
  text: string;
  metadata: ImageOcrMetadata;
  cacheKey?: string;
  /** `text` is the cached result (template already applied). */
  fromCache?: boolean;
  /** With output_format=markdown: the image's Markdown and blocks. */
  md?: ImageMarkdown;
}
const ocrKey = (jobId: string) => jobInternalKey(jobId, 'ocr.json');

export function createImageActivities(deps: ActivityDeps) {
  const { store, config, ocr } = deps;
  const policy = outboundPolicy(config);
  const scratch = scratchAt(config.scratchDir);

  /**
   * The result-cache key of this image under these parameters (capabilities/image-ocr.ts, as the API computes it); a
   * template that does not exist fails non-retryable with TEMPLATE_NOT_FOUND.
   */
  async function resultCacheKey(sha256: string, p: Record<string, unknown>): Promise<string> {
    const key = await imageOcrKey(sha256, p, { model: deps.llm?.describe().model });
    if (key === null) throw templateNotFound(p.template);
    return key;
  }
  return {
    /** Downloads an image URL (SSRF-guarded, size-limited) into the job, heartbeating while the bytes come. */
    async fetchImage({ jobId, url }: { jobId: string; url: string }) {
      return heartbeating((signal) =>
        scratch.withDir('fetch-', async (dir) => {
          const r = await downloadToFile(url, path.join(dir, 'image'), {
            policy,
            maxBytes: 50 * 1024 * 1024,
            timeoutMs: 60_000,
            signal,
            accept: ['image/'],
          });
          const ref = await store.put(jobInternalKey(jobId, 'input-image'), createReadStream(r.path), {
            mime: r.mime,
            sha256: r.sha256,
          });
          return { key: ref.key, sha256: ref.sha256 };
        }),
      );
    },

    /**
     * Reads the image's metadata from its header and recognises its text with tesseract. With the job's
     * `parameters` (absent in jobs scheduled before the result cache), a cached result for the same image, languages
     * and template answers instead, unless `use_cache` is false; `finishImageOcr` then writes it as the results.
     */
    async ocrImageBlob({
      jobId,
      key,
      sha256,
      languages,
      parameters,
    }: {
      jobId: string;
      key: string;
      sha256: string;
      languages?: string;
      parameters?: ImageOcrParams;
    }) {
      const cacheKey = parameters ? await resultCacheKey(sha256, parameters) : undefined;
      const hit =
        cacheKey && parameters?.use_cache !== false ? await cachedImageOcr(store, cacheKey, { count: true }) : null;
      if (hit) {
        await writeBlobJson(store, ocrKey(jobId), {
          text: hit.extracted_text,
          metadata: hit.metadata,
          cacheKey,
          fromCache: true,
          md: entryMarkdown(hit),
        } satisfies OcrStep);
        return { chars: hit.extracted_text.length, metadata: hit.metadata, fromCache: true };
      }
      // Heartbeats from the scratch copy on; tesseract can take a minute on a big scan, and a cancel reaches it and
      // kills it.
      const { meta, r } = await heartbeating((signal) =>
        scratch.withBlobFile(store, key, sha256, '.img', async (file) => {
          const meta = await imageMetadata(file);
          // Checked from the header, before tesseract decodes a single pixel.
          checkPixelBudget(meta, config.MAX_IMAGE_PIXELS);
          const langs = await ocr.languagesFor(languages);
          return { meta, r: await ocr.recognize(file, { languages: langs, dpi: meta.dpi ?? 300, signal }) };
        }),
      );
      const metadata = {
        width: meta.width,
        height: meta.height,
        format: meta.format,
        dpi: meta.dpi ?? DEFAULT_DPI,
        confidence: Math.round(r.confidence),
        ...(r.rotation ? { rotation: r.rotation } : {}),
      };
      const md =
        parameters?.output_format === 'markdown'
          ? imageMarkdown(r.layout ?? { width: meta.width, height: meta.height, words: [] }, metadata.dpi)
          : undefined;
      await writeBlobJson(store, ocrKey(jobId), { text: r.text, metadata, cacheKey, md } satisfies OcrStep);
      return { chars: r.text.length, metadata, fromCache: false };
    },

    /** Applies the template (when given and the result is not cached), writes the results and caches a fresh one. */
    async finishImageOcr({ jobId, parameters }: { jobId: string; parameters: ImageOcrParams }) {
      // The results (and the result cache entry) are written with heartbeats: a large text on a slow store takes a
      // while.
      return heartbeating(async () => {
        const ocr = await readBlobJson<OcrStep>(store, ocrKey(jobId));
        let text = ocr.text;
        if (!ocr.fromCache && typeof parameters.template === 'string' && parameters.template) {
          const r = await applyTemplate(jobModel(deps.llm, store, jobId), {
            text,
            template: parameters.template,
            context: (parameters.context ?? {}) as Record<string, unknown>,
          });
          text = r.text;
        }
        await store.put(jobOutputKey(jobId, 'result.md'), text, { mime: 'text/markdown; charset=utf-8' });
        const data = imageOcrAnswer(text, ocr.metadata, ocr.md, parameters);
        const job: JobFields = {
          structured_data: data,
          assets: [jobOutputKey(jobId, 'result.md')],
          target_dir: jobOutputPrefix(jobId).slice(0, -1),
          from_cache: ocr.fromCache === true,
        };
        await writeJobResults(store, jobId, data, job);
        // Every fresh success goes to the result cache (use_cache=false skips reading it, not writing it).
        if (!ocr.fromCache && ocr.cacheKey) await rememberImageOcr(store, ocr.cacheKey, data);
        return { results: resultPreview(job) };
      });
    },
  };
}
