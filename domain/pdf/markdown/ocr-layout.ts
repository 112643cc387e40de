/**
 * A scanned page's layout from tesseract's TSV: every recognised word a text item at its box (pixels turned into
 * points, y flipped) on its line's baseline, its size read from its line's words, and tesseract's block and paragraph
 * as the item's group, so the Markdown rules join a paragraph's lines and keep paragraphs apart as tesseract saw them,
 * and find tables in the words' alignment. Pure.
 */
import { ASCENT } from './provenance';
import type { LayoutItem, PageLayout } from './types';

/** The page size and the words of a TSV, in image pixels (top-left origin). */
export interface OcrLayout {
  width: number;
  height: number;
  words: {
    text: string;
    left: number;
    top: number;
    width: number;
    height: number;
    group: string;
    line: string;
    /** The line's baseline and type size in pixels (absent from older layouts: read from the word's own box). */
    baseline?: number;
    size?: number;
  }[];
}

type Word = OcrLayout['words'][number];

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];

/*
 * Tesseract's word boxes are tight to the glyphs, and its line boxes the union of them: an umlaut, a descender or an
 * accent makes a line of one type size a third taller than the next. Most words end on the baseline and reach the
 * ascenders, so a line's baseline is the median of its words' bottoms and its size the median of their heights over
 * the ascent the blocks' boxes reach (provenance.ts), so a block's box meets its words' tops.
 */

/**
 * Each word's baseline and size from its line: a paragraph's lines whose baselines lie within a third of a line's size
 * of each other are one (tesseract cuts a short word beside a gap into a line of its own), and a line's size is its
 * paragraph's usual one unless it differs by more than a quarter (a heading tesseract put in the paragraph).
 */
function withLines(words: Word[]): Word[] {
  const lines = new Map<string, Word[]>();
  for (const w of words) {
    const l = lines.get(w.line);
    if (l) l.push(w);
    else lines.set(w.line, [w]);
  }
  const groups = new Map<string, { baseline: number; size: number; words: Word[] }[]>();
  for (const ws of lines.values()) {
    const line = {
      baseline: median(ws.map((w) => w.top + w.height)),
      size: median(ws.map((w) => w.height)) / ASCENT,
      words: ws,
    };
    const g = groups.get(ws[0].group);
    if (g) g.push(line);
    else groups.set(ws[0].group, [line]);
  }
  const out: Word[] = [];
  for (const ls of groups.values()) {
    const merged: typeof ls = [];
    for (const l of [...ls].sort((a, b) => a.baseline - b.baseline)) {
      const last = merged[merged.length - 1];
      if (last && l.baseline - last.baseline < Math.min(l.size, last.size) / 3) {
        if (l.words.length > last.words.length) [last.baseline, last.size] = [l.baseline, l.size];
        last.words.push(...l.words);
      } else merged.push({ ...l, words: [...l.words] });
    }
    const usual = median(merged.map((m) => m.size));
    for (const m of merged) {
      const size = Math.abs(m.size - usual) <= 0.25 * usual ? usual : m.size;
      const line = m.words[0].line;
      for (const w of m.words) out.push({ ...w, line, baseline: m.baseline, size });
    }
  }
  return out;
}

/** Parses tesseract's TSV into the page size and the words with their boxes (confidence ≥ 0, text not empty). */
export function parseTsvLayout(tsv: string): OcrLayout {
  let width = 0;
  let height = 0;
  const words: Word[] = [];
  for (const row of tsv.split('\n')) {
    const c = row.split('\t');
    if (c.length < 12) continue;
    const [level, , block, par, line, , left, top, w, h] = c.map(Number);
    if (level === 1) [width, height] = [w, h];
    if (level !== 5) continue;
    const text = c.slice(11).join('\t').trim();
    if (!text || !(Number(c[10]) >= 0)) continue;
    words.push({ text, left, top, width: w, height: h, group: `${block}.${par}`, line: `${block}.${par}.${line}` });
  }
  return { width, height, words: withLines(words) };
}

/** The layout of page `page` from an OCR layout read at `dpi`. */
export function ocrPageLayout(page: number, ocr: OcrLayout, dpi = 300): PageLayout {
  const k = 72 / dpi;
  const H = ocr.height;
  const items: LayoutItem[] = ocr.words.map((w) => ({
    str: w.text,
    x: w.left * k,
    // Older layouts: the baseline near the bottom of the box, below which descenders reach (a fifth of its height),
    // and a box that spans ascenders to descenders (about 1.2 times the type size).
    y: (H - (w.baseline ?? w.top + w.height * 0.8)) * k,
    w: w.width * k,
    size: (w.size ?? w.height / 1.2) * k,
    group: w.group,
  }));
  return { page, width: ocr.width * k, height: H * k, items, segments: [] };
}
