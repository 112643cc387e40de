/**
 * Tables of one page, from two kinds of evidence:
 * - ruled: horizontal rules of the same extent stacked above each other (cell borders, or booktabs' top, middle and
 *   bottom rules); columns from the vertical rules inside when there are some, else from the text's alignment;
 * - unruled: three or more consecutive lines cut into short fragments that line up in the same columns;
 * - unruled with wrapped cells (Texinfo's `@multitable`, `wrapped-tables.ts`): lines whose text starts at a few
 *   shared left edges, rows told apart by a wider gap above (or a bold header), each cell's lines joined.
 * A region counts as a table only when most rows have two cells or more, so a rule under a running header or a
 * two-column page of prose is never one. Pure.
 */
import type { Fragment } from './lines';
import { byLine, plausible } from './table-parts';
import { partialRuleSpans, type CellSpans } from './table-spans';
import { alignedWithin, horizontalRules, untilProse, verticalRules, type HRule } from './table-rules';
import type { Segment } from './types';
import { wrappedTables } from './wrapped-tables';

export interface Table {
  x0: number;
  x1: number;
  /** Top and bottom of the region (PDF y, top > bottom). */
  top: number;
  bottom: number;
  rows: string[][];
  ruled: boolean;
  /** Left and right edge of each column: a table on the next page with the same columns continues this one. */
  columns: [number, number][];
  /** Cells that span columns (`table-spans.ts`): such a table is rendered as HTML unless GFM is asked for. */
  spans?: CellSpans;
}

/** Merges x-intervals that overlap into columns, left to right. */
function unionColumns(intervals: [number, number][], slack: number): [number, number][] {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + slack) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

const mode = (values: number[]): number => {
  const c = new Map<number, number>();
  for (const v of values) c.set(v, (c.get(v) ?? 0) + 1);
  return [...c.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0]?.[0] ?? 0;
};

/** Columns from alignment: the union of the fragments' extents on the lines with the most common cell count. */
function alignedColumns(lines: Fragment[][]): [number, number][] {
  const multi = lines.filter((l) => l.length >= 2);
  if (multi.length === 0) return [];
  const n = mode(multi.map((l) => l.length));
  const typical = multi.filter((l) => l.length === n);
  return unionColumns(
    typical.flat().map((f) => [f.x0, f.x1]),
    0,
  );
}

function overlap(f: Fragment, c: [number, number]): number {
  return Math.min(f.x1, c[1]) - Math.max(f.x0, c[0]);
}

/** The columns a fragment belongs to: the one it overlaps most, and every further one it covers most of. */
function columnsOf(f: Fragment, columns: [number, number][]): number[] {
  let best = 0;
  let bestO = -Infinity;
  columns.forEach((c, i) => {
    const o = overlap(f, c);
    const d = o > 0 ? o : -Math.min(Math.abs(f.x0 - c[1]), Math.abs(c[0] - f.x1));
    if (d > bestO) [best, bestO] = [i, d];
  });
  const spanned = columns
    .map((c, i) => (i !== best && overlap(f, c) > 0.6 * (c[1] - c[0]) ? i : -1))
    .filter((i) => i >= 0);
  return [best, ...spanned].sort((a, b) => a - b);
}

/**
 * Rows from lines: a line whose first column holds text starts a row, other lines continue it (a cell of two
 * lines); with `lineRows` (rules without verticals: booktabs) a line filling two cells or more starts one too (a
 * row whose first cell is empty, as under a label that holds for several rows); with `bands` (y of the horizontal rules) a rule always starts a row, and `oneRowPerBand` keeps a band
 * whole (a grid of cells with borders).
 */
function buildRows(
  lines: Fragment[][],
  columns: [number, number][],
  bands: number[] = [],
  oneRowPerBand = false,
  lineRows = false,
  rowTops: number[] = [],
): string[][] {
  const rows: string[][] = [];
  let band = -1;
  for (const line of lines) {
    const y = line[0].y;
    const b = bands.filter((r) => r > y).length;
    const cells = columns.map(() => [] as string[]);
    for (const f of line) for (const c of columnsOf(f, columns)) cells[c].push(f.text);
    const newBand = b !== band;
    band = b;
    const filled = cells.filter((c) => c.length > 0).length;
    const startsRow =
      rows.length === 0 || newBand || (!oneRowPerBand && (cells[0].length > 0 || (lineRows && filled >= 2)));
    if (startsRow) {
      rows.push(cells.map((c) => c.join(' ')));
      rowTops.push(y);
    } else {
      const row = rows[rows.length - 1];
      cells.forEach((c, i) => {
        if (c.length) row[i] = row[i] ? `${row[i]} ${c.join(' ')}` : c.join(' ');
      });
    }
  }
  return rows;
}

const isMarker = (t: string) => /^([•·◦▪▫‣⁃○●■□►▸–—*-]|\(?\d{1,3}[.)]|\(?[a-z][.)])$/i.test(t.trim());

/** Ruled tables: stacks of horizontal rules of the same extent with text between them. */
function ruledTables(frags: readonly Fragment[], segments: readonly Segment[]): Table[] {
  const rules = horizontalRules(segments);
  const verticals = verticalRules(segments);
  const used = new Set<HRule>();
  const tables: Table[] = [];
  for (const first of rules) {
    if (used.has(first)) continue;
    const same = (r: HRule) => Math.abs(r.x0 - first.x0) < 4 && Math.abs(r.x1 - first.x1) < 4;
    const stack = untilProse(
      rules.filter((r) => !used.has(r) && same(r)),
      frags,
    );
    if (stack.length < 2) continue;
    const top = stack[0].y;
    const bottom = stack[stack.length - 1].y;
    const inside = (f: Fragment) => f.y < top && f.y > bottom && f.x0 >= first.x0 - 2 && f.x1 <= first.x1 + 2;
    const lines = byLine(frags.filter(inside));
    if (lines.length === 0) continue;
    const vs = verticals.filter((v) => v.x > first.x0 + 2 && v.x < first.x1 - 2 && v.y1 > bottom && v.y0 < top);
    let columns: [number, number][];
    if (vs.length > 0) {
      const xs = [...new Set(vs.map((v) => Math.round(v.x)))].sort((a, b) => a - b);
      const edges = [first.x0, ...xs.filter((x, i) => i === 0 || x - xs[i - 1] > 3), first.x1];
      columns = edges.slice(1).flatMap((e, i) => alignedWithin([edges[i], e], lines, unionColumns));
    } else columns = alignedColumns(lines);
    if (columns.length < 2) continue;
    const bands = stack.map((r) => r.y);
    const gridded = vs.length > 0 && stack.length >= 3;
    const rowTops: number[] = [];
    const rows = buildRows(lines, columns, bands, gridded, vs.length === 0, rowTops);
    if (!plausible(rows, columns)) continue;
    for (const r of stack) used.add(r);
    // Booktabs' \cmidrule under a group label: rules inside the table narrower than it.
    const partials = rules.filter(
      (r) => !same(r) && r.y < top && r.y > bottom && r.x0 >= first.x0 - 2 && r.x1 <= first.x1 + 2,
    );
    const spans =
      vs.length === 0
        ? partialRuleSpans(rows, rowTops, columns, partials, stack.length >= 3 ? stack[1].y : undefined)
        : undefined;
    tables.push({ x0: first.x0, x1: first.x1, top, bottom, rows, ruled: true, columns, ...(spans ? { spans } : {}) });
  }
  return tables;
}

/** Unruled tables: runs of three lines or more cut into short, aligned fragments. */
function alignedTables(frags: readonly Fragment[]): Table[] {
  const lines = byLine(frags);
  const tables: Table[] = [];
  let run: Fragment[][] = [];
  const flush = () => {
    const r = run;
    run = [];
    if (r.length < 3) return;
    const cells = r.flat();
    if (r.every((l) => isMarker(l[0].text))) return;
    const columns = alignedColumns(r);
    const n = mode(r.map((l) => l.length));
    if (columns.length < 2 || columns.length !== n) return;
    const rows = buildRows(r, columns);
    // Cells are short; prose (a justified line cut at its wide word gaps, two columns side by side) is not.
    const filled = rows.flat().filter((c) => c.trim() !== '');
    if (filled.reduce((a, c) => a + c.length, 0) / filled.length > 28) return;
    // A table has a column of short cells (labels, numbers); columns of prose lines all hold several words.
    const words = (c: string) => c.split(/\s+/).filter(Boolean).length;
    const wordy = columns.every((_, j) => {
      const col = rows.map((row) => row[j]).filter((c) => c && c.trim() !== '');
      return col.length > 0 && col.reduce((a, c) => a + words(c), 0) / col.length > 3;
    });
    if (wordy) return;
    if (!plausible(rows, columns)) return;
    tables.push({
      x0: Math.min(...cells.map((f) => f.x0)),
      x1: Math.max(...cells.map((f) => f.x1)),
      top: r[0][0].y + r[0][0].size,
      bottom: r[r.length - 1][0].y - 0.3 * r[r.length - 1][0].size,
      rows,
      ruled: false,
      columns,
    });
  };
  for (const line of lines) {
    const prev = run[run.length - 1];
    const close = prev && prev[0].y - line[0].y <= 2.6 * Math.max(prev[0].size, line[0].size);
    if (line.length >= 2 && (run.length === 0 || close)) run.push(line);
    else {
      flush();
      if (line.length >= 2) run.push(line);
    }
  }
  flush();
  return tables;
}

/** The page's tables, and the fragments that are not part of one. */
export function findTables(
  frags: readonly Fragment[],
  segments: readonly Segment[],
): { tables: Table[]; rest: Fragment[] } {
  const ruled = ruledTables(frags, segments);
  const inTable = (f: Fragment, t: Table) => f.y < t.top && f.y > t.bottom && f.x0 >= t.x0 - 2 && f.x1 <= t.x1 + 2;
  let rest = frags.filter((f) => !ruled.some((t) => inTable(f, t)));
  const wrapped = wrappedTables(rest);
  rest = rest.filter((f) => !wrapped.some((t) => inTable(f, t)));
  const aligned = alignedTables(rest);
  rest = rest.filter((f) => !aligned.some((t) => inTable(f, t)));
  return { tables: [...ruled, ...wrapped, ...aligned], rest };
}
