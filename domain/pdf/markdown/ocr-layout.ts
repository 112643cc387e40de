/**
 * A scanned page's layout from tesseract's TSV: every recognised word a text item at its box (pixels turned into
 * points, y flipped), its size the height of its line, and tesseract's block and paragraph as the item's group, so
 * the Markdown rules join a paragraph's lines and keep paragraphs apart as tesseract saw them, and find tables in
 * the words' alignment. Pure.
 */
import type { LayoutItem, PageLayout } from './types';

/** The page size and the words of a TSV, in image pixels (top-left origin). */
export interface OcrLayout {
  width: number;
  height: number;
  words: { text: string; left: number; top: number; width: number; height: number; group: string; line: string }[];
}

/** Parses tesseract's TSV into the page size and the words with their boxes (confidence ≥ 0, text not empty). */
export function parseTsvLayout(tsv: string): OcrLayout {
  let width = 0;
  let height = 0;
  const lineHeight = new Map<string, number>();
  const words: OcrLayout['words'] = [];
  for (const row of tsv.split('\n')) {
    const c = row.split('\t');
    if (c.length < 12) continue;
    const [level, , block, par, line, , left, top, w, h] = c.map(Number);
    if (level === 1) [width, height] = [w, h];
    const key = `${block}.${par}.${line}`;
    if (level === 4) lineHeight.set(key, h);
    if (level !== 5) continue;
    const text = c.slice(11).join('\t').trim();
    if (!text || !(Number(c[10]) >= 0)) continue;
    words.push({ text, left, top, width: w, height: h, group: `${block}.${par}`, line: key });
  }
  return { width, height, words: words.map((x) => ({ ...x, height: lineHeight.get(x.line) ?? x.height })) };
}

/** The layout of page `page` from an OCR layout read at `dpi`. */
export function ocrPageLayout(page: number, ocr: OcrLayout, dpi = 300): PageLayout {
  const k = 72 / dpi;
  const H = ocr.height;
  const items: LayoutItem[] = ocr.words.map((w) => ({
    str: w.text,
    x: w.left * k,
    // The baseline is near the bottom of the line box, below which descenders reach: a fifth of its height.
    y: (H - (w.top + w.height * 0.8)) * k,
    w: w.width * k,
    // A line box spans ascenders to descenders: about 1.2 times the font size.
    size: (w.height / 1.2) * k,
    group: w.group,
  }));
  return { page, width: ocr.width * k, height: H * k, items, segments: [] };
}
