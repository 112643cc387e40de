import os from 'node:os';
import { packJobFields, resultPreview, type JobFields, type ResultPreview, type StoredJobFields } from './job-results';
import { pageRange } from '../jobs/page-range';
import type { PdfMetadata, PdfResultData, PdfTextContent } from './result-schemas-pdf';
import { pdfData } from './result-shapes';

/**
 * What the two readers of a PDF's text layer share (issue 24): the `readPdfText` activity and the API's direct answer
 * to a small synchronous `native` request (api/services/direct-pdf.ts). The same checks, the same split across
 * processes, the same text and metadata, so both give one answer.
 */

/**
 * How many processes may read parts of a text layer at once: the cores the last minute left idle (1-minute load
 * average), at least one. Split across processes, a 200-page layer reads in about half the time on idle cores; on
 * busy ones each part waits for a core and pays its own start and document parse (measured on 2 cores under load
 * 10: one process 75 ms, two 109 ms, median of 7).
 */
export function idleCores(cores = os.availableParallelism(), load1 = os.loadavg()[0]): number {
  return Math.max(1, Math.min(cores, Math.round(cores - load1)));
}

/** A refusal of the document or the range, as the contract's `VALIDATION_ERROR` (code, message, details). */
export interface PdfPagesRefusal {
  ok: false;
  code: 'VALIDATION_ERROR';
  message: string;
  details: Record<string, unknown>;
}

/**
 * The pages to read of a document of `pageCount` pages: at most `maxPages` (`MAX_PDF_PAGES`) pages in the document,
 * and the requested range (`page_start`, `page_end`) inside it. The caller throws the refusal its own way (the
 * activity a non-retryable failure, the API an `AppError`): the same code, message and details.
 */
export function pdfPagesToRead(
  pageCount: number,
  p: { page_start?: unknown; page_end?: unknown },
  maxPages: number,
): { ok: true; pages: number[] } | PdfPagesRefusal {
  const n = pageCount;
  if (n > maxPages)
    return {
      ok: false,
      code: 'VALIDATION_ERROR',
      message: `The PDF has ${n} pages; at most ${maxPages} are processed.`,
      details: { limit: maxPages, page_count: n },
    };
  const range = pageRange(p, n);
  if (!range.ok)
    return {
      ok: false,
      code: 'VALIDATION_ERROR',
      message: `The page range ${String(p.page_start ?? 1)}-${String(p.page_end ?? n)} lies outside the document's ${n} pages.`,
      details: { issues: [range.issue], page_count: n },
    };
  const { first, last = n } = range;
  return { ok: true, pages: Array.from({ length: last - first + 1 }, (_, i) => first + i) };
}

/** The document's text: each page's text trimmed, empty pages left out, pages separated by a blank line. */
export function joinPageTexts(pages: readonly { text: string }[]): string {
  return pages
    .map((c) => c.text.trim())
    .filter(Boolean)
    .join('\n\n');
}

/** A page as a PDF result's `metadata.text_contents[]` entry needs it. */
export interface PdfPageRead {
  page: number;
  text: string;
  method: string;
  rotation?: number;
}

/**
 * A page's `metadata.text_contents[]` entry: page, text, method, the rotation of a turned scan, and with
 * `output_format=markdown` the page's Markdown, quality and blocks (`md`, contract §13). One builder for the job and the API's direct answer,
 * so both give the same entries (key order included).
 */
export function pdfPageEntry(
  c: PdfPageRead,
  md?: { markdown: string; quality: PdfTextContent['quality']; blocks?: PdfTextContent['blocks'] },
): PdfTextContent {
  return {
    page: c.page,
    text: c.text,
    method: c.method,
    ...(c.rotation ? { rotation: c.rotation } : {}),
    ...(md ? { markdown: md.markdown, quality: md.quality, ...(md.blocks ? { blocks: md.blocks } : {}) } : {}),
  };
}

/** The parts of a PDF result besides the pages: what a job adds (the template's text, page renders, its own fields). */
export interface PdfResultExtras {
  /** The Markdown of the pages (`output_format=markdown`). */
  markdown?: string;
  /** The text when a template rewrote it; else the pages' text joined ({@link joinPageTexts}). */
  text?: string;
  /** The page renders: the archive's file name (its Base64 is streamed in when stored) and the image paths. */
  images?: { filename: string; imagePaths: string[] };
  /** With chunking=true (contract §14): the chunks and how they were cut (capabilities/chunks.ts). */
  chunks?: Pick<PdfResultData, 'chunks' | 'chunking'>;
  /** With a template and grounding=true (contract §14): the fields, their sources and those the text does not hold. */
  grounding?: Pick<PdfResultData, 'template_fields' | 'template_sources' | 'unsupported_fields'>;
  /** A job's own fields; a result read without a job has none (a hit in a job replaces them with its own). */
  job?: Pick<JobFields, 'assets' | 'target_dir' | 'llm_info'>;
}

/** A PDF result: the endpoint's `data` and the job fields, built once for the job and the API's direct answer. */
export interface PdfResult {
  data: PdfResultData;
  job: JobFields;
}

const NO_LLM = { total_tokens: 0, total_cost: 0, requests: [] };

/**
 * The one builder of a PDF result (`/api/pdf/process` `data` and the job fields), from the document's facts and its
 * pages' entries ({@link pdfPageEntry}): the job's assembly (activities/pdf-results.ts) and the API's direct answer
 * (capabilities/pdf.ts `nativeTextResult`, the Markdown thread) call it, so both give the same bytes.
 */
export function pdfResult(
  meta: { pageCount: number; title: string; author: string; format?: string },
  entries: PdfTextContent[],
  extras: PdfResultExtras = {},
): PdfResult {
  const text = extras.text ?? joinPageTexts(entries);
  const metadata = pdfMetadata(meta, entries, extras.images?.imagePaths ?? []);
  // The archive's Base64 (spec: `images_archive_data`) is streamed from its blob when the results are written.
  const archive = extras.images ? { filename: extras.images.filename, data: '' } : null;
  const data: PdfResultData = {
    ...pdfData(text, metadata, archive, extras.markdown),
    ...extras.chunks,
    ...extras.grounding,
  };
  const job: JobFields = {
    structured_data: { extracted_text: text, metadata },
    assets: extras.job?.assets ?? [],
    target_dir: extras.job?.target_dir ?? '',
    llm_info: extras.job?.llm_info ?? NO_LLM,
    from_cache: false,
  };
  return { data, job };
}

/**
 * A result read without a job (the API's direct answer, issue 24), as the job path stores one: the endpoint's `data`
 * as JSON bytes (streamed as they are), the job fields packed against it (`packJobFields`: references into `data`),
 * the preview a cache entry carries, and `result.md` (the Markdown when asked for, else the text).
 */
export interface DirectPdfResult {
  data: Uint8Array;
  fields: StoredJobFields;
  preview: Pick<ResultPreview, 'structured_data'>;
  md: string;
}

/** The {@link DirectPdfResult} of a document's pages: {@link pdfResult}, serialized as the job stores its results. */
export function directPdfResult(
  meta: { pageCount: number; title: string; author: string },
  entries: PdfTextContent[],
  markdown?: string,
  chunks?: PdfResultExtras['chunks'],
): DirectPdfResult {
  const { data, job } = pdfResult(meta, entries, { markdown, chunks });
  return {
    data: Buffer.from(JSON.stringify(data)),
    fields: packJobFields(data, job),
    preview: { structured_data: resultPreview(job).structured_data },
    md: markdown ?? job.structured_data.extracted_text,
  };
}

/** The `metadata` of a PDF result (`/api/pdf/process` `data.metadata`), its page entries built by the caller. */
export function pdfMetadata(
  meta: { pageCount: number; title: string; author: string; format?: string },
  textContents: PdfTextContent[],
  imagePaths: string[],
): PdfMetadata {
  return {
    page_count: meta.pageCount,
    author: meta.author,
    title: meta.title,
    // A document job's rendered document (contract §12): the format it was detected as.
    ...(meta.format ? { format: meta.format } : {}),
    text_contents: textContents,
    image_paths: imagePaths,
  };
}
