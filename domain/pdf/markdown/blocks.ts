/**
 * A page's elements in reading order → blocks: paragraphs (lines joined), list items, code (monospace lines) and
 * tables. Where a paragraph ends: a vertical gap wider than the line spacing, a change of font size, weight or
 * family, a first-line indent, a list marker, a short line that ends a sentence, another producer paragraph (OCR).
 * Whether a block is a heading is the document's decision (`document.ts`): it needs the body size of all pages. Pure.
 */
import type { Fragment } from './lines';
import type { Element } from './order';
import type { Table } from './tables';

/** One line of a block: a line's fragments in one column, joined. */
export interface TextLine {
  text: string;
  x0: number;
  x1: number;
  y: number;
  size: number;
  bold: boolean;
  mono: boolean;
  group?: string;
  /**
   * Runs of text the line is cut into by wide gaps, a leading section number not counted: a heading is one run, a
   * table's header row several.
   */
  parts?: number;
}

export type Block =
  | { kind: 'text'; lines: TextLine[]; size: number; bold: boolean }
  | { kind: 'list'; lines: TextLine[]; size: number; bold: boolean; marker: string; indent: number }
  | { kind: 'code'; lines: TextLine[]; size: number; bold: boolean }
  | { kind: 'table'; table: Table };

const BULLET = /^([•·◦▪▫‣⁃○●■□►▸➢✓–—*-])\s+(?=\S)/u;
const NUMBERED = /^(\(?(\d{1,3}|[a-z]|[ivx]{1,4})[.)])\s+(?=\S)/i;

/** The list marker a line starts with, normalised (`-` for bullets, `3.` for numbers), or undefined. */
export function listMarker(text: string): { marker: string; rest: string } | undefined {
  const b = BULLET.exec(text);
  if (b) return { marker: '-', rest: text.slice(b[0].length) };
  const n = NUMBERED.exec(text);
  if (n) {
    const label = n[2];
    const num = /^\d+$/.test(label) ? `${Number(label)}.` : `${label})`;
    return { marker: num, rest: text.slice(n[0].length) };
  }
  return undefined;
}

/** A section number standing apart before its title ("2.3", "A.1", "Chapter 3"). */
const SECTION_LABEL = /^((appendix|chapter|part)\s+)?([\d]{1,3}|[A-Z])(\.\d{1,3})*\.?$/i;

function mergeLine(frags: Fragment[]): TextLine {
  const chars = (f: Fragment) => f.text.length;
  const label = frags.length > 1 && SECTION_LABEL.test(frags[0].text.trim());
  const main = frags.reduce((a, f) => (chars(f) > chars(a) ? f : a));
  // A bracketed category set apart at the right margin ("[Function]" of a Texinfo definition, whose signature wraps
  // onto the next line) is read first: the signature stays whole.
  const last = frags[frags.length - 1];
  const category = frags.length > 1 && /^\[[^\]]{1,30}\]$/.test(last.text.trim()) ? last : undefined;
  const ordered = category ? [category, ...frags.slice(0, -1)] : frags;
  return {
    text: ordered.map((f) => f.text).join(' '),
    x0: frags[0].x0,
    x1: frags[frags.length - 1].x1,
    y: main.y,
    size: main.size,
    bold: frags.every((f) => f.bold || /^[\W\d]+$/u.test(f.text)),
    mono: frags.every((f) => f.mono),
    ...(main.group !== undefined ? { group: main.group } : {}),
    ...(frags.length > 1 ? { parts: frags.length - (label ? 1 : 0) } : {}),
  };
}

const LEADERS = /(\s?\.){4,}\s*[\divxlc]+$/i;
const LEADERS_RUN = /\s*(\s?\.){4,}\s*/g;
const ENDS_SENTENCE = /[.!?:;]["'”’)]?$/u;

/** Blocks of one page, in reading order. */
export function toBlocks(elements: readonly Element[]): Block[] {
  // Lines: consecutive fragments of one line.
  const items: (TextLine | Table)[] = [];
  let cur: Fragment[] = [];
  const flushLine = () => {
    if (cur.length) items.push(mergeLine(cur));
    cur = [];
  };
  for (const e of elements) {
    if (e.kind === 'table') {
      flushLine();
      items.push(e.t);
      continue;
    }
    if (cur.length && cur[0].line !== e.f.line) flushLine();
    cur.push(e.f);
  }
  flushLine();

  const blocks: Block[] = [];
  let block: Exclude<Block, { kind: 'table' }> | undefined;
  let spacing = 0;
  const close = () => {
    if (block) blocks.push(block);
    block = undefined;
    spacing = 0;
  };
  for (const it of items) {
    if (!('text' in it)) {
      close();
      blocks.push({ kind: 'table', table: it });
      continue;
    }
    const marker = listMarker(it.text);
    // A table of contents line (dot leaders up to a page number) stands alone.
    if (LEADERS.test(it.text)) {
      close();
      blocks.push({
        kind: 'text',
        lines: [{ ...it, text: it.text.replace(LEADERS_RUN, ' … ') }],
        size: it.size,
        bold: false,
      });
      continue;
    }
    const prev = block?.lines[block.lines.length - 1];
    let startNew = !block || !prev;
    if (block && prev) {
      const gap = prev.y - it.y;
      const em = Math.max(prev.size, it.size);
      const sizeChange = Math.abs(prev.size - it.size) > 0.12 * em;
      const styleChange = prev.bold !== it.bold || prev.mono !== it.mono;
      const groupChange = prev.group !== it.group;
      const newColumn = gap < -0.5 * em || gap > 6 * em;
      const wideGap = spacing > 0 ? gap > 1.35 * spacing + 0.1 * em : gap > 1.6 * em;
      const right = Math.max(...block.lines.map((l) => l.x1));
      const shortEnd = prev.x1 < right - 4 * em && ENDS_SENTENCE.test(prev.text);
      const continuesSentence = !ENDS_SENTENCE.test(prev.text) && /^[\p{Ll}]/u.test(it.text);
      if (block.kind === 'code') startNew = !it.mono || (gap > 2.2 * em && !newColumn);
      else if (it.group !== undefined || prev.group !== undefined)
        // Tesseract sometimes gives a paragraph's last line a paragraph of its own: a sentence running on at the
        // usual line spacing is one paragraph.
        startNew =
          (groupChange && !(continuesSentence && gap > 0 && gap < 1.8 * em)) ||
          // A line box without descenders is lower: OCR sizes vary more than a font's.
          Math.abs(prev.size - it.size) > 0.3 * em ||
          marker !== undefined;
      else if (newColumn) startNew = !continuesSentence || sizeChange || styleChange;
      else {
        const indent = it.x0 - block.lines[0].x0;
        const hanging = block.kind === 'list' && indent > 0.5 * em;
        startNew =
          sizeChange ||
          styleChange ||
          wideGap ||
          marker !== undefined ||
          shortEnd ||
          (block.kind === 'list' ? !hanging && it.x0 < block.lines[0].x0 + 0.5 * em && !continuesSentence : false) ||
          (block.kind === 'text' && block.lines.length >= 1 && indent > 0.8 * em && !continuesSentence);
      }
      if (!startNew && gap > 0 && !newColumn && block.lines.length >= 1) spacing = spacing || gap;
    }
    if (startNew) {
      close();
      if (it.mono) block = { kind: 'code', lines: [it], size: it.size, bold: it.bold };
      else if (marker)
        block = { kind: 'list', lines: [it], size: it.size, bold: it.bold, marker: marker.marker, indent: it.x0 };
      else block = { kind: 'text', lines: [it], size: it.size, bold: it.bold };
    } else block!.lines.push(it);
  }
  close();
  return blocks;
}

/** Lines of a paragraph as one text: a word hyphenated at a line end is whole again. */
export function joinLines(lines: readonly string[]): string {
  let out = '';
  for (const raw of lines) {
    const line = raw.trim();
    if (!line) continue;
    if (!out) {
      out = line;
      continue;
    }
    // The end of `out` is tested on its last characters: an end-anchored pattern on the growing paragraph would scan
    // all of it for every line (quadratic in a paragraph's length).
    const soft = out.endsWith('\u00AD');
    const hyphen = out.endsWith('-') && /\p{L}-$/u.test(out.slice(-3)) && /^\p{Ll}/u.test(line);
    if (soft) out = out.slice(0, -1) + line;
    else if (hyphen) out = out.slice(0, -1) + line;
    else out += ` ${line}`;
  }
  return out.replace(/\u00AD/g, '');
}
