import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { ApplicationFailure } from '@temporalio/activity';
import yazl from 'yazl';
import { AppError } from '../core/errors';
import { withDefaults } from '../core/jobs/job-defaults';
import type { DocumentParams } from '../core/jobs/job-params';
import { pageRange } from '../core/jobs/page-range';
import { countCacheLookup } from '../core/runtime/metrics';
import { DOCUMENT_CACHE_OPERATION } from '../core/stores/cache-keys';
import { readBlobBuffer, readBlobJson, writeBlobJson } from '../core/stores/blob-store';
import { resultPreview, writeJobResults, type JobFields, type LlmInfo } from '../core/results/job-results';
import type { DocumentResultData } from '../core/results/result-schemas-document';
import { jobInternalKey, jobOutputKey, jobOutputPrefix } from '../core/stores/records';
import { scratchAt } from '../core/stores/scratch';
import {
  cachedDocument,
  documentAnswer,
  documentKey,
  documentReadLimits,
  isOnePart,
  rememberDocument,
} from '../capabilities/document';
import { detectFormat } from '../domain/documents/detect';
import {
  DEFAULT_READ_LIMITS,
  DocumentError,
  type DocBlock,
  type DocumentFormat,
  type DocumentModel,
} from '../domain/documents/model';
import { readDocument, UnsupportedDocumentError, type RoutedReader } from '../domain/documents/read';
import { supportedFormats } from '../domain/documents/readers';
import type { OfficeTarget } from '../domain/engines/office';
import type { ActivityDeps } from './deps';
import { jobInputBlob, urlDownload } from './input-blob';
import { fullParameters, heartbeating } from './job-steps';
import { jobModel } from './model-journal';
import { applyTemplate } from './text-operations';
import { documentGrounding } from '../capabilities/grounding';

/**
 * The document job's steps (contract §12): the file by its content, read from its own structure (the readers of
 * domain/documents; LibreOffice first for the binary formats), or handed to the pdf or imageocr pipeline (a PDF, an
 * image, and any document with `extraction_method=render`, whose PDF LibreOffice writes).
 */

/** The binary formats LibreOffice converts to the open XML format a reader reads. */
const OFFICE_CONVERSIONS: Partial<Record<DocumentFormat, OfficeTarget>> = {
  doc: 'docx',
  rtf: 'docx',
  xls: 'xlsx',
  ppt: 'pptx',
};

/** What `readDocumentFile` found: a result (written, or waiting for the template), or a PDF or an image to route. */
export type DocumentRead =
  | { kind: 'results'; results: ReturnType<typeof resultPreview>; format: DocumentFormat; parts: number }
  | { kind: 'template'; format: DocumentFormat; parts: number }
  | { kind: 'pdf'; fileKey: string; sha256: string; format: DocumentFormat }
  | { kind: 'image'; fileKey: string; sha256: string };

/** The read document's answer waiting for the template (`finishDocument`). */
const readKey = (jobId: string) => jobInternalKey(jobId, 'document.json');
const ARCHIVE = 'images.zip';

/** A reader's refusal as the contract's error: its code and status, `details.reason` (and the supported list). */
function documentFailure(e: DocumentError): AppError {
  if (e instanceof UnsupportedDocumentError) return new AppError('INVALID_FORMAT', e.message, e.details);
  return new AppError(e.code, e.message, { reason: e.reason });
}

export function createDocumentActivities(deps: ActivityDeps) {
  const { store, config } = deps;
  const office = deps.office ?? null;
  const scratch = scratchAt(config.scratchDir);
  // Any media type: the content decides the format, never the server's Content-Type.
  const download = urlDownload(config, []);
  const limits = documentReadLimits(config.MAX_UPLOAD_MB, DEFAULT_READ_LIMITS);
  /** The formats this worker reads: the readers', and the binary ones when LibreOffice is there. */
  const supported = (): DocumentFormat[] => [
    ...supportedFormats(),
    ...(office ? (Object.keys(OFFICE_CONVERSIONS) as DocumentFormat[]) : []),
  ];

  /** Converts with LibreOffice in scratch; answers the written file's bytes. */
  async function convert(bytes: Uint8Array, from: DocumentFormat, target: OfficeTarget, signal: AbortSignal) {
    if (!office)
      throw new AppError(
        'PROVIDER_NOT_CONFIGURED',
        `Reading ${from} needs LibreOffice, which this worker does not have (LIBREOFFICE_PATH).`,
        { format: from },
      );
    return scratch.withDir('office-', async (dir) => {
      const input = path.join(dir, `input.${from}`);
      await writeFile(input, bytes);
      const out = await office.convert(input, target, path.join(dir, 'out'), { signal });
      return readFile(out);
    });
  }

  /**
   * A PDF attached to an e-mail, read as the PDF path reads one (its text layer, page by page, at most MAX_PDF_PAGES
   * pages): its pages as the attachment's paragraphs. An image attachment is listed (OCR is the image endpoint's).
   */
  const attachedPdf =
    (signal: AbortSignal): RoutedReader =>
    async ({ format, bytes }) => {
      if (format !== 'pdf') return null;
      return scratch.withDir('attached-', async (dir) => {
        const file = path.join(dir, 'attachment.pdf');
        await writeFile(file, bytes);
        const desc = await deps.pdf.describe(file, { signal });
        const pages = Array.from({ length: Math.min(desc.pageCount, config.MAX_PDF_PAGES) }, (_, i) => i + 1);
        const texts = await deps.pdf.readPageTexts(file, pages, { signal, parallel: 1 });
        const blocks: DocBlock[] = pages.flatMap((page) =>
          (texts.get(page) ?? '')
            .split(/\n\s*\n/)
            .map((t) => t.replace(/\s+/g, ' ').trim())
            .filter(Boolean)
            .map((text) => ({ type: 'paragraph' as const, text })),
        );
        return [{ kind: 'attachment', blocks, attachment: { filename: '', format: 'pdf', size: bytes.byteLength } }];
      });
    };

  /** The document's model: its reader, after LibreOffice's conversion for a binary format. */
  async function readModel(bytes: Uint8Array, format: DocumentFormat, signal: AbortSignal): Promise<DocumentModel> {
    const target = OFFICE_CONVERSIONS[format];
    if (!target) {
      const read = await readDocument(bytes, limits, undefined, attachedPdf(signal));
      if (read.kind !== 'model') throw new Error(`a ${read.format} reached the document readers`);
      return read.model;
    }
    const read = await readDocument(await convert(bytes, format, target, signal), limits);
    if (read.kind !== 'model') throw new Error(`LibreOffice wrote a ${read.format} for ${target}`);
    return { ...read.model, format };
  }

  /** The model's images in the job's archive (`includeImages`), bounded as a PDF's embedded images are. */
  async function writeImages(jobId: string, model: DocumentModel): Promise<string[]> {
    const images = model.images.slice(0, config.MAX_EMBEDDED_IMAGES);
    const bytes = images.reduce((a, i) => a + i.data.byteLength, 0);
    if (model.images.length > config.MAX_EMBEDDED_IMAGES || bytes > config.MAX_EMBEDDED_IMAGES_MB * 1024 * 1024)
      throw new AppError('UNPROCESSABLE_INPUT', 'The document embeds more images than a job extracts.', {
        reason: 'too_many_images',
        limit: config.MAX_EMBEDDED_IMAGES,
        limit_mb: config.MAX_EMBEDDED_IMAGES_MB,
      });
    const zip = new yazl.ZipFile();
    for (const i of images) zip.addBuffer(Buffer.from(i.data), i.name, { compress: false });
    zip.end();
    await store.put(jobOutputKey(jobId, ARCHIVE), zip.outputStream as unknown as Readable, {
      mime: 'application/zip',
    });
    return images.map((i) => i.name);
  }

  /** Writes `result.md` and the results; a fresh success without template or images goes to the cache. */
  async function writeResults(
    jobId: string,
    data: DocumentResultData,
    opts: { fromCache: boolean; cacheKey: string | null; llm?: LlmInfo },
  ) {
    const archive = data.images_archive_filename ? jobOutputKey(jobId, ARCHIVE) : undefined;
    const assets = [jobOutputKey(jobId, 'result.md'), ...(archive ? [archive] : [])];
    const job: JobFields = {
      structured_data: { extracted_text: data.extracted_text, metadata: data.metadata },
      assets,
      target_dir: jobOutputPrefix(jobId).slice(0, -1),
      ...(opts.llm ? { llm_info: opts.llm } : {}),
      from_cache: opts.fromCache,
    };
    await store.put(assets[0], data.markdown ?? data.extracted_text, { mime: 'text/markdown; charset=utf-8' });
    await writeJobResults(
      store,
      jobId,
      data,
      job,
      archive ? { field: 'images_archive_data', blobKey: archive } : undefined,
    );
    if (!opts.fromCache && opts.cacheKey) await rememberDocument(store, opts.cacheKey, data);
    return resultPreview(job);
  }

  return {
    /**
     * Resolves the input (an upload, a path inside INPUT_ROOTS, a URL downloaded SSRF-guarded) and decides by its
     * content: a PDF or an image goes to its pipeline; with `render`, LibreOffice writes the PDF the pdf pipeline
     * reads; else the document is read (LibreOffice first for DOC, XLS, PPT, RTF) and its results written, or kept
     * for the template step. Heartbeats throughout (a download, a conversion).
     */
    async readDocumentFile({
      jobId,
      parameters,
    }: {
      jobId: string;
      parameters: DocumentParams;
    }): Promise<DocumentRead> {
      return heartbeating(async (signal) => {
        const p = withDefaults('document', await fullParameters(store, jobId, parameters));
        const input = await jobInputBlob(store, config.inputRoots, jobId, p, {
          name: 'input',
          mime: 'application/octet-stream',
          download: { ...download, signal },
        });
        const bytes = await readBlobBuffer(store, input.key);
        try {
          const found = await detectFormat(bytes, limits, { filename: p.original_name ?? p.filename });
          if (found?.format === 'image') return { kind: 'image', fileKey: input.key, sha256: input.sha256 };
          if (found?.format === 'pdf') return { kind: 'pdf', fileKey: input.key, sha256: input.sha256, format: 'pdf' };
          if (!found || !supported().includes(found.format))
            throw new UnsupportedDocumentError(found?.format ?? null, supported());
          const format = found.format;
          if (p.extraction_method === 'render') {
            const pdf = await convert(bytes, format, 'pdf', signal);
            const key = jobInternalKey(jobId, 'rendered.pdf');
            const ref = await store.put(key, pdf, { mime: 'application/pdf' });
            return { kind: 'pdf', fileKey: key, sha256: ref.sha256, format };
          }
          const cacheKey = documentKey(input.sha256, p);
          if (cacheKey && p.use_cache !== false) {
            const hit = await cachedDocument(store, cacheKey);
            if (hit) {
              const results = await writeResults(jobId, hit, { fromCache: true, cacheKey });
              return { kind: 'results', results, format, parts: hit.metadata.page_count };
            }
          } else if (cacheKey) countCacheLookup(DOCUMENT_CACHE_OPERATION, false);
          const model = await readModel(bytes, format, signal);
          // The pages of a document read as one part are LibreOffice's to lay out: a range over them is `render`'s.
          if (isOnePart(model) && (p.page_start ?? 1) > 1)
            throw ApplicationFailure.nonRetryable(
              `A ${format} is read as one part from its structure; its pages are laid out by rendering it: ask for ` +
                'extraction_method=render to read a page range.',
              'VALIDATION_ERROR',
              {
                issues: [{ path: 'page_start', message: 'a page range of this format needs extraction_method=render' }],
              },
            );
          const range = pageRange(p, Math.max(1, model.parts.length));
          if (!range.ok)
            throw ApplicationFailure.nonRetryable(`${range.issue.message}.`, 'VALIDATION_ERROR', {
              issues: [range.issue],
              page_count: model.parts.length,
            });
          const images = p.includeImages ? await writeImages(jobId, model) : undefined;
          const data = documentAnswer(model, {
            markdown: p.output_format === 'markdown',
            tableFormat: p.table_format,
            first: range.first,
            last: range.last,
            images: images ? { filename: `${jobId}-images.zip`, imagePaths: images } : undefined,
            chunks: p,
          });
          if (p.template) {
            await writeBlobJson(store, readKey(jobId), data);
            return { kind: 'template', format, parts: model.parts.length };
          }
          const results = await writeResults(jobId, data, { fromCache: false, cacheKey });
          return { kind: 'results', results, format, parts: model.parts.length };
        } catch (e) {
          if (e instanceof DocumentError) throw documentFailure(e);
          throw e;
        }
      });
    },

    /** Applies the template to the read document's text and writes the results (the model asked when it needs one). */
    async finishDocument({ jobId, parameters }: { jobId: string; parameters: DocumentParams }) {
      return heartbeating(async () => {
        const p = await fullParameters(store, jobId, parameters);
        const data = await readBlobJson<DocumentResultData>(store, readKey(jobId));
        const r = await applyTemplate(jobModel(deps.llm ?? null, store, jobId), {
          text: data.extracted_text,
          template: String(p.template),
          context: (p.context ?? {}) as Record<string, unknown>,
          grounding: p.grounding,
        });
        // With grounding: each value's part, from the parts' texts in the document's text.
        const grounding = documentGrounding(r.output, data.extracted_text, data.metadata.text_contents);
        const llm: LlmInfo = {
          total_tokens: r.usages.reduce((a, u) => a + u.tokens, 0),
          total_cost: r.usages.reduce((a, u) => a + u.cost, 0),
          requests: r.usages.map((u) => ({
            model: u.model,
            purpose: u.purpose,
            tokens: u.tokens,
            duration_ms: u.duration_ms,
          })),
        };
        return {
          results: await writeResults(
            jobId,
            { ...data, extracted_text: r.text, ...grounding },
            { fromCache: false, cacheKey: null, llm },
          ),
        };
      });
    },
  };
}
