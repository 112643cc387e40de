import { BlobNotFoundError, readBlobJson, writeBlobJson } from '../core/stores/blob-store';
import type { CacheRef } from '../core/stores/cache';
import { cachedPdf, countPdfLookup, pdfKey, rememberJobPdf } from '../capabilities/pdf';
import type { PdfParams } from '../core/jobs/job-params';
import {
  resultPreview,
  writeJobResults,
  type JobFields,
  type LlmInfo,
  type ResultPreview,
  type StoredJobFields,
} from '../core/results/job-results';
import { joinPageTexts, pdfPageEntry, pdfResult, type PdfResult } from '../core/results/pdf-text';
import { jobFieldsKey, jobOutputKey, jobOutputPrefix, jobResultsKey } from '../core/stores/records';
import type { ActivityDeps } from './deps';
import { applyTemplate } from './text-operations';
import { jobModel } from './model-journal';
import { pagesMarkdown } from '../domain/pdf/markdown/pages';
import type { PageResult, PdfMeta } from './pdf-types';
import { documentChunks } from '../capabilities/chunks';
import { documentGrounding } from '../capabilities/grounding';
import type { JobGrounding } from '../core/results/result-schemas-chunks';

/** The page renders' archive of a job (`renderPdfImages`). */
export interface PdfImages {
  archive: string;
  image_paths: string[];
}

/** What the last step of a pdf job knows: the document, how its pages are read, what the model calls cost. */
export interface PdfFinish {
  jobId: string;
  parameters: PdfParams;
  meta: PdfMeta;
  /** The document's sha256, for the result cache (absent in jobs scheduled before the cache existed). */
  sha256?: string;
  images?: PdfImages;
  llm: LlmInfo[];
  /** Reads the pages; not called when the result comes from the cache. */
  contents: () => Promise<PageResult[]>;
}

const NO_LLM: LlmInfo = { total_tokens: 0, total_cost: 0, requests: [] };

/**
 * The end of every pdf job: the result cache is read (unless `use_cache` is false), else the pages are joined and
 * the template applied; `result.md` and the results (the `/api/pdf/process` data and the job fields) are written,
 * and a fresh result goes to the cache. Answers the small preview the workflow keeps.
 */
export function createPdfResults(deps: ActivityDeps) {
  const { store, config } = deps;
  const llm = deps.llm ?? null;

  /** The pages joined, the template applied, the result built by the one PDF builder (`pdfResult`). */
  async function assemble(f: PdfFinish, contents: PageResult[]): Promise<{ result: PdfResult; md: string }> {
    const { jobId, parameters: p, meta } = f;
    let text = joinPageTexts(contents);
    const requests = f.llm.flatMap((l) => l.requests);
    const md = p.output_format === 'markdown' ? pagesMarkdown(contents, { tableFormat: p.table_format }) : undefined;
    // The pages as the Markdown holds them, with their blocks' boxes: where chunks and grounded values point.
    const mdParts =
      md && contents.map((c, i) => ({ page: c.page, text: md.pages[i].markdown, blocks: md.pages[i].blocks }));
    let grounding: JobGrounding | undefined;
    // The parameters as the API validated them (core/jobs/job-params-media.ts `pdfParams`): typed, not checked again.
    if (p.template) {
      // Grounded values point into the Markdown when there is one (its blocks have boxes), else into the text.
      const source = p.grounding && md ? md.markdown : text;
      const r = await applyTemplate(jobModel(llm, store, jobId), {
        text: source,
        template: p.template,
        context: p.context ?? {},
        target_language: p.source_language,
        grounding: p.grounding,
      });
      grounding = documentGrounding(r.output, source, p.grounding && mdParts ? mdParts : contents);
      text = r.text;
      for (const u of r.usages)
        requests.push({ model: u.model, purpose: u.purpose, tokens: u.tokens, duration_ms: u.duration_ms });
    }
    const images = f.images;
    // Chunks (contract §14) of the Markdown with its blocks' pages and boxes, or of the text with its pages (a
    // template's answer is not the pages' text: its chunks name none).
    const chunks = documentChunks(md?.markdown ?? text, mdParts ?? (p.template ? [] : contents), p);
    const result = pdfResult(
      p.document_format ? { ...meta, format: p.document_format } : meta,
      contents.map((c, i) => pdfPageEntry(c, md?.pages[i])),
      {
        text,
        markdown: md?.markdown,
        chunks,
        grounding,
        images: images ? { filename: `${jobId}-images.zip`, imagePaths: images.image_paths } : undefined,
        job: {
          assets: [jobOutputKey(jobId, 'result.md'), ...(images ? [jobOutputKey(jobId, images.archive)] : [])],
          target_dir: jobOutputPrefix(jobId).slice(0, -1),
          llm_info: {
            total_tokens: f.llm.reduce((a, l) => a + l.total_tokens, 0),
            total_cost: f.llm.reduce((a, l) => a + l.total_cost, 0),
            requests,
          },
        },
      },
    );
    return { result, md: md?.markdown ?? text };
  }

  /**
   * A hit on an entry that points at an earlier job's results: its `result.md` and results are copied as bytes
   * (streamed, never parsed), with this job's own fields. Null when that job is gone (swept): then it is a miss.
   */
  async function copyHit(jobId: string, ref: CacheRef): Promise<ResultPreview | null> {
    const copy = async (from: string, to: string, mime: string) => store.put(to, await store.get(from), { mime });
    try {
      const stored = await readBlobJson<StoredJobFields>(store, ref.fields);
      const assets = [jobOutputKey(jobId, 'result.md')];
      const target_dir = jobOutputPrefix(jobId).slice(0, -1);
      const job: JobFields = { ...stored.job, assets, target_dir, llm_info: NO_LLM, from_cache: true };
      await copy(ref.files['result.md'], assets[0], 'text/markdown; charset=utf-8');
      await copy(ref.data, jobResultsKey(jobId), 'application/json');
      await writeBlobJson(store, jobFieldsKey(jobId), { job, refs: stored.refs } satisfies StoredJobFields);
      return { ...ref.preview, assets, target_dir, from_cache: true };
    } catch (e) {
      if (e instanceof BlobNotFoundError) return null;
      throw e;
    }
  }

  return async function finishPdfJob(f: PdfFinish): Promise<ResultPreview> {
    const { jobId, parameters: p } = f;
    const key = f.sha256
      ? pdfKey(f.sha256, p, { textEngine: config.PDF_TEXT_ENGINE, visionModel: llm?.describe().visionModel })
      : null;
    const useCache = key !== null && p.use_cache !== false;
    const ref = useCache ? await cachedPdf(store, key) : null;
    const copied = ref ? await copyHit(jobId, ref) : null;
    if (useCache) countPdfLookup(copied !== null);
    if (copied) return copied;
    const { result, md } = await assemble(f, await f.contents());
    const { data, job } = result;
    const images = f.images;
    await Promise.all([
      store.put(jobOutputKey(jobId, 'result.md'), md, { mime: 'text/markdown; charset=utf-8' }),
      // The archive's Base64 (spec: `images_archive_data`) is streamed from its blob into the results blob as they
      // are written (writeJobResults `base64`): neither the archive nor its Base64 is ever in memory.
      writeJobResults(
        store,
        jobId,
        data,
        job,
        images ? { field: 'images_archive_data', blobKey: jobOutputKey(jobId, images.archive) } : undefined,
      ),
    ]);
    const preview = resultPreview(job);
    // Every fresh success goes to the result cache (use_cache=false skips reading it, not writing it), as a
    // reference to this job's results: the text is stored once.
    if (key) await rememberJobPdf(store, key, jobId, preview);
    return preview;
  };
}
