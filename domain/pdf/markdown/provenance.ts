/**
 * Where each block of a page's Markdown stands (contract §13): its type, its Markdown, its box from the page's
 * top-left in the layout's units (PDF points; OCR'd pages are in points too, `ocr-layout.ts`) and its place in reading
 * order. The boxes come from the lines a block was made of: a line reaches from its first fragment's left edge to its
 * last one's right edge, and from an ascender above its baseline to a descender below it (font metrics are not in the
 * layout, so the usual proportions of a Latin font: 0.9 and 0.25 of the size). Running headers and footers are
 * blocks too, but not part of the Markdown. Pure.
 */
import type { TextLine } from './blocks';
import type { Fragment } from './lines';
import type { Table } from './tables';

/** `[x0, y0, x1, y1]`: left, top, right, bottom, from the page's top-left. */
export type Bbox = [number, number, number, number];

export type BlockType =
  | 'heading'
  | 'paragraph'
  | 'list_item'
  | 'table'
  | 'code'
  | 'caption'
  | 'footnote'
  | 'figure'
  | 'formula'
  | 'header'
  | 'footer';

/** A block of a page as `metadata.text_contents[].blocks[]` carries it. */
export interface PageBlock {
  type: BlockType;
  /** Its Markdown (a running header's or footer's plain text). */
  text: string;
  bbox: Bbox;
  /** For headings: 1 to 6. */
  level?: number;
  /** Its place on the page in reading order, from 0; headers first and footers last. */
  order: number;
}

export const ASCENT = 0.9;
export const DESCENT = 0.25;
const round = (v: number) => Math.round(v * 10) / 10;

/** The box of lines (baselines and sizes in PDF space, origin bottom left) on a page `height` tall. */
export function linesBox(lines: readonly Pick<TextLine, 'x0' | 'x1' | 'y' | 'size'>[], height: number): Bbox {
  const x0 = Math.min(...lines.map((l) => l.x0));
  const x1 = Math.max(...lines.map((l) => l.x1));
  const top = Math.max(...lines.map((l) => l.y + ASCENT * l.size));
  const bottom = Math.min(...lines.map((l) => l.y - DESCENT * l.size));
  return [round(x0), round(Math.max(0, height - top)), round(x1), round(Math.min(height, height - bottom))];
}

/** The box of a table's region. */
export const tableBox = (t: Table, height: number): Bbox => [
  round(t.x0),
  round(Math.max(0, height - t.top)),
  round(t.x1),
  round(Math.min(height, height - t.bottom)),
];

/** The union of two boxes. */
export const unionBox = (a: Bbox, b: Bbox): Bbox => [
  Math.min(a[0], b[0]),
  Math.min(a[1], b[1]),
  Math.max(a[2], b[2]),
  Math.max(a[3], b[3]),
];

/**
 * The running headers and footers a page lost to the furniture rule (`document.ts`), one block per line: `header` in
 * the page's upper half, `footer` in its lower one, with order numbers given by the caller.
 */
export function furnitureBlocks(
  removed: readonly Fragment[],
  height: number,
): { header: Omit<PageBlock, 'order'>[]; footer: Omit<PageBlock, 'order'>[] } {
  const lines = new Map<number, Fragment[]>();
  for (const f of removed) lines.set(f.line, [...(lines.get(f.line) ?? []), f]);
  const header: Omit<PageBlock, 'order'>[] = [];
  const footer: Omit<PageBlock, 'order'>[] = [];
  for (const fs of [...lines.values()].sort((a, b) => b[0].y - a[0].y)) {
    const sorted = [...fs].sort((a, b) => a.x0 - b.x0);
    const text = sorted
      .map((f) => f.text)
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim();
    if (!text) continue;
    const block = { text, bbox: linesBox(sorted, height) };
    if (sorted[0].y > height / 2) header.push({ type: 'header', ...block });
    else footer.push({ type: 'footer', ...block });
  }
  return { header, footer };
}
