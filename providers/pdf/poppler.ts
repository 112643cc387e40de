/**
 * Poppler's command line tools for reading a PDF: `pdfinfo` (page count, document information), `pdftotext`
 * (the text layer in poppler's reading order, page by page) and `pdfimages -list` (which pages paint images). Each is a
 * separate process, started by the process's tool launcher (providers/process/launcher.ts: a fork of the big API or
 * worker process would block its event loop ~10 ms), bounded by a timeout and
 * killed on abort, so a hostile file can never hold the caller: unlike pdf.js, whose parsing runs on the caller's
 * thread and cannot be interrupted.
 */
import { open } from 'node:fs/promises';
import { runLaunchedTool } from '../process/launcher';
import { ToolExitError, ToolTimeoutError } from '../process/run-tool';
import { PdfError } from '../../domain/pdf/errors';

/** Maps poppler's complaints about the input to `PdfError`s; anything else stays as it is. */
export function popplerError(err: unknown): unknown {
  // The limits are generous for real documents (poppler reads a text page in about 0.5 ms): a file that outlives
  // them is one that makes poppler spin, and would do so again.
  if (err instanceof ToolTimeoutError)
    return new PdfError('UNPROCESSABLE_INPUT', 'timeout', 'Reading the PDF took too long', { cause: err });
  if (!(err instanceof ToolExitError)) return err;
  const msg = err.stderr;
  if (/Incorrect password/i.test(msg)) {
    return new PdfError('UNPROCESSABLE_INPUT', 'encrypted', 'The PDF is encrypted and needs a password', {
      cause: err,
    });
  }
  if (/Invalid page count 0/i.test(msg))
    return new PdfError('UNPROCESSABLE_INPUT', 'empty', 'The PDF has no pages', { cause: err });
  if (/Wrong page range/i.test(msg)) {
    return new PdfError('VALIDATION_ERROR', 'page_out_of_range', 'A requested page is not in the PDF', { cause: err });
  }
  if (/May not be a PDF/i.test(msg))
    return new PdfError('INVALID_FORMAT', 'not_pdf', 'The file is not a PDF', { cause: err });
  // Exit status 1 is poppler's "could not open the document": after the cases above, a damaged file.
  if (err.exitCode === 1 || /Couldn't (read xref|find trailer|read page catalog)|PDF file is damaged/i.test(msg)) {
    return new PdfError('UNPROCESSABLE_INPUT', 'corrupt', 'The PDF is damaged and cannot be read', { cause: err });
  }
  return err;
}

/** True when the file starts with a PDF header (`%PDF-` in the first 1024 bytes, where readers look for it). */
export async function fileHasPdfHeader(pdfPath: string): Promise<boolean> {
  const fh = await open(pdfPath, 'r');
  try {
    const buf = Buffer.alloc(1024);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead).includes('%PDF-', 0, 'latin1');
  } finally {
    await fh.close();
  }
}

/** What `pdfinfo` tells about a file. */
export interface PdfInfo {
  pages: number;
  encrypted: boolean;
  title: string;
  author: string;
  /** Size of the first page in points. */
  pageSize?: { width: number; height: number };
}

/** Parses `pdfinfo` output (`Key:   value` lines). Pure. */
export function parsePdfInfo(out: string): PdfInfo {
  const fields = new Map<string, string>();
  for (const line of out.split('\n')) {
    const m = /^([A-Za-z][A-Za-z ]*?):\s*(.*)$/.exec(line);
    if (m && !fields.has(m[1])) fields.set(m[1], m[2].trim());
  }
  const size = /^([\d.]+) x ([\d.]+) pts/.exec(fields.get('Page size') ?? '');
  return {
    pages: Number(fields.get('Pages') ?? 0) || 0,
    encrypted: /^yes/i.test(fields.get('Encrypted') ?? ''),
    title: fields.get('Title') ?? '',
    author: fields.get('Author') ?? '',
    ...(size ? { pageSize: { width: Number(size[1]), height: Number(size[2]) } } : {}),
  };
}

/**
 * Runs `pdfinfo` (UTF-8 output, default 30 s limit). A file that needs a password rejects with
 * `PdfError('UNPROCESSABLE_INPUT', 'encrypted')`; a file that is encrypted without one (owner password only)
 * reads fine and reports `encrypted: true`.
 */
export async function pdfInfo(
  pdfPath: string,
  opts: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<PdfInfo> {
  try {
    const { stdout } = await runLaunchedTool('pdfinfo', ['-enc', 'UTF-8', pdfPath], {
      signal: opts.signal,
      timeoutMs: opts.timeoutMs ?? 30_000,
    });
    return parsePdfInfo(stdout.toString('utf8'));
  } catch (err) {
    throw popplerError(err);
  }
}

/** Page sizes in points from `pdfinfo -f a -l b` lines such as `Page    3 size: 612 x 792 pts (letter)`. Pure. */
export function parsePageSizes(out: string): Map<number, { width: number; height: number }> {
  const sizes = new Map<number, { width: number; height: number }>();
  for (const m of out.matchAll(/^Page\s+(\d+) size:\s+([\d.]+) x ([\d.]+) pts/gm))
    sizes.set(Number(m[1]), { width: Number(m[2]), height: Number(m[3]) });
  return sizes;
}

/** The size in points of each page `first..last` (one `pdfinfo` process, nothing rendered). */
export async function pageSizes(
  pdfPath: string,
  first: number,
  last: number,
  opts: { signal?: AbortSignal } = {},
): Promise<Map<number, { width: number; height: number }>> {
  try {
    const { stdout } = await runLaunchedTool('pdfinfo', ['-f', String(first), '-l', String(last), pdfPath], {
      signal: opts.signal,
      timeoutMs: 30_000 + 5 * (last - first + 1),
    });
    return parsePageSizes(stdout.toString('utf8'));
  } catch (err) {
    throw popplerError(err);
  }
}

/**
 * The resolution a page of `size` points renders at: `dpi`, or the largest whole dpi (at least 1) at which the
 * image stays within `maxPixels`, so an oversized page (a 5000 pt poster) is rendered smaller, never huge. Pure.
 */
export function dpiWithin(
  size: { width: number; height: number } | undefined,
  dpi: number,
  maxPixels: number | undefined,
): number {
  if (!size || !maxPixels || !(size.width > 0 && size.height > 0)) return dpi;
  const fit = Math.floor(72 * Math.sqrt(maxPixels / (size.width * size.height)));
  return Math.max(1, Math.min(dpi, fit));
}

/** A page's text as pdftotext writes it, tidied: no trailing spaces, at most one blank line, no blank edges. */
export function tidyPageText(s: string): string {
  return s
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/^\n+|\s+$/g, '');
}

/** Splits pdftotext output for pages `first..last` at its form feeds (one after every page). Pure. */
export function splitPages(out: string, count: number): string[] {
  const parts = out.split('\f');
  if (parts.length <= count) {
    throw new PdfError(
      'VALIDATION_ERROR',
      'page_out_of_range',
      `Pages up to ${count} were asked for; the PDF ended after ${parts.length - 1}`,
    );
  }
  return parts.slice(0, count).map(tidyPageText);
}

/**
 * Sorted, de-duplicated page numbers cut into runs of consecutive pages: [1,2,3,7,8] → [[1,3],[7,8]]. Each run is one
 * poppler process's `-f`/`-l` (pdftotext, pdftohtml, pdftoppm).
 */
export function contiguousRanges(pages: readonly number[]): [number, number][] {
  const sorted = [...new Set(pages)].sort((a, b) => a - b);
  const ranges: [number, number][] = [];
  for (const p of sorted) {
    const last = ranges[ranges.length - 1];
    if (last && p === last[1] + 1) last[1] = p;
    else ranges.push([p, p]);
  }
  return ranges;
}

export interface PdfTextOptions {
  signal?: AbortSignal;
  /** Time allowed for each pdftotext process in milliseconds (default 30 s + 0.5 s per page of its part). */
  timeoutMs?: number;
  /** pdftotext processes that may run at once over parts of the range (default 1). */
  parallel?: number;
}

/** Pages a pdftotext process should at least get: each one parses the document's structure again. */
const MIN_PAGES_PER_PROCESS = 25;

/**
 * The text layer of pages `first..last` (1-based, inclusive) in poppler's reading order, one string per page.
 * The range is cut into up to `parallel` parts read by concurrent processes. A page without a text layer gives ''.
 * Rejects with a `PdfError` for inputs poppler refuses. Poppler 22 reads documents that forbid copying (as pdf.js
 * does).
 */
export async function pdfPageTexts(
  pdfPath: string,
  first: number,
  last: number,
  opts: PdfTextOptions = {},
): Promise<string[]> {
  if (!Number.isInteger(first) || !Number.isInteger(last) || first < 1 || last < first) {
    throw new PdfError('VALIDATION_ERROR', 'page_out_of_range', `The page range ${first}-${last} is not valid`);
  }
  const count = last - first + 1;
  const parts = Math.max(1, Math.min(opts.parallel ?? 1, Math.floor(count / MIN_PAGES_PER_PROCESS)));
  const ranges: [number, number][] = [];
  for (let i = 0, from = first; i < parts; i++) {
    const size = Math.floor(count / parts) + (i < count % parts ? 1 : 0);
    ranges.push([from, from + size - 1]);
    from += size;
  }
  const texts = await Promise.all(
    ranges.map(async ([f, l]) => {
      const n = l - f + 1;
      try {
        const { stdout } = await runLaunchedTool(
          'pdftotext',
          ['-enc', 'UTF-8', '-f', String(f), '-l', String(l), pdfPath, '-'],
          {
            signal: opts.signal,
            timeoutMs: opts.timeoutMs ?? 30_000 + 500 * n,
          },
        );
        return splitPages(stdout.toString('utf8'), n);
      } catch (err) {
        throw popplerError(err);
      }
    }),
  );
  return texts.flat();
}

/**
 * The text of pages `first..last`, or of `first` to the document's last page when it ends before `last` (pdftotext
 * stops there): one entry per page read, in order, split and tidied as {@link pdfPageTexts} does. One process. For a
 * caller that starts reading before it knows the page count (the API's direct answer runs it beside `pdfinfo`).
 */
export async function pdfPageTextsUpTo(
  pdfPath: string,
  first: number,
  last: number,
  opts: Omit<PdfTextOptions, 'parallel'> = {},
): Promise<string[]> {
  if (!Number.isInteger(first) || !Number.isInteger(last) || first < 1 || last < first) {
    throw new PdfError('VALIDATION_ERROR', 'page_out_of_range', `The page range ${first}-${last} is not valid`);
  }
  try {
    const { stdout } = await runLaunchedTool(
      'pdftotext',
      ['-enc', 'UTF-8', '-f', String(first), '-l', String(last), pdfPath, '-'],
      { signal: opts.signal, timeoutMs: opts.timeoutMs ?? 30_000 + 500 * (last - first + 1) },
    );
    // A form feed ends every page: what follows the last one is not a page.
    return stdout.toString('utf8').split('\f').slice(0, -1).map(tidyPageText);
  } catch (err) {
    throw popplerError(err);
  }
}

/**
 * The pages of a `pdfimages -list` listing that paint at least one image: every row after the two header lines
 * starts with its page number (image XObjects, inline images, stencil masks and soft masks alike). Pure.
 */
export function parseImageList(out: string): Set<number> {
  const pages = new Set<number>();
  for (const line of out.split('\n').slice(2)) {
    const m = /^\s*(\d+)\s+\d+\s+\S/.exec(line);
    if (m) pages.add(Number(m[1]));
  }
  return pages;
}

/**
 * Which of `pages` (1-based) paint any image: an image XObject (also inside a form), an inline image or an image
 * mask. One `pdfimages -list` process covers the span from the lowest to the highest page; it only lists the
 * images, without decoding them. Rejects with a `PdfError` for inputs poppler refuses.
 */
export async function pagesWithImages(
  pdfPath: string,
  pages: readonly number[],
  opts: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<Set<number>> {
  if (pages.length === 0) return new Set();
  if (pages.some((p) => !Number.isInteger(p) || p < 1))
    throw new PdfError('VALIDATION_ERROR', 'page_out_of_range', `Pages ${pages.join(', ')} are not page numbers`);
  const first = Math.min(...pages);
  const last = Math.max(...pages);
  try {
    const { stdout } = await runLaunchedTool('pdfimages', ['-list', '-f', String(first), '-l', String(last), pdfPath], {
      signal: opts.signal,
      timeoutMs: opts.timeoutMs ?? 30_000 + 500 * (last - first + 1),
    });
    const listed = parseImageList(stdout.toString('utf8'));
    return new Set(pages.filter((p) => listed.has(p)));
  } catch (err) {
    throw popplerError(err);
  }
}
