/**
 * The pieces a chunker packs (contract §14): a block of Markdown as one piece when it fits the budget, or cut where
 * its own kind allows: a paragraph or list item at its sentences, a table at its rows with its header repeated in
 * each part, code at its lines inside its fence; a sentence over the budget at its words, a word over it at the
 * longest prefix that fits. Every piece is within the budget. Pure.
 */
import type { MarkdownUnit } from './markdown-units';
import type { Measure, TokenCounter } from './tokens';

export interface Piece {
  /** Offsets into the text of what the piece covers. */
  start: number;
  end: number;
  /** What it says: the covered text, or a table's or code's part with its header or fence added. */
  text: string;
  tokens: number;
  unit: number;
  /** A piece that is the text between its offsets, of two pre-split pieces or more: its edges (tokens.ts). */
  edges?: Measure;
}

/** The piece of the text between `s` and `e`, counted with its edges. */
function plainPiece(text: string, s: number, e: number, unit: number, count: TokenCounter): Piece {
  const t = text.slice(s, e);
  const m = count.measure(t);
  return { start: s, end: e, text: t, tokens: m.tokens, unit, ...(m.pieces >= 2 ? { edges: m } : {}) };
}

/** Sentence ends: `.`, `!`, `?` or `…` (closing quotes and brackets after it), then space, then what starts one. */
const SENTENCE_END = /[.!?…]["'”’)\]]*\s+(?=["'“‘(\[]?[\p{Lu}\p{N}])/gu;

type Span = [number, number];

function sentenceSpans(text: string, start: number, end: number): Span[] {
  const slice = text.slice(start, end);
  const spans: Span[] = [];
  let from = 0;
  SENTENCE_END.lastIndex = 0;
  for (let m = SENTENCE_END.exec(slice); m; m = SENTENCE_END.exec(slice)) {
    const cut = m.index + m[0].trimEnd().length;
    spans.push([start + from, start + cut]);
    from = m.index + m[0].length;
  }
  if (from < slice.length) spans.push([start + from, end]);
  return spans;
}

/** Spans of `[start, end)` cut at whitespace (and inside a word only when one word alone is over the budget). */
function wordSpans(text: string, start: number, end: number, max: number, count: TokenCounter): Span[] {
  const spans: Span[] = [];
  const words = [...text.slice(start, end).matchAll(/\S+/g)].map((m): Span => [
    start + m.index,
    start + m.index + m[0].length,
  ]);
  let from = -1;
  let to = -1;
  for (const [ws, we] of words) {
    if (from >= 0 && count.count(text.slice(from, we)) <= max) {
      to = we;
      continue;
    }
    if (from >= 0) spans.push([from, to]);
    from = ws;
    to = we;
    // One word over the budget (a hash, a data URI; one of over 4 characters a token is taken as one): parts of at
    // most `max` characters (a token is at least one character of ASCII), halved while a part is still over the
    // budget, so no count runs on a long run of letters (tiktoken's merges are quadratic in a piece's length).
    while (to - from > 4 * max || count.count(text.slice(from, to)) > max) {
      let size = Math.min(max, to - from);
      while (size > 1 && count.count(text.slice(from, from + size)) > max) size = Math.ceil(size / 2);
      spans.push([from, from + size]);
      from += size;
    }
  }
  if (from >= 0) spans.push([from, to]);
  return spans;
}

/** A block's lines (offsets of each line without its newline). */
function lineSpans(text: string, start: number, end: number): Span[] {
  const spans: Span[] = [];
  let from = start;
  for (let nl = text.indexOf('\n', from); nl !== -1 && nl < end; nl = text.indexOf('\n', from)) {
    spans.push([from, nl]);
    from = nl + 1;
  }
  spans.push([from, end]);
  return spans;
}

const GFM_SEPARATOR = /^\s*\|?\s*:?-{3,}/;
/** Tokens below the budget under which a sum of parts is taken for the whole without counting it again. */
const NEAR_BUDGET = 16;

/** Rows (or lines) packed into parts of at most `max` tokens, each part written with `head` before it (after the
 * first) and `tail` after it; a row over the budget alone is cut at its words. */
function grouped(
  text: string,
  rows: Span[],
  head: string,
  tail: string,
  max: number,
  count: TokenCounter,
  unit: number,
  firstStart: number,
): Piece[] {
  const pieces: Piece[] = [];
  let group: Span[] = [];
  const textOf = (g: Span[], first: boolean) =>
    (first ? text.slice(firstStart, g[g.length - 1][1]) : head + text.slice(g[0][0], g[g.length - 1][1])) + tail;
  const close = () => {
    if (!group.length) return;
    const first = pieces.length === 0;
    const t = textOf(group, first);
    pieces.push({
      start: first ? firstStart : group[0][0],
      end: group[group.length - 1][1],
      text: t,
      tokens: count.count(t),
      unit,
    });
    group = [];
  };
  // The group's count: exact when it was last counted whole, plus each row added since (with the line break before
  // it). A sum of parts is within a few tokens of the whole, so the whole is counted again only near the budget:
  // packing stays linear in the rows, not quadratic.
  let estimate = 0;
  for (const row of rows) {
    if (group.length) {
      const next = estimate + count.count(text.slice(group[group.length - 1][1], row[1]));
      if (next <= max - NEAR_BUDGET) {
        group.push(row);
        estimate = next;
        continue;
      }
      const exact = count.count(textOf([...group, row], pieces.length === 0));
      if (exact <= max) {
        group.push(row);
        estimate = exact;
        continue;
      }
      close();
    }
    estimate = count.count(textOf([row], pieces.length === 0));
    if (estimate > max) {
      // A row that alone with its header is over the budget: its words, without the header.
      for (const [s, e] of wordSpans(text, row[0], row[1], max, count))
        pieces.push(plainPiece(text, s, e, unit, count));
      continue;
    }
    group.push(row);
  }
  close();
  return pieces;
}

/** The unit as pieces within `max` tokens. */
export function unitPieces(text: string, u: MarkdownUnit, index: number, max: number, count: TokenCounter): Piece[] {
  const unitPiece = plainPiece(text, u.start, u.end, index, count);
  if (unitPiece.tokens <= max) return [unitPiece];
  const whole = unitPiece.text;
  const piece = ([s, e]: Span): Piece => plainPiece(text, s, e, index, count);
  if (u.kind === 'table') {
    const lines = lineSpans(text, u.start, u.end);
    const html = /^\s*<table\b/i.test(whole);
    if (html) {
      // Rows start at `<tr`; the header is what comes before the first row without `<th`.
      const rows: Span[] = [];
      const re = /<tr\b/gi;
      for (let m = re.exec(whole); m; m = re.exec(whole)) rows.push([u.start + m.index, u.end]);
      rows.forEach((r, k) => (r[1] = k + 1 < rows.length ? rows[k + 1][0] : u.start + whole.search(/<\/table>\s*$/i)));
      const firstBody = rows.findIndex(([s, e]) => !/<th\b/i.test(text.slice(s, e)));
      const bodyRows = firstBody === -1 ? rows : rows.slice(firstBody);
      const headEnd = bodyRows.length ? bodyRows[0][0] : u.start;
      const head = text.slice(u.start, headEnd);
      if (bodyRows.length) return grouped(text, bodyRows, head, '</table>', max, count, index, u.start);
    } else {
      const headLines = lines.length > 1 && GFM_SEPARATOR.test(text.slice(...lines[1])) ? 2 : 0;
      const head = headLines ? text.slice(lines[0][0], lines[1][1]) + '\n' : '';
      return grouped(text, lines.slice(headLines), head, '', max, count, index, u.start);
    }
  }
  if (u.kind === 'code') {
    const lines = lineSpans(text, u.start, u.end);
    const fenced = /^\s*(`{3,}|~{3,})/.exec(text.slice(...lines[0]));
    if (fenced && lines.length > 2) {
      const open = text.slice(...lines[0]) + '\n';
      const closing = text.slice(...lines[lines.length - 1]);
      const close = /^\s*(`{3,}|~{3,})\s*$/.test(closing) ? '\n' + closing : '\n' + fenced[1];
      const inner = /^\s*(`{3,}|~{3,})\s*$/.test(closing) ? lines.slice(1, -1) : lines.slice(1);
      // The first part starts at the fence as written; the others repeat it, and each closes it.
      return grouped(text, inner, open, close, max, count, index, u.start);
    }
    return grouped(text, lines, '', '', max, count, index, u.start);
  }
  // Paragraphs, list items (and a heading over the budget): sentences, each over the budget cut at its words.
  return sentenceSpans(text, u.start, u.end).flatMap((s) => {
    const p = piece(s);
    return p.tokens <= max ? [p] : wordSpans(text, s[0], s[1], max, count).map(piece);
  });
}
