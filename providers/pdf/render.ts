/**
 * Page images through poppler: `pdftoppm -gray` PGM at 300 dpi as OCR input (the fastest form, about 40 ms a
 * page), PNG for images meant for people and vision models, and `pdfinfo` for a quick look at a file.
 * Every process is bounded by a timeout and killed when the caller aborts.
 */
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { ToolExitError, runTool } from '../process/run-tool';
import { PdfError } from './errors';

export interface RenderOptions {
  /** Resolution in dots per inch (default 300, what tesseract reads best). */
  dpi?: number;
  /** Grayscale PGM (default true); false writes colour PPM. */
  gray?: boolean;
  signal?: AbortSignal;
  /** Time allowed per page in milliseconds (default 30 000); a process gets this times its page count. */
  pageTimeoutMs?: number;
}

export interface RenderedPage {
  page: number;
  path: string;
}

/** Maps poppler's complaints about the input to `PdfError`s; anything else stays as it is. */
function popplerError(err: unknown): unknown {
  if (!(err instanceof ToolExitError)) return err;
  const msg = err.stderr;
  if (/Incorrect password/i.test(msg)) {
    return new PdfError('UNPROCESSABLE_INPUT', 'encrypted', 'The PDF is encrypted and needs a password', { cause: err });
  }
  if (/Wrong page range|Invalid page count 0/i.test(msg)) {
    return /page count 0/i.test(msg)
      ? new PdfError('UNPROCESSABLE_INPUT', 'empty', 'The PDF has no pages', { cause: err })
      : new PdfError('VALIDATION_ERROR', 'page_out_of_range', 'A requested page is not in the PDF', { cause: err });
  }
  if (/May not be a PDF/i.test(msg)) {
    return new PdfError('INVALID_FORMAT', 'not_pdf', 'The file is not a PDF', { cause: err });
  }
  if (/Couldn't (read xref|find trailer|read page catalog)|PDF file is damaged/i.test(msg)) {
    return new PdfError('UNPROCESSABLE_INPUT', 'corrupt', 'The PDF is damaged and cannot be read', { cause: err });
  }
  return err;
}

/** Sorted, de-duplicated page numbers cut into runs of consecutive pages: [1,2,3,7,8] → [[1,3],[7,8]]. */
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

/**
 * Renders the given pages (1-based) into `outDir` (created if missing) as `page-<n>.pgm` (poppler pads `n` to the width of the page
 * count), one `pdftoppm` process per run of consecutive pages, one run after the other. Returns the images in
 * page order. Aborting kills the running process and rejects with the signal's reason.
 */
export async function renderPages(pdfPath: string, pages: number[], outDir: string, opts: RenderOptions = {}): Promise<RenderedPage[]> {
  const dpi = opts.dpi ?? 300;
  const gray = opts.gray ?? true;
  const ext = gray ? 'pgm' : 'ppm';
  const pageTimeoutMs = opts.pageTimeoutMs ?? 30_000;
  for (const p of pages) {
    if (!Number.isInteger(p) || p < 1) throw new PdfError('VALIDATION_ERROR', 'page_out_of_range', `Page ${p} is not a page number`);
  }
  if (pages.length === 0) return [];
  await mkdir(outDir, { recursive: true });
  const prefix = path.join(outDir, 'page');
  const wanted = new Set(pages);
  for (const [first, last] of contiguousRanges(pages)) {
    opts.signal?.throwIfAborted();
    const args = ['-r', String(dpi), ...(gray ? ['-gray'] : []), '-f', String(first), '-l', String(last), pdfPath, prefix];
    try {
      await runTool('pdftoppm', args, { signal: opts.signal, timeoutMs: pageTimeoutMs * (last - first + 1) });
    } catch (err) {
      throw popplerError(err);
    }
  }
  const found = new Map<number, string>();
  const pattern = new RegExp(`^page-(\\d+)\\.${ext}$`);
  for (const name of await readdir(outDir)) {
    const m = pattern.exec(name);
    if (m && wanted.has(Number(m[1]))) found.set(Number(m[1]), path.join(outDir, name));
  }
  const missing = [...wanted].filter((p) => !found.has(p));
  if (missing.length > 0) {
    throw new PdfError('VALIDATION_ERROR', 'page_out_of_range', `Pages ${missing.join(', ')} are not in the PDF`);
  }
  return [...found.entries()].sort((a, b) => a[0] - b[0]).map(([page, p]) => ({ page, path: p }));
}

/**
 * Renders one page as a PNG (default 150 dpi) for people and vision models. `outPath` gets `.png` if it lacks
 * it; the written path is returned.
 */
export async function renderPagePng(
  pdfPath: string,
  page: number,
  outPath: string,
  dpi = 150,
  opts: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<string> {
  if (!Number.isInteger(page) || page < 1) throw new PdfError('VALIDATION_ERROR', 'page_out_of_range', `Page ${page} is not a page number`);
  const prefix = outPath.replace(/\.png$/i, '');
  const args = ['-png', '-singlefile', '-r', String(dpi), '-f', String(page), '-l', String(page), pdfPath, prefix];
  try {
    await runTool('pdftoppm', args, { signal: opts.signal, timeoutMs: opts.timeoutMs ?? 60_000 });
  } catch (err) {
    throw popplerError(err);
  }
  return `${prefix}.png`;
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
export async function pdfInfo(pdfPath: string, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<PdfInfo> {
  try {
    const { stdout } = await runTool('pdfinfo', ['-enc', 'UTF-8', pdfPath], { signal: opts.signal, timeoutMs: opts.timeoutMs ?? 30_000 });
    return parsePdfInfo(stdout.toString('utf8'));
  } catch (err) {
    throw popplerError(err);
  }
}

/**
 * The images embedded in pages `first`..`last`, as PNG files in `outDir` (`pdfimages -png -p`: names carry the
 * page number, `img-<page>-<n>.png`). Returns their paths in page order.
 */
export async function extractEmbeddedImages(
  pdfPath: string,
  first: number,
  last: number,
  outDir: string,
  opts: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<string[]> {
  await mkdir(outDir, { recursive: true });
  try {
    await runTool('pdfimages', ['-png', '-p', '-f', String(first), '-l', String(last), pdfPath, path.join(outDir, 'img')], {
      signal: opts.signal,
      timeoutMs: opts.timeoutMs ?? 120_000,
    });
  } catch (err) {
    throw popplerError(err);
  }
  return (await readdir(outDir))
    .filter((f) => f.startsWith('img-') && f.endsWith('.png'))
    .sort()
    .map((f) => path.join(outDir, f));
}
