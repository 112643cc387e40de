/**
 * Test PDFs generated on the spot, without any PDF package (the writer is `pdf-writer.ts`): Helvetica text in
 * WinAnsi encoding, two-column pages, document information, image-only ("scanned") pages made from real
 * rendered text, encrypted files (standard security handler, RC4, revision 2) and deliberately broken files.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { runTool } from '../../../providers/process/run-tool';
import { infoStringBytes, makeEncryption, pdfLiteral, PdfWriter } from './pdf-writer';

/** A4 in points. */
const PAGE_WIDTH = 595;
export const PAGE_HEIGHT = 842;

/** A text string drawn at a position (points, origin bottom left). */
interface TextRun {
  text: string;
  x: number;
  y: number;
  size?: number;
}

/** An 8-bit grayscale raster. */
interface GrayImage {
  width: number;
  height: number;
  pixels: Buffer;
}

export type PageSpec =
  /**
   * Lines top to bottom in one BT block (Td, TL, T*: pdf.js marks line ends); `reversed` draws the bottom line first.
   */
  | { kind: 'lines'; lines: string[]; size?: number; leading?: number; x?: number; top?: number; reversed?: boolean }
  /** Two columns of text; `interleave` draws them row by row (left 1, right 1, left 2, ...), else left column first. */
  | {
      kind: 'columns';
      left: string[];
      right: string[];
      heading?: string;
      footer?: string;
      size?: number;
      interleave?: boolean;
    }
  /** Free text runs, drawn in the given order, on an A4 page or one of `box` points (width, height). */
  | { kind: 'runs'; runs: TextRun[]; box?: [number, number] }
  /** A full-page image and no text layer, as a scanner makes it. */
  | { kind: 'image'; image: GrayImage; dpi: number }
  /**
   * Text runs, then `content` (raw content-stream operators: paths, transforms) on an A4 page whose view (crop box)
   * may start off the origin; `forms` are form XObjects it may draw with `/Name Do` (each form may draw the others),
   * `compress` deflates the page's content stream.
   */
  | {
      kind: 'drawing';
      runs?: TextRun[];
      content: string;
      forms?: Record<string, { content: string; matrix?: number[] }>;
      cropBox?: [number, number, number, number];
      compress?: boolean;
    };

interface PdfSpec {
  pages: PageSpec[];
  title?: string;
  author?: string;
  /** Encrypts strings and streams with RC4 (40 bit, R2) under this user password. */
  userPassword?: string;
  /** With `userPassword` (which may be empty: anyone can open it): false forbids copying the text. */
  allowCopy?: boolean;
}

// ---- pages ---------------------------------------------------------------------------------------------------

function linesContent(spec: Extract<PageSpec, { kind: 'lines' }>): string {
  const size = spec.size ?? 12;
  const leading = spec.leading ?? size * 1.25;
  const x = spec.x ?? 72;
  const top = spec.top ?? PAGE_HEIGHT - 72;
  if (spec.reversed) {
    const ops = spec.lines.map(
      (line, i) => `BT /F1 ${size} Tf 1 0 0 1 ${x} ${top - i * leading} Tm ${pdfLiteral(line)} Tj ET`,
    );
    return ops.reverse().join('\n');
  }
  return `BT /F1 ${size} Tf ${x} ${top} Td ${leading} TL\n${spec.lines.map((l) => `${pdfLiteral(l)} Tj T*`).join('\n')}\nET`;
}

function columnsContent(spec: Extract<PageSpec, { kind: 'columns' }>): string {
  const size = spec.size ?? 10;
  const leading = size * 1.3;
  const top = PAGE_HEIGHT - 72;
  const at = (text: string, x: number, y: number, s = size) =>
    `BT /F1 ${s} Tf 1 0 0 1 ${x} ${y} Tm ${pdfLiteral(text)} Tj ET`;
  const ops: string[] = [];
  let y = top;
  if (spec.heading) {
    ops.push(at(spec.heading, 56, y, size * 1.6));
    y -= size * 3;
  }
  const left = spec.left.map((t, i) => at(t, 56, y - i * leading));
  const right = spec.right.map((t, i) => at(t, 310, y - i * leading));
  if (spec.interleave) {
    for (let i = 0; i < Math.max(left.length, right.length); i++) ops.push(...[left[i], right[i]].filter(Boolean));
  } else {
    ops.push(...left, ...right);
  }
  if (spec.footer) ops.push(at(spec.footer, 56, 60));
  return ops.join('\n');
}

const runsContent = (runs: TextRun[]) =>
  runs.map((r) => `BT /F1 ${r.size ?? 12} Tf 1 0 0 1 ${r.x} ${r.y} Tm ${pdfLiteral(r.text)} Tj ET`).join('\n');

/** Writes a PDF from page descriptions. Every page is A4 except image pages, which take the image's size. */
export function buildPdf(spec: PdfSpec): Buffer {
  const w = new PdfWriter();
  const catalog = w.reserve();
  const pagesNum = w.reserve();
  const font = w.add(() => '/Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding');
  const kids: number[] = [];
  for (const page of spec.pages) {
    let content: string;
    let resources = `/Font << /F1 ${font} 0 R >>`;
    let box = [PAGE_WIDTH, PAGE_HEIGHT];
    if (page.kind === 'image') {
      const { width, height, pixels } = page.image;
      box = [(width * 72) / page.dpi, (height * 72) / page.dpi].map((v) => Math.round(v * 100) / 100);
      const img = w.add(
        () =>
          `/Type /XObject /Subtype /Image /Width ` +
          `${width} /Height ${height} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode`,
        deflateSync(pixels),
      );
      resources = `/XObject << /Im1 ${img} 0 R >>`;
      content = `q ${box[0]} 0 0 ${box[1]} 0 0 cm /Im1 Do Q`;
    } else if (page.kind === 'drawing') {
      content = `${runsContent(page.runs ?? [])}\n${page.content}`;
      const names = Object.keys(page.forms ?? {});
      if (names.length) {
        // One resource dictionary for the page and every form: a form may draw any other (or itself).
        const nums = names.map(() => w.reserve());
        const xobjects = `/XObject << ${names.map((n, i) => `/${n} ${nums[i]} 0 R`).join(' ')} >>`;
        names.forEach((n, i) => {
          const form = page.forms![n];
          const matrix = form.matrix ? `/Matrix [${form.matrix.join(' ')}]` : '';
          w.set(
            nums[i],
            () =>
              `/Type /XObject /Subtype /Form /BBox [0 0 ${PAGE_WIDTH} ${PAGE_HEIGHT}] ${matrix} /Resources << ${xobjects} >>`,
            Buffer.from(form.content, 'latin1'),
          );
        });
        resources += ` ${xobjects}`;
      }
    } else if (page.kind === 'lines') content = linesContent(page);
    else if (page.kind === 'columns') content = columnsContent(page);
    else {
      content = runsContent(page.runs);
      if (page.box) box = page.box;
    }
    const compress = page.kind === 'drawing' && page.compress;
    const stream = compress
      ? w.add(() => '/Filter /FlateDecode', deflateSync(Buffer.from(content, 'latin1')))
      : w.add(() => '', Buffer.from(content, 'latin1'));
    const crop = page.kind === 'drawing' && page.cropBox ? ` /CropBox [${page.cropBox.join(' ')}]` : '';
    kids.push(
      w.add(
        () =>
          `/Type /Page /Parent ${pagesNum} 0 R /MediaBox [0 0 ${box.join(' ')}]${crop} /Contents ${stream} 0 R /Resources << ${resources} >>`,
      ),
    );
  }
  w.set(pagesNum, () => `/Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length}`);
  w.set(catalog, () => `/Type /Catalog /Pages ${pagesNum} 0 R`);
  const info =
    spec.title !== undefined || spec.author !== undefined
      ? w.add((str) =>
          [
            spec.title !== undefined ? `/Title ${str(infoStringBytes(spec.title))}` : '',
            spec.author !== undefined ? `/Author ${str(infoStringBytes(spec.author))}` : '',
            `/Producer ${str(Buffer.from('docproc test pdf-factory'))}`,
          ].join(' '),
        )
      : undefined;
  const enc =
    spec.userPassword !== undefined
      ? makeEncryption(spec.userPassword, `${spec.userPassword}-owner`, spec.allowCopy ?? true)
      : undefined;
  return w.finish(catalog, info, enc);
}

/** A valid PDF whose page tree is empty (`/Count 0 /Kids []`). */
export const zeroPagePdf = (): Buffer => buildPdf({ pages: [], title: 'Nothing here' });

/**
 * A PDF with its header and the start of an object, then garbage: no catalog, no page tree, no xref
 * (what a download cut short and overwritten looks like).
 */
export function corruptPdf(): Buffer {
  const good = buildPdf({ pages: [{ kind: 'lines', lines: ['This file will be damaged.'] }] });
  const garbage = Buffer.alloc(600);
  for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 7919 + 13) % 251;
  return Buffer.concat([
    good.subarray(0, 40),
    garbage,
    Buffer.from('\nxref\n0 9\nnot an xref table\ntrailer\n<< /Size 9 /Root 77 0 R >>\nstartxref\n99999\n%%EOF\n'),
  ]);
}

// ---- scanned pages -------------------------------------------------------------------------------------------

/** Parses a binary PGM (P5, 8 bit), as `pdftoppm -gray` writes it. */
export function parsePgm(buf: Buffer): GrayImage {
  const fields: string[] = [];
  let i = 0;
  while (fields.length < 4) {
    while (/\s/.test(String.fromCharCode(buf[i]))) i++;
    if (buf[i] === 0x23) {
      while (buf[i] !== 0x0a) i++;
      continue;
    }
    const start = i;
    while (!/\s/.test(String.fromCharCode(buf[i]))) i++;
    fields.push(buf.toString('latin1', start, i));
  }
  const [magic, width, height, maxval] = [fields[0], Number(fields[1]), Number(fields[2]), Number(fields[3])];
  if (magic !== 'P5' || maxval !== 255) throw new Error(`not an 8-bit binary PGM (${magic}, maxval ${maxval})`);
  const pixels = buf.subarray(i + 1, i + 1 + width * height);
  if (pixels.length !== width * height) throw new Error('PGM shorter than its header says');
  return { width, height, pixels };
}

/** Breaks a paragraph into lines of at most `max` characters at spaces. */
export function wrapText(text: string, max: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > max) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** Renders page 1 of a PDF to a grayscale raster with `pdftoppm -gray` at the given resolution. */
export async function rasterize(pdf: Buffer, dpi: number): Promise<GrayImage> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pdf-factory-'));
  try {
    await writeFile(path.join(dir, 'in.pdf'), pdf);
    await runTool(
      'pdftoppm',
      [
        '-r',
        String(dpi),
        '-gray',
        '-singlefile',
        '-f',
        '1',
        '-l',
        '1',
        path.join(dir, 'in.pdf'),
        path.join(dir, 'out'),
      ],
      {
        timeoutMs: 30_000,
      },
    );
    return parsePgm(await readFile(path.join(dir, 'out.pgm')));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A "scan": each paragraph is typeset in Helvetica 12 pt on its own page, rendered at `dpi` by poppler, and the
 * pixels become an image XObject on a page with no text layer at all.
 */
export async function scannedPdf(paragraphs: string | string[], dpi = 300): Promise<Buffer> {
  const pages: PageSpec[] = [];
  for (const paragraph of Array.isArray(paragraphs) ? paragraphs : [paragraphs]) {
    const textPdf = buildPdf({ pages: [{ kind: 'lines', lines: wrapText(paragraph, 70), size: 12, leading: 16 }] });
    pages.push({ kind: 'image', image: await rasterize(textPdf, dpi), dpi });
  }
  return buildPdf({ pages, title: 'Scan' });
}

/** A scan as `scannedPdf` makes it, each page turned upside down (a sheet fed the wrong way round). */
export async function upsideDownScanPdf(paragraphs: string | string[], dpi = 300): Promise<Buffer> {
  const pages: PageSpec[] = [];
  for (const paragraph of Array.isArray(paragraphs) ? paragraphs : [paragraphs]) {
    const image = await rasterize(
      buildPdf({ pages: [{ kind: 'lines', lines: wrapText(paragraph, 70), size: 12, leading: 16 }] }),
      dpi,
    );
    // 180 degrees: the pixels in reverse order.
    pages.push({ kind: 'image', image: { ...image, pixels: Buffer.from(image.pixels).reverse() }, dpi });
  }
  return buildPdf({ pages, title: 'Scan upside down' });
}

/** A white A4 page at `dpi` as an image-only page (a blank scan). */
export function blankScanPdf(dpi = 300): Buffer {
  const width = Math.round((PAGE_WIDTH * dpi) / 72);
  const height = Math.round((PAGE_HEIGHT * dpi) / 72);
  return buildPdf({
    pages: [{ kind: 'image', image: { width, height, pixels: Buffer.alloc(width * height, 255) }, dpi }],
  });
}
