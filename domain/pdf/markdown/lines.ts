/**
 * Text items → lines (one baseline) → fragments: a line cut where the gap between two items is wider than a word
 * space can stretch (a column gutter, a table cell border) or a drawn vertical line runs between them. Fragments are
 * what columns, tables and paragraphs are made of. Pure.
 */
import type { LayoutItem, Segment } from './types';

/** A run of text on one baseline, without a wide gap inside. */
export interface Fragment {
  text: string;
  x0: number;
  x1: number;
  /** Baseline. */
  y: number;
  /** Font size of most of its characters. */
  size: number;
  /** Most of its characters are bold / monospace. */
  bold: boolean;
  mono: boolean;
  group?: string;
  /** Index of the line it was cut from (fragments of one line share it). */
  line: number;
}

/** Baselines closer than this share of the font size are one line. */
const SAME_LINE_EM = 0.45;
/** A gap this many em wide is no word space: it cuts the line. */
const CUT_EM = 0.9;
/** A gap wider than this share of the font size holds a space. */
const SPACE_EM = 0.15;

interface Line {
  y: number;
  size: number;
  items: LayoutItem[];
}

/**
 * Two items that cover one another are not one line (a line above or below at close spacing, text printed twice).
 * A glyph kerned back over the last glyph of the item before it is no such cover: the raised, smaller `A` of the LaTeX
 * logo starts inside the `L` and runs on past it (`L`, `A`, `TEX`: three items, the `A` a little higher).
 */
const overlaps = (a: LayoutItem, b: LayoutItem) => {
  const o = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
  if (!(o > 0.5 * Math.min(a.w, b.w) && o > 0.5)) return false;
  const [left, right] = a.x <= b.x ? [a, b] : [b, a];
  const lastGlyph = left.w / Math.max(1, [...left.str].length);
  const kerned = right.x > left.x + left.w - lastGlyph && right.x + right.w > left.x + left.w;
  return !kerned;
};

/** Items grouped by baseline, top to bottom, each line's items left to right. */
export function groupLines(items: readonly LayoutItem[]): LayoutItem[][] {
  const usable = items.filter(
    (i) => i.str.trim() !== '' && [i.x, i.y, i.w, i.size].every(Number.isFinite) && i.size > 0,
  );
  const sorted = [...usable].sort((a, b) => b.y - a.y || a.x - b.x);
  const lines: Line[] = [];
  let open: Line[] = [];
  for (const it of sorted) {
    open = open.filter((l) => l.y - it.y <= SAME_LINE_EM * Math.max(l.size, it.size)).slice(-16);
    let best: Line | undefined;
    for (const l of open) {
      const dy = Math.abs(l.y - it.y);
      if (dy > SAME_LINE_EM * Math.max(l.size, it.size)) continue;
      if (it.group !== undefined && l.items[0].group !== it.group) continue;
      if (l.items.slice(-32).some((o) => overlaps(o, it))) continue;
      if (!best || dy < Math.abs(best.y - it.y)) best = l;
    }
    if (!best) {
      best = { y: it.y, size: it.size, items: [] };
      lines.push(best);
      open.push(best);
    }
    best.items.push(it);
    best.size = Math.max(best.size, it.size);
  }
  for (const l of lines) l.items.sort((a, b) => a.x - b.x);
  return lines.sort((a, b) => b.y - a.y).map((l) => l.items);
}

/** Joins items left to right, with a space where the gap holds one and the text does not. */
export function joinItems(items: readonly LayoutItem[]): string {
  let text = '';
  let prev: LayoutItem | undefined;
  for (const it of items) {
    if (prev) {
      const gap = it.x - (prev.x + prev.w);
      // OCR items are words: always a space between them.
      const word = prev.group !== undefined;
      if ((word || gap > SPACE_EM * Math.min(prev.size, it.size)) && !/\s$/.test(text) && !/^\s/.test(it.str))
        text += ' ';
    }
    text += it.str;
    prev = it;
  }
  return text.replace(/\s+/g, ' ').trim();
}

/** The value most of the characters carry. */
function majority<T>(items: readonly LayoutItem[], pick: (i: LayoutItem) => T): T {
  const weight = new Map<T, number>();
  for (const i of items) weight.set(pick(i), (weight.get(pick(i)) ?? 0) + i.str.length);
  let best: T = pick(items[0]);
  let w = -1;
  for (const [k, v] of weight) if (v > w) [best, w] = [k, v];
  return best;
}

const ruledBetween = (verticals: readonly Segment[], x0: number, x1: number, y: number, size: number) =>
  verticals.some((s) => s.x0 >= x0 - 0.5 && s.x1 <= x1 + 0.5 && s.y0 <= y + 0.5 * size && s.y1 >= y);

function toFragment(items: LayoutItem[], line: number): Fragment {
  const size = majority(items, (i) => Math.round(i.size * 4) / 4);
  return {
    text: joinItems(items),
    x0: Math.min(...items.map((i) => i.x)),
    x1: Math.max(...items.map((i) => i.x + Math.max(0, i.w))),
    y: majority(items, (i) => i.y),
    size,
    bold: majority(items, (i) => i.bold === true),
    mono: majority(items, (i) => i.mono === true),
    ...(items[0].group !== undefined ? { group: items[0].group } : {}),
    line,
  };
}

/**
 * An item that a vertical ruling crosses (the producer drew two cells' text in one run) is cut at the space nearest
 * to the ruling, character widths taken as equal.
 */
function cutAtRulings(items: readonly LayoutItem[], verticals: readonly Segment[]): LayoutItem[] {
  if (verticals.length === 0) return [...items];
  const out: LayoutItem[] = [];
  for (const it of items) {
    const crossing = verticals.find(
      (v) => v.x0 > it.x + 0.5 && v.x1 < it.x + it.w - 0.5 && v.y0 <= it.y + 0.5 * it.size && v.y1 >= it.y,
    );
    const spaces = [...it.str.matchAll(/ /g)].map((m) => m.index);
    if (!crossing || spaces.length === 0) {
      out.push(it);
      continue;
    }
    const per = it.w / it.str.length;
    const at = spaces.reduce((a, b) =>
      Math.abs(it.x + b * per - crossing.x0) < Math.abs(it.x + a * per - crossing.x0) ? b : a,
    );
    const left = it.str.slice(0, at);
    const right = it.str.slice(at + 1);
    out.push(...cutAtRulings([{ ...it, str: left, w: left.length * per }], verticals));
    out.push(...cutAtRulings([{ ...it, str: right, x: it.x + (at + 1) * per, w: right.length * per }], verticals));
  }
  return out;
}

/**
 * Fragments of a page read without drawings, by its items array: deciding which pages need drawings
 * (`needs-drawings.ts`) and the rules read the same items, most pages without any drawing. Arrays of items are not
 * changed once read (the count is checked all the same); fragments are not changed by their readers.
 */
const withoutDrawings = new WeakMap<readonly LayoutItem[], { count: number; frags: readonly Fragment[] }>();

/** The page's fragments, line by line top to bottom, left to right within a line. */
export function toFragments(items: readonly LayoutItem[], segments: readonly Segment[] = []): Fragment[] {
  const verticals = segments.filter((s) => s.x1 - s.x0 < 2 && s.y1 - s.y0 > 4);
  if (verticals.length > 0) return fragmentsOf(items, verticals);
  const known = withoutDrawings.get(items);
  if (known && known.count === items.length) return [...known.frags];
  const frags = fragmentsOf(items, verticals);
  withoutDrawings.set(items, { count: items.length, frags });
  return [...frags];
}

function fragmentsOf(items: readonly LayoutItem[], verticals: readonly Segment[]): Fragment[] {
  const out: Fragment[] = [];
  groupLines(cutAtRulings(items, verticals)).forEach((line, n) => {
    let cur: LayoutItem[] = [];
    for (const it of line) {
      const prev = cur[cur.length - 1];
      if (prev) {
        const end = prev.x + Math.max(0, prev.w);
        const em = Math.min(prev.size, it.size);
        if (it.x - end > CUT_EM * em || ruledBetween(verticals, end, it.x, it.y, em)) {
          out.push(toFragment(cur, n));
          cur = [];
        }
      }
      cur.push(it);
    }
    if (cur.length) out.push(toFragment(cur, n));
  });
  return out.filter((f) => f.text !== '');
}
