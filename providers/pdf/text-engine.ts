/**
 * The PDF text layer behind one interface, from either engine:
 * - `poppler` (the default): `pdfinfo` + `pdftotext` processes, about 0.5 ms a page, a range split across
 *   processes; killable on timeout. Reading order is poppler's: columns and blocks, paragraphs kept as blank lines.
 * - `pdfjs`: pdf.js with the layout rules of `layout.ts` (about 1.5–3.6 ms a page): keeps label/value rows of forms
 *   on one line and a footer that spans two columns after both. It runs on a pool of worker threads
 *   (`pdfjs-thread.ts`), which keeps pdf.js's polyfills out of this isolate; a thread is terminated on timeout or
 *   abort and ended when it outgrows its heap limit.
 */
import type { PdfEngine } from '../../domain/engines/pdf';
import type { PdfDescription } from '../../domain/pdf/description';
import { PdfError } from '../../domain/pdf/errors';
import { describeInThread, pageTextsInThread } from './pdfjs-thread';
import { contiguousRanges, fileHasPdfHeader, pdfInfo, pdfPageTexts } from './poppler';

export const PDF_TEXT_ENGINES = ['poppler', 'pdfjs'] as const;
export type PdfTextEngine = (typeof PDF_TEXT_ENGINES)[number];

export interface TextEngineOptions {
  signal?: AbortSignal;
  /** Processes that may read parts of a page range at once (poppler; default 1). */
  parallel?: number;
  /** Limit for opening the document in milliseconds (default 60 000). */
  timeoutMs?: number;
}

/**
 * Checks that the file is a readable PDF with pages and answers its page count, title and author.
 * Throws `PdfError`: `INVALID_FORMAT`/`not_pdf`, `UNPROCESSABLE_INPUT` with `encrypted`, `corrupt`, `empty`,
 * `timeout` or (pdfjs) `too_large`.
 */
export async function describePdf(
  pdfPath: string,
  engine: PdfTextEngine,
  opts: TextEngineOptions = {},
): Promise<PdfDescription> {
  if (!(await fileHasPdfHeader(pdfPath)))
    throw new PdfError('INVALID_FORMAT', 'not_pdf', 'The file is not a PDF (no %PDF header)');
  if (engine === 'pdfjs') return describeInThread(pdfPath, opts);
  const info = await pdfInfo(pdfPath, { signal: opts.signal, timeoutMs: opts.timeoutMs ?? 60_000 });
  if (info.pages < 1) throw new PdfError('UNPROCESSABLE_INPUT', 'empty', 'The PDF has no pages');
  return { pageCount: info.pages, title: info.title, author: info.author };
}

/**
 * The text of each asked page (1-based), '' for a page without a text layer. With `pdfjs` the whole call is limited
 * to `timeoutMs` plus a budget per page (see `pageTextsInThread`).
 */
export async function readPageTexts(
  pdfPath: string,
  pages: readonly number[],
  engine: PdfTextEngine,
  opts: TextEngineOptions = {},
): Promise<Map<number, string>> {
  if (engine === 'pdfjs') return pageTextsInThread(pdfPath, pages, opts);
  const texts = new Map<number, string>();
  for (const [first, last] of contiguousRanges(pages)) {
    const got = await pdfPageTexts(pdfPath, first, last, { signal: opts.signal, parallel: opts.parallel });
    got.forEach((t, i) => texts.set(first + i, t));
  }
  return texts;
}

/** `describe` and `readPageTexts` of the PDF engine (`createPdfEngine`) with `engine` chosen once. */
export function textLayer(engine: PdfTextEngine): Pick<PdfEngine, 'describe' | 'readPageTexts'> {
  return {
    describe: (pdfPath, opts) => describePdf(pdfPath, engine, opts),
    readPageTexts: (pdfPath, pages, opts) => readPageTexts(pdfPath, pages, engine, opts),
  };
}
