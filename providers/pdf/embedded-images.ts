/**
 * The images embedded in a PDF's pages, extracted with `pdfimages -png` under limits: a hostile document (100,000
 * tiny images, or one image declared 100,000 pixels square over a few bytes of stream) must not fill the disk, the
 * memory or the job's history with their names. `pdfimages -list` first says what is there without decoding a pixel
 * (count, sizes); past a limit the extraction is refused with 422 `UNPROCESSABLE_INPUT` naming the limit and what
 * was found, never cut short silently. While `pdfimages` writes, the bytes in its directory are watched and the
 * process is killed past the byte limit (the listing's sizes are declared, the files are what counts).
 */
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../../core/errors';
import type { EmbeddedImageLimits } from '../../domain/engines/pdf';
import { runTool } from '../process/run-tool';
import { popplerError } from './poppler';

/** One row of a `pdfimages -list` listing. */
export interface ListedImage {
  page: number;
  width: number;
  height: number;
  /** Its raster uncompressed: width × height × components × bits per component / 8. */
  bytes: number;
}

const DEFAULTS = { maxImages: 2000, maxImagePixels: 100_000_000, maxBytes: 1024 * 1024 * 1024 };

/**
 * A row of `pdfimages -list` (after its two header lines): `page num type width height color comp bpc enc ...`.
 * Null for the headers and anything else. Pure.
 */
export function parseListedImage(line: string): ListedImage | null {
  const m = /^\s*(\d+)\s+\d+\s+\S+\s+(\d+)\s+(\d+)\s+\S+\s+(\d+)\s+(\d+)\s/.exec(line);
  if (!m) return null;
  const [page, width, height, comp, bpc] = m.slice(1).map(Number);
  return { page, width, height, bytes: Math.ceil((width * height * Math.max(1, comp) * Math.max(1, bpc)) / 8) };
}

const refuse = (message: string, details: Record<string, unknown>) =>
  new AppError('UNPROCESSABLE_INPUT', message, { reason: 'embedded_images_over_limit', ...details });

/**
 * Lists the images of pages `first`..`last` and throws 422 when they cross a limit: read as the listing streams, so
 * a listing of a million rows stops at the first row past the count.
 */
export async function checkEmbeddedImages(
  pdfPath: string,
  first: number,
  last: number,
  limits: Required<EmbeddedImageLimits>,
  opts: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<{ images: number; bytes: number }> {
  const stop = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
  let over: AppError | undefined;
  let images = 0;
  let bytes = 0;
  let rest = '';
  const take = (line: string) => {
    const row = parseListedImage(line);
    if (!row || over) return;
    images++;
    bytes += row.bytes;
    if (images > limits.maxImages)
      over = refuse(`Pages ${first}-${last} embed more than ${limits.maxImages} images`, {
        limit_images: limits.maxImages,
        pages: [first, last],
      });
    else if (row.width * row.height > limits.maxImagePixels)
      over = refuse(`An image on page ${row.page} has more than ${limits.maxImagePixels} pixels`, {
        page: row.page,
        width: row.width,
        height: row.height,
        limit_pixels: limits.maxImagePixels,
      });
    else if (bytes > limits.maxBytes)
      over = refuse(`The images of pages ${first}-${last} take more than ${limits.maxBytes} bytes`, {
        limit_bytes: limits.maxBytes,
        pages: [first, last],
      });
    if (over) stop.abort(over);
  };
  try {
    await runTool('pdfimages', ['-list', '-f', String(first), '-l', String(last), pdfPath], {
      signal,
      timeoutMs: opts.timeoutMs ?? 30_000 + 500 * (last - first + 1),
      onStdout: (chunk) => {
        const lines = (rest + chunk.toString('latin1')).split('\n');
        rest = lines.pop() ?? '';
        lines.forEach(take);
      },
    });
    take(rest);
  } catch (err) {
    if (over) throw over;
    throw popplerError(err);
  }
  if (over) throw over;
  return { images, bytes };
}

/** Bytes of the files in `dir` (not recursive). */
async function bytesIn(dir: string): Promise<number> {
  let total = 0;
  for (const f of await readdir(dir).catch(() => [] as string[]))
    total += await stat(path.join(dir, f)).then(
      (s) => s.size,
      () => 0,
    );
  return total;
}

/**
 * The images embedded in pages `first`..`last`, as PNG files in `outDir` (`pdfimages -png -p`: names carry the
 * page number, `img-<page>-<n>.png`), within `limits` (see the module comment). Returns their paths in page order.
 */
export async function extractEmbeddedImages(
  pdfPath: string,
  first: number,
  last: number,
  outDir: string,
  opts: { signal?: AbortSignal; timeoutMs?: number; limits?: EmbeddedImageLimits } = {},
): Promise<string[]> {
  const limits = { ...DEFAULTS, ...opts.limits };
  await checkEmbeddedImages(pdfPath, first, last, limits, opts);
  await mkdir(outDir, { recursive: true });
  const stop = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
  let over: AppError | undefined;
  let checking = false;
  const watch = setInterval(() => {
    if (checking) return;
    checking = true;
    void bytesIn(outDir)
      .then((n) => {
        if (n <= limits.maxBytes || over) return;
        over = refuse(`The images of pages ${first}-${last} take more than ${limits.maxBytes} bytes`, {
          limit_bytes: limits.maxBytes,
          pages: [first, last],
        });
        stop.abort(over);
      })
      .finally(() => (checking = false));
  }, 100);
  try {
    await runTool(
      'pdfimages',
      ['-png', '-p', '-f', String(first), '-l', String(last), pdfPath, path.join(outDir, 'img')],
      {
        signal,
        timeoutMs: opts.timeoutMs ?? 120_000,
      },
    );
  } catch (err) {
    clearInterval(watch);
    await rm(outDir, { recursive: true, force: true });
    if (over) throw over;
    throw popplerError(err);
  } finally {
    clearInterval(watch);
  }
  if (!over && (await bytesIn(outDir)) > limits.maxBytes)
    over = refuse(`The images of pages ${first}-${last} take more than ${limits.maxBytes} bytes`, {
      limit_bytes: limits.maxBytes,
      pages: [first, last],
    });
  if (over) {
    // What pdfimages wrote before it was stopped goes at once, not only with the step's scratch.
    await rm(outDir, { recursive: true, force: true });
    throw over;
  }
  return (await readdir(outDir))
    .filter((f) => f.startsWith('img-') && f.endsWith('.png'))
    .sort()
    .map((f) => path.join(outDir, f));
}
