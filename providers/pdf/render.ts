/**
 * Page images through poppler: `pdftoppm -gray` PGM at 300 dpi as OCR input (the fastest form, about 40 ms a
 * page), and PNG for images meant for people and vision models.
 * Every process is bounded by a timeout and killed when the caller aborts.
 */
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { RenderedPage } from '../../domain/engines/pdf';
import { runTool } from '../process/run-tool';
import { PdfError } from '../../domain/pdf/errors';
import { contiguousRanges, dpiWithin, pageSizes, popplerError } from './poppler';

export interface RenderOptions {
  /** Resolution in dots per inch (default 300, what tesseract reads best). */
  dpi?: number;
  /** Grayscale PGM (default true); false writes colour PPM. */
  gray?: boolean;
  signal?: AbortSignal;
  /** Time allowed per page in milliseconds (default 30 000); a process gets this times its page count. */
  pageTimeoutMs?: number;
  /** Pixels a page image may have: larger pages render at the highest resolution that fits (see `dpiWithin`). */
  maxPixels?: number;
}

/**
 * Renders the given pages (1-based) into `outDir` (created if missing) as `page-<n>.pgm` (poppler pads `n` to the width
 * of the page
 * count), one `pdftoppm` process per run of consecutive pages at one resolution, one run after the other. With
 * `maxPixels`, pages too large for it at `dpi` render at a lower resolution. Returns the images in page order.
 * Aborting kills the running process and rejects with the signal's reason.
 */
export async function renderPages(
  pdfPath: string,
  pages: number[],
  outDir: string,
  opts: RenderOptions = {},
): Promise<RenderedPage[]> {
  const dpi = opts.dpi ?? 300;
  const gray = opts.gray ?? true;
  const ext = gray ? 'pgm' : 'ppm';
  const pageTimeoutMs = opts.pageTimeoutMs ?? 30_000;
  for (const p of pages) {
    if (!Number.isInteger(p) || p < 1)
      throw new PdfError('VALIDATION_ERROR', 'page_out_of_range', `Page ${p} is not a page number`);
  }
  if (pages.length === 0) return [];
  await mkdir(outDir, { recursive: true });
  const prefix = path.join(outDir, 'page');
  const wanted = new Set(pages);
  const sizes = opts.maxPixels
    ? await pageSizes(pdfPath, Math.min(...pages), Math.max(...pages), { signal: opts.signal })
    : undefined;
  const dpiOf = (page: number) => dpiWithin(sizes?.get(page), dpi, opts.maxPixels);
  for (const [first, last, pageDpi] of contiguousRanges(pages).flatMap(([a, b]) => splitByDpi(a, b, dpiOf))) {
    opts.signal?.throwIfAborted();
    const args = [
      '-r',
      String(pageDpi),
      ...(gray ? ['-gray'] : []),
      '-f',
      String(first),
      '-l',
      String(last),
      pdfPath,
      prefix,
    ];
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

/** Cuts the run `first..last` where the pages' resolution changes: `[first, last, dpi]` runs. Pure. */
export function splitByDpi(first: number, last: number, dpiOf: (page: number) => number): [number, number, number][] {
  const runs: [number, number, number][] = [];
  for (let p = first; p <= last; p++) {
    const d = dpiOf(p);
    const run = runs[runs.length - 1];
    if (run && run[2] === d) run[1] = p;
    else runs.push([p, p, d]);
  }
  return runs;
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
  opts: { signal?: AbortSignal; timeoutMs?: number; maxPixels?: number } = {},
): Promise<string> {
  if (!Number.isInteger(page) || page < 1)
    throw new PdfError('VALIDATION_ERROR', 'page_out_of_range', `Page ${page} is not a page number`);
  const prefix = outPath.replace(/\.png$/i, '');
  const size = opts.maxPixels ? (await pageSizes(pdfPath, page, page, { signal: opts.signal })).get(page) : undefined;
  const args = [
    '-png',
    '-singlefile',
    '-r',
    String(dpiWithin(size, dpi, opts.maxPixels)),
    '-f',
    String(page),
    '-l',
    String(page),
    pdfPath,
    prefix,
  ];
  try {
    await runTool('pdftoppm', args, { signal: opts.signal, timeoutMs: opts.timeoutMs ?? 60_000 });
  } catch (err) {
    throw popplerError(err);
  }
  return `${prefix}.png`;
}

export { extractEmbeddedImages } from './embedded-images';
