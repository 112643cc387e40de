/**
 * Reading order of a page's fragments and tables: top to bottom, and where a clear vertical gutter separates a left
 * and a right block, column by column (recursively, so three columns work too). Whatever crosses the gutter (a
 * title, a wide table, a footer) splits the page into bands read one after the other. A journal page lets many rows
 * cross (a title block, an abstract, a wide float: up to 45 % of its rows, in a few bands); of a candidate gutter only its stretch
 * crossed least counts (the candidate may reach into a column's short lines), and the gutter crossed by the fewest
 * rows wins (a wide table's cell gaps are crossed by every column line). Pure.
 */
import { gutterCandidates, type Gutter } from '../layout';
import type { Fragment } from './lines';
import type { Table } from './tables';

export type Element = { kind: 'text'; f: Fragment } | { kind: 'table'; t: Table };

interface Box {
  e: Element;
  x0: number;
  x1: number;
  top: number;
  size: number;
  /** Row key: fragments of one line share it. */
  row: string;
}

const GUTTER_MIN_EM = 1.0;
/** Rows crossing a gutter: at most this share of a page's rows when they are few... */
const GUTTER_MAX_CROSSING = 0.12;
/** ...or this share when they stand together in a few bands (a title block, an abstract, wide floats, a footer). */
const GUTTER_MAX_BANDED = 0.45;
const MAX_CROSSING_BANDS = 4;
const COLUMN_MIN_ROWS = 3;
const MAX_DEPTH = 3;
const BAND_GAP_EM = 4;

/** A fragment stands at its line's top baseline: fragments of one line in fonts with other baselines stay together. */
function box(e: Element, lineTop: Map<number, number>): Box {
  if (e.kind === 'table') return { e, x0: e.t.x0, x1: e.t.x1, top: e.t.top, size: 10, row: `t${e.t.top}` };
  return { e, x0: e.f.x0, x1: e.f.x1, top: lineTop.get(e.f.line) ?? e.f.y, size: e.f.size, row: `l${e.f.line}` };
}

const median = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : 0;
};

function rowsOf(boxes: Box[]): Box[][] {
  const m = new Map<string, Box[]>();
  for (const b of boxes) {
    const row = m.get(b.row);
    if (row) row.push(b);
    else m.set(b.row, [b]);
  }
  return [...m.values()];
}

/**
 * Where a candidate gutter is crossed least: the widest stretch of it that the fewest boxes cross. A candidate lets
 * a share of the rows cross (a title block, a wide float), so it may reach into a column's shorter lines.
 */
function narrowest(boxes: Box[], g: Gutter): Gutter & { crossing: number } {
  const xs: number[] = [];
  for (let x = g.left; x <= g.right; x += 1) xs.push(x);
  const counts = xs.map((x) => boxes.filter((b) => b.x0 < x && b.x1 > x).length);
  const min = Math.min(...counts);
  let best = { left: g.left, right: g.right, w: -1 };
  for (let i = 0; i < xs.length;) {
    if (counts[i] !== min) {
      i++;
      continue;
    }
    let j = i;
    while (j + 1 < xs.length && counts[j + 1] === min) j++;
    if (xs[j] - xs[i] > best.w) best = { left: xs[i], right: xs[j], w: xs[j] - xs[i] };
    i = j + 1;
  }
  return { left: best.left, right: best.right, crossing: min };
}

/** Runs of consecutive rows (top to bottom) that cross the gutter. */
function crossingBands(rows: Box[][], g: Gutter): number {
  const tops = rows.map((r) => ({ top: r[0].top, crosses: r.some((b) => b.x0 < g.right && b.x1 > g.left) }));
  tops.sort((a, b) => b.top - a.top);
  return tops.filter((t, i) => t.crosses && !tops[i - 1]?.crosses).length;
}

function findGutter(boxes: Box[]): Gutter | undefined {
  const rows = rowsOf(boxes);
  if (rows.length < COLUMN_MIN_ROWS) return undefined;
  const minX = Math.min(...boxes.map((b) => b.x0));
  const maxX = Math.max(...boxes.map((b) => b.x1));
  const span = maxX - minX;
  const em = median(boxes.map((b) => b.size));
  if (!(span > 8 * em)) return undefined;
  const candidates = gutterCandidates(rows, minX, span, {
    maxBins: 1000,
    lo: 0.15,
    hi: 0.85,
    maxCrossing: Math.max(2, Math.floor(GUTTER_MAX_BANDED * rows.length)),
    minWidth: GUTTER_MIN_EM * em,
  });
  // The gutter crossed least comes first (a wide float's cell gaps are crossed by every line of the columns).
  const narrowed = candidates.map((c) => narrowest(boxes, c));
  narrowed.sort((a, b) => a.crossing - b.crossing || b.right - b.left - (a.right - a.left));
  const few = Math.max(2, Math.floor(GUTTER_MAX_CROSSING * rows.length));
  for (const c of narrowed) {
    if (c.crossing > few && crossingBands(rows, c) > MAX_CROSSING_BANDS) continue;
    const centre = (c.left + c.right) / 2;
    const left = boxes.filter((b) => b.x1 <= centre);
    const right = boxes.filter((b) => b.x0 >= centre);
    if (rowsOf(left).length < COLUMN_MIN_ROWS || rowsOf(right).length < COLUMN_MIN_ROWS) continue;
    // Side by side: the two sides share most of their vertical extent.
    const ext = (bs: Box[]) => [Math.min(...bs.map((b) => b.top)), Math.max(...bs.map((b) => b.top))];
    const [l0, l1] = ext(left);
    const [r0, r1] = ext(right);
    const shared = Math.min(l1, r1) - Math.max(l0, r0);
    if (shared < 0.3 * Math.min(l1 - l0, r1 - r0)) continue;
    // Prose columns: the left rows run up to the gutter (not a column of labels); a row's end is its last fragment's
    // (a contents line ends at its page number).
    const leftEnds = rowsOf(left).map((r) => Math.max(...r.map((b) => b.x1)));
    if (c.left - median(leftEnds) > 0.4 * (c.left - minX)) continue;
    const lEdge = Math.max(...left.map((b) => b.x1));
    const rEdge = Math.min(...right.map((b) => b.x0));
    return { left: Math.min(lEdge, centre), right: Math.max(rEdge, centre) };
  }
  return undefined;
}

const byTop = (a: Box, b: Box) => b.top - a.top || a.x0 - b.x0;

function orderBoxes(boxes: Box[], depth: number): Box[] {
  const sorted = [...boxes].sort(byTop);
  const gutter = depth < MAX_DEPTH ? findGutter(sorted) : undefined;
  if (!gutter) return sorted;
  const centre = (gutter.left + gutter.right) / 2;
  const out: Box[] = [];
  let band: Box[] = [];
  const flush = () => {
    if (!band.length) return;
    const left = band.filter((b) => b.x1 <= centre);
    const right = band.filter((b) => b.x1 > centre);
    // What one side holds below the other side's end, after a gap wider than its lines' spacing, follows the
    // columns (a list or table under a two-column section); a longer column's last lines run on without a gap.
    const tail: Box[] = [];
    for (const [side, other] of [
      [left, right],
      [right, left],
    ]) {
      if (!other.length) continue;
      const end = Math.min(...other.map((b) => b.top));
      const i = side.findIndex(
        (b, k) =>
          k > 0 && b.top < end - 0.5 * b.size && side[k - 1].top - b.top > 2.2 * Math.max(b.size, side[k - 1].size),
      );
      if (i > 0) tail.push(...side.splice(i));
    }
    out.push(...orderBoxes(left, depth + 1));
    out.push(...orderBoxes(right, depth + 1));
    if (tail.length) out.push(...orderBoxes(tail, depth + 1));
    band = [];
  };
  for (const b of sorted) {
    if (b.x0 < centre && b.x1 > centre) {
      flush();
      out.push(b);
      continue;
    }
    const above = band[band.length - 1];
    if (above && above.top - b.top > BAND_GAP_EM * Math.max(above.size, b.size)) flush();
    band.push(b);
  }
  flush();
  return out;
}

/** The page's column gutter at the top level (two or more columns side by side), if it has one. */
export function pageGutter(frags: readonly Fragment[]): Gutter | undefined {
  const lineTop = new Map<number, number>();
  for (const f of frags) lineTop.set(f.line, Math.max(lineTop.get(f.line) ?? -Infinity, f.y));
  return findGutter(frags.map((f) => box({ kind: 'text', f }, lineTop)).sort(byTop));
}

/** The elements in reading order. */
export function readingOrder(frags: readonly Fragment[], tables: readonly Table[]): Element[] {
  const lineTop = new Map<number, number>();
  for (const f of frags) lineTop.set(f.line, Math.max(lineTop.get(f.line) ?? -Infinity, f.y));
  const boxes = [
    ...frags.map((f) => box({ kind: 'text', f }, lineTop)),
    ...tables.map((t) => box({ kind: 'table', t }, lineTop)),
  ];
  return orderBoxes(boxes, 0).map((b) => b.e);
}
