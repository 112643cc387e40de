/**
 * The rulings a table is read from: horizontal rules (strokes, or thin filled rectangles as booktabs draws them),
 * collinear pieces joined, and vertical ones. Pure.
 */
import type { Fragment } from './lines';
import type { Segment } from './types';

export interface HRule {
  y: number;
  x0: number;
  x1: number;
}

export interface VRule {
  x: number;
  y0: number;
  y1: number;
}

const THIN = 2;

export function horizontalRules(segments: readonly Segment[]): HRule[] {
  const raw = segments
    .filter((s) => s.y1 - s.y0 < THIN && s.x1 - s.x0 > 8)
    .map((s) => ({ y: (s.y0 + s.y1) / 2, x0: s.x0, x1: s.x1 }))
    .sort((a, b) => b.y - a.y || a.x0 - b.x0);
  // Cell borders are drawn cell by cell: collinear pieces that touch are one rule.
  const out: HRule[] = [];
  for (const r of raw) {
    const last = out.find((o) => Math.abs(o.y - r.y) < 1 && r.x0 <= o.x1 + 2 && r.x1 >= o.x0 - 2);
    if (last) {
      last.x0 = Math.min(last.x0, r.x0);
      last.x1 = Math.max(last.x1, r.x1);
    } else out.push({ ...r });
  }
  return out.sort((a, b) => b.y - a.y);
}

export function verticalRules(segments: readonly Segment[]): VRule[] {
  return segments
    .filter((s) => s.x1 - s.x0 < THIN && s.y1 - s.y0 > 4)
    .map((s) => ({ x: (s.x0 + s.x1) / 2, y0: s.y0, y1: s.y1 }));
}

/**
 * The rules of a stack down to the first gap that text wider than the rules crosses: tables of the same width one
 * below the other on a page (booktabs' rules line up from table to table) with prose between them are several
 * tables, not one.
 */
export function untilProse(stack: HRule[], frags: readonly Fragment[]): HRule[] {
  for (let i = 1; i < stack.length; i++) {
    const [above, below] = [stack[i - 1], stack[i]];
    const wider = frags.some(
      (f) =>
        f.y < above.y &&
        f.y > below.y &&
        (f.x0 < above.x0 - 4 || f.x1 > above.x1 + 4) &&
        f.x1 > above.x0 &&
        f.x0 < above.x1,
    );
    if (wider) return stack.slice(0, i);
  }
  return stack;
}

/**
 * A column between vertical rules cut where its text leaves a gap of an em or more on every line, two lines or more
 * having text on both sides (a table ruled `|l|lr|`: no rule between its last two columns); else the column whole.
 */
export function alignedWithin(
  column: [number, number],
  lines: readonly Fragment[][],
  union: (intervals: [number, number][], slack: number) => [number, number][],
): [number, number][] {
  const inCol = lines
    .map((l) => l.filter((f) => (f.x0 + f.x1) / 2 > column[0] && (f.x0 + f.x1) / 2 < column[1]))
    .filter((l) => l.length > 0);
  const em = Math.max(1, ...inCol.flat().map((f) => f.size));
  const parts = union(
    inCol.flat().map((f) => [f.x0, f.x1]),
    em,
  );
  if (parts.length < 2) return [column];
  const sides = (l: Fragment[]) =>
    new Set(l.map((f) => parts.findIndex((p) => f.x0 >= p[0] - 0.1 && f.x1 <= p[1] + 0.1)));
  if (inCol.filter((l) => sides(l).size >= 2).length < 2) return [column];
  const cuts = parts.slice(1).map((p, i) => (parts[i][1] + p[0]) / 2);
  const edges = [column[0], ...cuts, column[1]];
  return edges.slice(1).map((e, i) => [edges[i], e]);
}
