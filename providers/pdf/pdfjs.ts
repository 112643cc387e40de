/**
 * PDF text layer and metadata through pdf.js (the legacy build, which runs on Node 20). pdf.js runs in this
 * thread ("fake worker"); fonts come from the package's own standard font data, never from the system, and
 * no code is evaluated. Errors that come from the input are `PdfError`s with a contract code and reason.
 *
 * pdf.js is loaded on first use, not with this module: the legacy build's core-js polyfills replace
 * `JSON.stringify`, `JSON.parse` and `Array.prototype.push` and so switch off V8's fast paths for the rest of the
 * process (putting the functions back does not switch them on again). Measured: `JSON.stringify` of 1.2 MB of
 * results 2 ms before, 45 ms after. A worker on the default poppler engine never loads pdf.js.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import type { PDFDocumentProxy, TextItem, TextMarkedContent } from 'pdfjs-dist/types/src/display/api';
import { PdfError } from '../../domain/pdf/errors';
import { layoutText, type TextRun } from '../../domain/pdf/layout';
import type { PageDrawings } from '../../domain/pdf/drawings';
import { readPageDrawings } from './pdfjs-layout';

/** The document information of contract §6 (`metadata`), snake_case as the API returns it. */
export interface PdfMetadata {
  title: string;
  author: string;
  subject: string;
  keywords: string;
  creator: string;
  producer: string;
  /** ISO 8601, or null when absent or unreadable. */
  creation_date: string | null;
  modification_date: string | null;
  page_count: number;
  pdf_version: string;
  language: string | null;
}

/** The text of one page in reading order. */
export interface PageText {
  text: string;
  /** Number of characters (code points) in `text`. */
  chars: number;
}

/** An open PDF. Call `close()` when done: it frees pdf.js's page caches and parsed objects. */
export interface PdfDoc {
  readonly pageCount: number;
  metadata(): Promise<PdfMetadata>;
  /** Text of page `n` (1-based) in reading order; a page without a text layer gives `{ text: '', chars: 0 }`. */
  pageText(n: number): Promise<PageText>;
  /** Page `n`'s drawn rulings and bullet marks only (its operator list, no text). */
  pageDrawings(n: number): Promise<PageDrawings>;
  close(): Promise<void>;
}

export interface OpenPdfOptions {
  /** Limit for parsing the document, and for each page's text, in milliseconds (default 60 000). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let pdfjsModule: Promise<PdfJs> | undefined;

const loadPdfJs = (): Promise<PdfJs> => (pdfjsModule ??= import('pdfjs-dist/legacy/build/pdf.mjs'));

/** Directory of pdf.js's standard font data, as the file path with a trailing slash that Node's loader expects. */
const STANDARD_FONT_DATA_URL = (() => {
  const pkg = createRequire(import.meta.url).resolve('pdfjs-dist/package.json');
  return path.join(path.dirname(pkg), 'standard_fonts') + path.sep;
})();

/** True when the bytes carry a PDF header (`%PDF-`) in the first 1024 bytes, where readers look for it. */
export function hasPdfHeader(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1024));
  return head.includes('%PDF-', 0, 'latin1');
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new PdfError('UNPROCESSABLE_INPUT', 'timeout', `${what} took longer than ${ms} ms`));
    }, ms);
  });
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}

/** Maps a pdf.js loading failure to the contract's codes. */
function loadError(err: unknown): PdfError {
  if (err instanceof PdfError) return err;
  const name = (err as { name?: string } | null)?.name;
  if (name === 'PasswordException') {
    return new PdfError('UNPROCESSABLE_INPUT', 'encrypted', 'The PDF is encrypted and needs a password', {
      cause: err,
    });
  }
  return new PdfError('UNPROCESSABLE_INPUT', 'corrupt', 'The PDF is damaged and cannot be read', { cause: err });
}

const isTextItem = (item: TextItem | TextMarkedContent): item is TextItem => typeof (item as TextItem).str === 'string';

/** pdf.js text items as positioned runs: baseline origin from the text matrix, font size from its vertical scale. */
export function toRuns(items: readonly (TextItem | TextMarkedContent)[]): TextRun[] {
  const runs: TextRun[] = [];
  for (const item of items) {
    if (!isTextItem(item)) continue;
    const [, , c, d, e, f] = item.transform as number[];
    const size = Math.hypot(c, d) || item.height || 1;
    runs.push({ str: item.str, x: e, y: f, width: item.width, size, eol: item.hasEOL });
  }
  return runs;
}

const infoString = (v: unknown): string => (typeof v === 'string' ? v.replace(/\0/g, '').trim() : '');

function infoDate(pdfjs: PdfJs, v: unknown): string | null {
  if (typeof v !== 'string' || !v) return null;
  const date = pdfjs.PDFDateString.toDateObject(v);
  return date && !Number.isNaN(date.getTime()) ? date.toISOString() : null;
}

class PdfJsDoc implements PdfDoc {
  readonly pageCount: number;

  constructor(
    private readonly pdfjs: PdfJs,
    private readonly doc: PDFDocumentProxy,
    private readonly timeoutMs: number,
  ) {
    this.pageCount = doc.numPages;
  }

  async metadata(): Promise<PdfMetadata> {
    const { info } = await withTimeout(this.doc.getMetadata(), this.timeoutMs, 'Reading the PDF metadata', () => {});
    const i = info as Record<string, unknown>;
    return {
      title: infoString(i.Title),
      author: infoString(i.Author),
      subject: infoString(i.Subject),
      keywords: infoString(i.Keywords),
      creator: infoString(i.Creator),
      producer: infoString(i.Producer),
      creation_date: infoDate(this.pdfjs, i.CreationDate),
      modification_date: infoDate(this.pdfjs, i.ModDate),
      page_count: this.pageCount,
      pdf_version: infoString(i.PDFFormatVersion),
      language: infoString(i.Language) || null,
    };
  }

  async pageText(n: number): Promise<PageText> {
    if (!Number.isInteger(n) || n < 1 || n > this.pageCount) {
      throw new PdfError('VALIDATION_ERROR', 'page_out_of_range', `Page ${n} is outside 1..${this.pageCount}`);
    }
    const read = async () => {
      const page = await this.doc.getPage(n);
      try {
        const content = await page.getTextContent();
        return toRuns(content.items);
      } finally {
        page.cleanup();
      }
    };
    let runs: TextRun[];
    try {
      runs = await withTimeout(read(), this.timeoutMs, `Reading the text of page ${n}`, () => {});
    } catch (err) {
      if (err instanceof PdfError) throw err;
      throw new PdfError('UNPROCESSABLE_INPUT', 'corrupt', `Page ${n} of the PDF cannot be read`, { cause: err });
    }
    const text = layoutText(runs);
    return { text, chars: [...text].length };
  }

  pageDrawings(n: number): Promise<PageDrawings> {
    return this.pageRead(n, readPageDrawings, `Reading the drawings of page ${n}`);
  }

  private async pageRead<T>(
    n: number,
    read: (pdfjs: PdfJs, doc: PDFDocumentProxy, n: number) => Promise<T>,
    what: string,
  ): Promise<T> {
    if (!Number.isInteger(n) || n < 1 || n > this.pageCount) {
      throw new PdfError('VALIDATION_ERROR', 'page_out_of_range', `Page ${n} is outside 1..${this.pageCount}`);
    }
    try {
      return await withTimeout(read(this.pdfjs, this.doc, n), this.timeoutMs, what, () => {});
    } catch (err) {
      if (err instanceof PdfError) throw err;
      throw new PdfError('UNPROCESSABLE_INPUT', 'corrupt', `Page ${n} of the PDF cannot be read`, { cause: err });
    }
  }

  async close(): Promise<void> {
    await this.doc.destroy();
  }
}

/**
 * Opens a PDF from its bytes (copied: pdf.js may detach what it is given).
 * Throws `PdfError`: `INVALID_FORMAT`/`not_pdf` without a PDF header, `UNPROCESSABLE_INPUT` with `encrypted`,
 * `corrupt`, `empty` (no pages) or `timeout` (parsing outlived `timeoutMs`).
 */
export async function openPdf(bytes: Uint8Array | Buffer, opts: OpenPdfOptions = {}): Promise<PdfDoc> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!hasPdfHeader(bytes)) throw new PdfError('INVALID_FORMAT', 'not_pdf', 'The file is not a PDF (no %PDF header)');
  const pdfjs = await loadPdfJs();
  const task = pdfjs.getDocument({
    data: new Uint8Array(bytes),
    standardFontDataUrl: STANDARD_FONT_DATA_URL,
    disableFontFace: true,
    useSystemFonts: false,
    isEvalSupported: false,
    verbosity: 0,
  });
  let doc: PDFDocumentProxy;
  try {
    doc = await withTimeout(task.promise, timeoutMs, 'Opening the PDF', () => void task.destroy().catch(() => {}));
  } catch (err) {
    void task.destroy().catch(() => {});
    throw loadError(err);
  }
  if (doc.numPages < 1) {
    await doc.destroy();
    throw new PdfError('UNPROCESSABLE_INPUT', 'empty', 'The PDF has no pages');
  }
  return new PdfJsDoc(pdfjs, doc, timeoutMs);
}
