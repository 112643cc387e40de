/**
 * The blocks of a Markdown text as a chunker cuts it (contract §14): headings, paragraphs, list items, tables (GFM
 * rows, or an HTML table) and code (a fence, or an indented block), each with its offsets into the text. Read line by
 * line, the way CommonMark sets blocks apart (blank lines, a heading's `#`, a fence, a list marker, a table's pipes);
 * inline syntax is not parsed, as no cut falls inside a line's inline spans. Pure.
 */

export type UnitKind = 'heading' | 'paragraph' | 'list_item' | 'table' | 'code';

export interface MarkdownUnit {
  kind: UnitKind;
  /** Offsets into the text: `text.slice(start, end)` is the block as written, without its trailing newline. */
  start: number;
  end: number;
  /** Headings: 1 to 6, and the title without its `#`s. */
  level?: number;
  title?: string;
}

const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const LIST_ITEM = /^ {0,3}([-*+]|\d{1,9}[.)])[ \t]+\S/;
const TABLE_ROW = /^ {0,3}\|/;
const HTML_TABLE = /^ {0,3}<table\b/i;
const INDENTED = /^( {4}|\t)/;

interface Line {
  text: string;
  start: number;
  end: number;
}

function linesOf(text: string): Line[] {
  const lines: Line[] = [];
  let start = 0;
  while (start <= text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl === -1 ? text.length : nl;
    lines.push({ text: text.slice(start, end).replace(/\r$/, ''), start, end });
    if (nl === -1) break;
    start = nl + 1;
  }
  return lines;
}

const blank = (l: Line) => l.text.trim() === '';

/** The text's blocks in order; `plain`: paragraphs only (plain text, where no line is markup). */
export function markdownUnits(text: string, opts: { plain?: boolean } = {}): MarkdownUnit[] {
  const lines = linesOf(text);
  const units: MarkdownUnit[] = [];
  if (opts.plain) {
    for (let i = 0; i < lines.length; i++) {
      if (blank(lines[i])) continue;
      let j = i;
      while (j + 1 < lines.length && !blank(lines[j + 1])) j++;
      units.push({ kind: 'paragraph', start: lines[i].start, end: lines[j].end });
      i = j;
    }
    return units;
  }
  const push = (kind: UnitKind, from: number, to: number, extra: Partial<MarkdownUnit> = {}) => {
    // `to` is the last line's index; trailing spaces of the last line stay with it.
    units.push({ kind, start: lines[from].start, end: lines[to].end, ...extra });
  };
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (blank(line)) {
      i++;
      continue;
    }
    const heading = HEADING.exec(line.text);
    if (heading) {
      push('heading', i, i, { level: heading[1].length, title: heading[2].trim() });
      i++;
      continue;
    }
    const fence = FENCE.exec(line.text);
    if (fence) {
      const mark = fence[1];
      let j = i + 1;
      while (j < lines.length && !lines[j].text.trimStart().startsWith(mark)) j++;
      push('code', i, Math.min(j, lines.length - 1));
      i = j + 1;
      continue;
    }
    if (HTML_TABLE.test(line.text)) {
      let j = i;
      while (j < lines.length - 1 && !/<\/table>/i.test(lines[j].text)) j++;
      push('table', i, j);
      i = j + 1;
      continue;
    }
    if (TABLE_ROW.test(line.text)) {
      let j = i;
      while (j + 1 < lines.length && TABLE_ROW.test(lines[j + 1].text)) j++;
      push('table', i, j);
      i = j + 1;
      continue;
    }
    if (INDENTED.test(line.text) && (units.length === 0 || i === 0 || blank(lines[i - 1]))) {
      // An indented code block: indented lines (blank lines inside it included).
      let j = i;
      while (j + 1 < lines.length && (INDENTED.test(lines[j + 1].text) || blank(lines[j + 1]))) j++;
      while (blank(lines[j])) j--;
      push('code', i, j);
      i = j + 1;
      continue;
    }
    const item = LIST_ITEM.test(line.text);
    // A paragraph or a list item: its lines up to a blank line or the start of another block.
    let j = i;
    while (j + 1 < lines.length) {
      const next = lines[j + 1].text;
      if (blank(lines[j + 1]) || HEADING.test(next) || FENCE.test(next) || TABLE_ROW.test(next)) break;
      if (HTML_TABLE.test(next) || LIST_ITEM.test(next)) break;
      j++;
    }
    push(item ? 'list_item' : 'paragraph', i, j);
    i = j + 1;
  }
  return units;
}
