import type { LayoutItem, PageLayout } from '../../../domain/pdf/markdown/types';

/**
 * Page layouts as the PDF-to-Markdown rules read them (domain/pdf/markdown/types.ts), built by hand for the rules'
 * unit tests: text items on an A4 page in PDF space (points, origin bottom left, `y` the baseline).
 */

/** A text item whose width is half its size per character (close to a proportional font's average). */
export const item = (str: string, x: number, y: number, size = 10, extra: Partial<LayoutItem> = {}): LayoutItem => ({
  str,
  x,
  y,
  w: str.length * size * 0.5,
  size,
  ...extra,
});

/** Lines of a column from `top` down, `leading` apart. */
export const column = (lines: string[], x: number, top: number, size = 10, leading = 12) =>
  lines.map((l, i) => item(l, x, top - i * leading, size));

/** An A4 page (595 × 842 pt) of `items`, page `n`. */
export const page = (items: LayoutItem[], extra: Partial<PageLayout> = {}, n = 1): PageLayout => ({
  page: n,
  width: 595,
  height: 842,
  items,
  segments: [],
  ...extra,
});
