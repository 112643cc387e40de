import type { Readable } from 'node:stream';
import path from 'node:path';
import { activityInfo, ApplicationFailure, cancellationSignal, heartbeat } from '@temporalio/activity';
import yazl from 'yazl';
import { readCache, writeCache } from '../core/stores/cache';
import { mediaSlots } from '../core/config/config';
import { PDF_PAGE_CACHE_OPERATION, pdfPageCacheKey } from '../core/stores/cache-keys';
import { countPdfPage } from '../core/runtime/metrics';
import { mapPool } from '../core/runtime/pool';
import { BlobNotFoundError, readBlobJson, writeBlobJson } from '../core/stores/blob-store';
import type { LlmInfo } from '../core/results/job-results';
import { idleCores, pdfPagesToRead } from '../core/results/pdf-text';
import { scratchAt } from '../core/stores/scratch';
import { jobInternalKey, jobOutputKey } from '../core/stores/records';
import { toTesseractLanguages } from '../providers/ocr/tesseract';
import type { PageLayout } from '../domain/pdf/markdown/types';
import { nativePage } from '../domain/pdf/markdown/pages';
import { readNativePages } from '../domain/pdf/native-pages';
import type { LlmUsage } from '../domain/engines/llm';
import { UsageRecorder } from '../providers/llm';
import type { ActivityDeps } from './deps';
import { jobInputBlob, urlDownload } from './input-blob';
import { combinedPage } from './pdf-combined';
import { createPageReaders } from './pdf-page-readers';
import { createPdfResults } from './pdf-results';
import type { ExtractionMethod } from '../core/jobs/job-defaults';
import type { ExternalOcrParams, PdfParams } from '../core/jobs/job-params';
import type { PageResult, PdfMeta } from './pdf-types';
import { fullParameters, heartbeating } from './job-steps';

export type { PageResult, PdfMeta } from './pdf-types';
export { idleCores } from '../core/results/pdf-text';

/** The parameters of the jobs that read a PDF: pdf jobs, and external OCR's preparation. */
type PdfInputParams = PdfParams | ExternalOcrParams;

const pageKey = (jobId: string, page: number) => jobInternalKey(jobId, `pages/${page}.json`);
const contentsKey = (jobId: string) => jobInternalKey(jobId, 'pages.json');

/**
 * Where `preparePdf` noted `use_cache: false` and `output_format: markdown` before the page groups carried them in
 * their input (`useCache`, `markdown`). Read only for a page group scheduled without them: one a run scheduled before
 * this change, whose `preparePdf` wrote the note. Absent (the default): the page cache is read, the text is plain.
 */
const optionsKey = (jobId: string) => jobInternalKey(jobId, 'pdf-options.json');

/** A small JSON blob, or null when it is absent or unreadable. */
async function readOptionalJson<T>(store: ActivityDeps['store'], key: string): Promise<T | null> {
  try {
    return await readBlobJson<T>(store, key);
  } catch (e) {
    if (e instanceof BlobNotFoundError || e instanceof SyntaxError) return null;
    throw e;
  }
}

export function createPdfActivities(deps: ActivityDeps) {
  const { store, config, pdf, ocr } = deps;
  // Vision OCR needs a model that reads images: not the local one (then vision_llm answers 503, combined keeps OCR).
  const llm = deps.llm?.describe().vision ? deps.llm : null;
  const engine = config.PDF_TEXT_ENGINE;
  const finishPdfJob = createPdfResults(deps);
  const scratch = scratchAt(config.scratchDir);

  /** The input: an upload's blob, or a file inside the allowed roots (contract §6), copied into the job. */
  // A `url` is downloaded into the job as any URL is (SSRF-guarded, at most MAX_UPLOAD_MB).
  const download = urlDownload(config, ['application/pdf']);
  const inputBlob = (jobId: string, p: Record<string, unknown>, signal: AbortSignal) =>
    jobInputBlob(store, config.inputRoots, jobId, p, {
      name: 'input.pdf',
      mime: 'application/pdf',
      download: { ...download, signal },
    });

  const { ocrPage, visionPage } = createPageReaders({ store, config, pdf, ocr, llm, scratch });

  /**
   * Runs `work` with the job's parameters, its input as a local scratch file (removed when the step ends), the
   * checked document with the pages to read, and the activity's cancellation signal. Heartbeats from the start: a
   * 500 MB input is copied into the job (a file named by path) and into scratch before any engine runs.
   */
  async function withInput<T, P extends PdfInputParams>(
    jobId: string,
    parameters: P,
    work: (d: {
      p: P;
      input: { key: string; sha256: string };
      pdfPath: string;
      meta: PdfMeta;
      signal: AbortSignal;
    }) => Promise<T>,
  ): Promise<T> {
    return heartbeating(async (signal) => {
      const p = await fullParameters(store, jobId, parameters);
      const input = await inputBlob(jobId, p, signal);
      return scratch.withBlobFile(store, input.key, input.sha256, '.pdf', async (pdfPath) =>
        work({ p, input, pdfPath, meta: await describeInput(pdfPath, p, signal), signal }),
      );
    });
  }

  /** The checked document with the pages to read. */
  async function describeInput(pdfPath: string, p: Record<string, unknown>, signal: AbortSignal): Promise<PdfMeta> {
    const desc = await pdf.describe(pdfPath, { signal });
    const n = desc.pageCount;
    const toRead = pdfPagesToRead(n, p, config.MAX_PDF_PAGES);
    if (!toRead.ok) throw ApplicationFailure.nonRetryable(toRead.message, toRead.code, toRead.details);
    const { pages } = toRead;
    return { pageCount: n, title: desc.title, author: desc.author, pages };
  }

  return {
    /**
     * Resolves and checks the document; answers its metadata, the pages to read and this worker's media slots (the
     * workflow keeps at most twice as many page groups of the job in flight: core/jobs/fanout.ts).
     */
    async preparePdf({ jobId, parameters }: { jobId: string; parameters: PdfInputParams }) {
      const d = await withInput(jobId, parameters, async (x) => x);
      return {
        inputKey: d.input.key,
        sha256: d.input.sha256,
        pageCount: d.meta.pageCount,
        title: d.meta.title,
        author: d.meta.author,
        pages: d.meta.pages,
        mediaSlots: mediaSlots(config),
      };
    },

    /**
     * The whole `native` read in one step: resolve and check the document, read the text layer of the range (in
     * parallel processes), and, with `finish`, write the results (nothing else to do: no template, no images).
     * Without `finish` the pages go to one blob that `finishPdf` assembles. Re-reading a text layer costs less
     * than caching it page by page, so a retry simply reads it again.
     */
    async readPdfText({ jobId, parameters, finish }: { jobId: string; parameters: PdfParams; finish: boolean }) {
      return withInput(jobId, parameters, async (d) => {
        // Thousands of pages take seconds: the step heartbeats meanwhile (withInput).
        // The text layer and the layouts (Markdown) at once: the code the API's direct answer runs.
        const read = async (): Promise<PageResult[]> => {
          const pages = await readNativePages(pdf, d.pdfPath, d.meta.pages, {
            signal: d.signal,
            parallel: idleCores(),
            markdown: d.p.output_format === 'markdown',
          });
          countPdfPage('native', d.meta.pages.length);
          return pages;
        };
        if (finish)
          return {
            meta: d.meta,
            results: await finishPdfJob({
              jobId,
              parameters: d.p,
              meta: d.meta,
              sha256: d.input.sha256,
              llm: [],
              contents: read,
            }),
          };
        await writeBlobJson(store, contentsKey(jobId), await read());
        return { meta: d.meta, inputKey: d.input.key, sha256: d.input.sha256, contentsKey: contentsKey(jobId) };
      });
    },

    /**
     * Reads a group of pages with the requested method. Each page's text goes to the blob store (not history) and
     * to the page cache (content hash + method + languages), so a retry, a crash or a restart reuses it; the
     * heartbeat carries the cursor. With `use_cache: false` the page cache is not read (it is still written); the
     * job's own pages from an earlier attempt or run are reused all the same.
     */
    async extractPdfPages(input: {
      jobId: string;
      inputKey: string;
      sha256: string;
      pages: number[];
      method: ExtractionMethod;
      languages?: string;
      /**
       * The job's `use_cache` and `output_format === 'markdown'` (the workflow passes them from the job's parameters).
       * Absent in a group scheduled before they were passed: then the note `preparePdf` wrote then is read.
       */
      useCache?: boolean;
      markdown?: boolean;
    }) {
      const { jobId, pages, method } = input;
      const signal = cancellationSignal();
      // Only OCR needs the languages installed (422 language_not_installed, never a quiet fallback).
      const languages =
        method === 'local_ocr' || method === 'combined'
          ? await ocr.languagesFor(input.languages)
          : toTesseractLanguages(input.languages ? input.languages.split(/[,+ ]+/) : undefined);
      const usages: LlmUsage[] = [];
      const summary: { page: number; method: string; chars: number; reused: boolean }[] = [];
      // The document as a scratch file, shared with this worker's other page groups of it and removed after the last.
      // Heartbeats from the start (copying a large document comes first) and once a page with its cursor.
      await heartbeating(() =>
        scratch.withBlobFile(store, input.inputKey, input.sha256, '.pdf', async (pdfPath) => {
          const options =
            input.useCache === undefined || input.markdown === undefined
              ? await readOptionalJson<{ use_cache?: boolean; output_format?: string }>(store, optionsKey(jobId))
              : null;
          const useCache = input.useCache ?? options?.use_cache !== false;
          const markdown = input.markdown ?? options?.output_format === 'markdown';
          let texts: Map<number, string> | undefined;
          let layouts: Map<number, PageLayout> | undefined;
          let imagePages: Set<number> | undefined;
          // A page's two blob writes (page cache, job page) run while the next page is read: for the text layer they
          // cost as much as reading the page. Every write is awaited before the activity ends, also when it fails, so
          // a retry finds the pages already read; the first failed write fails the activity.
          const writes: Promise<unknown>[] = [];
          let writeError: unknown;
          const write = (w: Promise<unknown>) => writes.push(w.catch((e: unknown) => (writeError ??= e)));
          try {
            for (const page of pages) {
              const ck = pdfPageCacheKey(
                input.sha256,
                { page, method, languages, engine, markdown },
                llm?.describe().model,
              );
              let r = useCache
                ? await readCache<PageResult>(store, PDF_PAGE_CACHE_OPERATION, ck)
                : await readOptionalJson<PageResult>(store, pageKey(jobId, page));
              const reused = r !== null;
              if (!r) {
                if (method === 'native' || method === 'combined') {
                  if (!texts)
                    [texts, layouts] = await Promise.all([
                      pdf.readPageTexts(pdfPath, pages, { signal }),
                      markdown ? pdf.readPageLayouts(pdfPath, pages, { signal }) : undefined,
                    ]);
                  const text = texts.get(page) ?? '';
                  r = nativePage(page, text, layouts?.get(page));
                  if (method === 'combined')
                    r = await combinedPage(r, {
                      // One pdfimages call tells it for the whole group.
                      paintsImage: async () =>
                        (imagePages ??= await pdf.pagesWithImages(pdfPath, pages, { signal })).has(page),
                      ocr: () => ocrPage(pdfPath, page, languages, signal, markdown),
                      vision: llm ? () => visionPage(jobId, pdfPath, page, signal, usages) : undefined,
                    });
                } else if (method === 'local_ocr') r = await ocrPage(pdfPath, page, languages, signal, markdown);
                else r = await visionPage(jobId, pdfPath, page, signal, usages);
                write(writeCache(store, PDF_PAGE_CACHE_OPERATION, ck, r));
              }
              write(writeBlobJson(store, pageKey(jobId, page), r));
              summary.push({ page, method: r.method, chars: r.text.length, reused });
              if (!reused) countPdfPage(r.method);
              heartbeat({ page });
            }
          } finally {
            await Promise.all(writes);
          }
          if (writeError) throw writeError;
        }),
      );
      const recorder = new UsageRecorder();
      for (const u of usages) recorder.record(u);
      return { pages: summary, llm: recorder.summary(), attempt: activityInfo().attempt };
    },

    /**
     * Renders the pages as PNG into a ZIP in the job's output: `images.zip` (includeImages: page renders plus the
     * images embedded in those pages, under `embedded/`) or `pages.zip` (external OCR: page renders only).
     */
    async renderPdfImages({
      jobId,
      inputKey,
      sha256,
      pages,
      archive = 'images.zip',
    }: {
      jobId: string;
      inputKey: string;
      sha256: string;
      pages: number[];
      archive?: string;
    }) {
      // Heartbeats throughout: the document's scratch copy, each page's render and the archive's upload (hundreds of
      // MB).
      return heartbeating((signal) =>
        scratch.withBlobFile(store, inputKey, sha256, '.pdf', (pdfPath) =>
          scratch.withDir('images-', async (dir) => {
            const zip = new yazl.ZipFile();
            const names: string[] = [];
            for (const page of pages) {
              const png = await pdf.renderPagePng(
                pdfPath,
                page,
                path.join(dir, `page-${String(page).padStart(4, '0')}.png`),
                150,
                { signal, maxPixels: config.MAX_IMAGE_PIXELS },
              );
              names.push(path.basename(png));
              zip.addFile(png, path.basename(png), { compress: false });
              heartbeat({ page });
            }
            if (archive === 'images.zip' && pages.length) {
              // The pictures embedded in those pages, next to the page renders.
              const embedded = await pdf.extractEmbeddedImages(
                pdfPath,
                pages[0],
                pages[pages.length - 1],
                path.join(dir, 'embedded'),
                {
                  signal,
                  // Count, size and disk bounded: past a limit the job fails 422 with the limit in its details.
                  limits: {
                    maxImages: config.MAX_EMBEDDED_IMAGES,
                    maxImagePixels: config.MAX_IMAGE_PIXELS,
                    maxBytes: config.MAX_EMBEDDED_IMAGES_MB * 1024 * 1024,
                  },
                },
              );
              for (const f of embedded) {
                const name = `embedded/${path.basename(f)}`;
                names.push(name);
                zip.addFile(f, name, { compress: false });
              }
            }
            zip.end();
            await store.put(jobOutputKey(jobId, archive), zip.outputStream as unknown as Readable, {
              mime: 'application/zip',
            });
            return { archive, image_paths: names };
          }),
        ),
      );
    },

    /**
     * Assembles the text, applies the template and writes the results (or the cached result). Reads every page and
     * the images archive (streamed into the results as Base64): minutes for a large document, heartbeating throughout.
     */
    async finishPdf(input: {
      jobId: string;
      parameters: PdfParams;
      meta: PdfMeta;
      images?: { archive: string; image_paths: string[] };
      /** What each page group's language model calls cost (UsageRecorder.summary()). */
      llm: LlmInfo[];
      /** All pages in one blob (`readPdfText`); without it, one blob per page (`extractPdfPages`). */
      contentsKey?: string;
      /** The document's sha256, for the result cache (absent in jobs scheduled before the cache existed). */
      sha256?: string;
    }) {
      const { jobId, meta } = input;
      const contents = () =>
        input.contentsKey
          ? readBlobJson<PageResult[]>(store, input.contentsKey)
          : // Many small reads (one per page): 16 at a time, in page order.
            mapPool(meta.pages, 16, (page) => readBlobJson<PageResult>(store, pageKey(jobId, page)));
      return heartbeating(async () => {
        const p = await fullParameters(store, jobId, input.parameters);
        return {
          results: await finishPdfJob({
            jobId,
            parameters: p,
            meta,
            sha256: input.sha256,
            images: input.images,
            llm: input.llm,
            contents,
          }),
        };
      });
    },
  };
}
