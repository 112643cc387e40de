/**
 * Where a grounded field's words stand beyond the text (contract §14): on a document's page with the box of the
 * block that holds them, or in a recording's time. Pure.
 */
import type { Bbox, SourceSpan } from '../chunks/chunk-markdown';
import type { FieldSource, TextSpan } from './ground';

/** A span of a document's text with the page and box of the block it falls in. */
export interface PagedSpan extends TextSpan {
  page?: number;
  bbox?: Bbox;
}

/** A span of a transcript with the seconds it was spoken in. */
export interface TimedSpan extends TextSpan {
  start_s?: number;
  end_s?: number;
}

const overlaps = (a: { start: number; end: number }, b: { start: number; end: number }) =>
  a.start < b.end && b.start < a.end;

/** The page of the first block the span falls in, and the box around its blocks on that page. */
function onPage<T extends TextSpan>(span: T, blocks: readonly SourceSpan[]): T & PagedSpan {
  const inside = blocks.filter((b) => overlaps(span, b));
  const first = inside[0];
  if (!first) return span;
  const boxes = inside.filter((b) => b.page === first.page && b.bbox).map((b) => b.bbox!);
  const bbox =
    boxes.length > 0
      ? ([
          Math.min(...boxes.map((b) => b[0])),
          Math.min(...boxes.map((b) => b[1])),
          Math.max(...boxes.map((b) => b[2])),
          Math.max(...boxes.map((b) => b[3])),
        ] as Bbox)
      : undefined;
  return { ...span, page: first.page, ...(bbox ? { bbox } : {}) };
}

/** Each source and each of its list items placed by `place`; null stays null. */
function placeEach<P extends TextSpan>(
  sources: Record<string, FieldSource | null>,
  place: <T extends TextSpan>(span: T) => T & P,
): Record<string, (FieldSource & P) | null> {
  return Object.fromEntries(
    Object.entries(sources).map(([name, s]) => [
      name,
      s && { ...place(s), ...(s.items ? { items: s.items.map((i) => place(i)) } : {}) },
    ]),
  );
}

/** Each source (and each list item) with its page and box, from the blocks' spans in the same text. */
export function placeOnPages(
  sources: Record<string, FieldSource | null>,
  blocks: readonly SourceSpan[],
): Record<string, (FieldSource & PagedSpan) | null> {
  return placeEach<PagedSpan>(sources, (s) => onPage(s, blocks));
}

/** A piece of a transcript's text and when it was said. */
export interface TimedText {
  start: number;
  end: number;
  start_s: number;
  end_s: number;
}

/**
 * Where each segment (and each timed word, when the segments carry words) stands in a transcript's text made of the
 * segments' texts in order: found one after the other, so a repeated phrase finds its own place.
 */
export function timedTexts(
  text: string,
  segments: readonly {
    start: number;
    end: number;
    text: string;
    words?: readonly { word: string; start: number; end: number }[];
  }[],
): TimedText[] {
  const out: TimedText[] = [];
  let cursor = 0;
  for (const seg of segments) {
    const t = seg.text.trim();
    const at = t ? text.indexOf(t, cursor) : -1;
    if (at === -1) continue;
    let w = at;
    const words: TimedText[] = [];
    for (const word of seg.words ?? []) {
      const ww = word.word.trim();
      const wat = ww ? text.indexOf(ww, w) : -1;
      if (wat === -1 || wat >= at + t.length) continue;
      words.push({ start: wat, end: wat + ww.length, start_s: word.start, end_s: word.end });
      w = wat + ww.length;
    }
    out.push(...(words.length ? words : [{ start: at, end: at + t.length, start_s: seg.start, end_s: seg.end }]));
    cursor = at + t.length;
  }
  return out;
}

function inTime<T extends TextSpan>(span: T, timed: readonly TimedText[]): T & TimedSpan {
  const inside = timed.filter((t) => overlaps(span, t));
  if (!inside.length) return span;
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return {
    ...span,
    start_s: r(Math.min(...inside.map((t) => t.start_s))),
    end_s: r(Math.max(...inside.map((t) => t.end_s))),
  };
}

/** Each source (and each list item) with the seconds its words were said in. */
export function placeInTime(
  sources: Record<string, FieldSource | null>,
  timed: readonly TimedText[],
): Record<string, (FieldSource & TimedSpan) | null> {
  return placeEach<TimedSpan>(sources, (s) => inTime(s, timed));
}

/**
 * A part of a text made of parts (a session's page, transcript and attachments under their headings): where its
 * text stands in the whole (`start`, `end`) and where that text begins in the part's own text (`offset`: what was
 * trimmed before it). The part's text in the whole is a prefix of its own from `offset` on (clipped at its end).
 */
export interface TextPart<N extends string = string> {
  name: N;
  start: number;
  end: number;
  offset: number;
}

/** A span of a text made of parts, in its part's own text; in time too where the part is a timed transcript. */
export interface PartSpan<N extends string = string> extends TimedSpan {
  part?: N;
}

function inPart<T extends TextSpan, N extends string>(
  span: T,
  parts: readonly TextPart<N>[],
  timed: Partial<Record<N, readonly TimedText[]>>,
): T & PartSpan<N> {
  const p = parts.find((x) => x.start <= span.start && span.end <= x.end);
  if (!p) return span;
  const shift = p.offset - p.start;
  const at = { ...span, part: p.name, start: span.start + shift, end: span.end + shift };
  const t = timed[p.name];
  return t ? inTime(at, t) : at;
}

/**
 * Each source (and each list item) of a text made of parts placed in the part it falls in: `part`, and `start` and
 * `end` offsets into that part's own text (its `text` the same words), with the seconds where `timed` holds that
 * part's timed texts (offsets into the part's own text). A span not inside one part (a heading between them, or a
 * list field whose items stand in different parts) keeps its offsets into the whole text and names no part.
 */
export function placeInParts<N extends string>(
  sources: Record<string, FieldSource | null>,
  parts: readonly TextPart<N>[],
  timed: Partial<Record<N, readonly TimedText[]>> = {},
): Record<string, (FieldSource & PartSpan<N>) | null> {
  return placeEach<PartSpan<N>>(sources, (s) => inPart(s, parts, timed));
}
