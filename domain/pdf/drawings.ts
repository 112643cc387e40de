/**
 * What a page draws, as the Markdown rules read it: rulings (stroked axis-aligned path pieces and thin filled
 * rectangles) and marks (small filled shapes about as wide as high: list bullets drawn as paths, as browsers print
 * them), in page space. One classification of painted paths for both readers of drawings: pdf.js's operator list
 * (`pdfjs-layout.ts`) and our own content-stream reader (`content-drawings.ts`).
 */
import type { LayoutItem, Segment } from './markdown/types';

export type Matrix = [number, number, number, number, number, number];

/** `m` then `n` applied (pdf.js's `Util.transform` order: a `cm` operand `n` on the current transform `m`). */
export const mul = (m: Matrix, n: Matrix): Matrix => [
  m[0] * n[0] + m[2] * n[1],
  m[1] * n[0] + m[3] * n[1],
  m[0] * n[2] + m[2] * n[3],
  m[1] * n[2] + m[3] * n[3],
  m[0] * n[4] + m[2] * n[5] + m[4],
  m[1] * n[4] + m[3] * n[5] + m[5],
];
const apply = (m: Matrix, x: number, y: number): [number, number] => [
  m[0] * x + m[2] * y + m[4],
  m[1] * x + m[3] * y + m[5],
];

export const round = (v: number) => Math.round(v * 100) / 100;

/** A small filled shape about as wide as high: a list bullet drawn as a path. */
export interface Mark {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

/** What a page draws: rulings and bullet marks, in page space with the origin at the view's bottom left. */
export interface PageDrawings {
  segments: Segment[];
  marks: Mark[];
}

/** Path data codes, as pdf.js's `DrawOPS` (each followed by its points: 2, 2, 6, 4 and 0 numbers). */
export const MOVE = 0;
export const LINE = 1;
export const CURVE = 2;
export const QUAD = 3;
export const CLOSE = 4;

/** The most rulings and marks kept of a page (a page of hatching is no table). */
const MAX_SEGMENTS = 20_000;
const MAX_MARKS = 2_000;

function segmentOf(a: [number, number], b: [number, number]): Segment | undefined {
  const s = { x0: Math.min(a[0], b[0]), y0: Math.min(a[1], b[1]), x1: Math.max(a[0], b[0]), y1: Math.max(a[1], b[1]) };
  const w = s.x1 - s.x0;
  const h = s.y1 - s.y0;
  if (w < 2 && h < 2) return undefined;
  if (h > 2 && w > 2) return undefined; // not axis-aligned
  return { x0: round(s.x0), y0: round(s.y0), x1: round(s.x1), y1: round(s.y1) };
}

/** Collects a page's drawings from its painted paths (`add`), in the order they are painted. */
export class DrawingsSink {
  readonly segments: Segment[] = [];
  readonly marks: Mark[] = [];

  /** Whether more drawings are wanted (the page's limit not reached). */
  get open(): boolean {
    return this.segments.length < MAX_SEGMENTS;
  }

  /**
   * One painted path: `data` in path data codes, `minMax` its bounds ([x0, y0, x1, y1]) in the path's own space,
   * `ctm` the transform to page space. Stroked: each straight axis-aligned piece is a ruling; filled: a thin shape
   * is a ruling, a small squarish one a mark.
   */
  add(stroke: boolean, data: ArrayLike<number>, minMax: ArrayLike<number>, ctm: Matrix): void {
    if (!this.open) return;
    if (!stroke) {
      const a = apply(ctm, minMax[0], minMax[1]);
      const b = apply(ctm, minMax[2], minMax[3]);
      const w = Math.abs(a[0] - b[0]);
      const h = Math.abs(a[1] - b[1]);
      if ((w < 2 && h > 4) || (h < 2 && w > 4)) {
        const s = segmentOf(a, b);
        if (s) this.segments.push(s);
      } else if (
        w >= 1.5 &&
        h >= 1.5 &&
        w <= 8 &&
        h <= 8 &&
        Math.max(w, h) / Math.min(w, h) < 1.6 &&
        this.marks.length < MAX_MARKS
      )
        this.marks.push({
          x0: Math.min(a[0], b[0]),
          x1: Math.max(a[0], b[0]),
          y0: Math.min(a[1], b[1]),
          y1: Math.max(a[1], b[1]),
        });
      return;
    }
    let start: [number, number] = [0, 0];
    let cur: [number, number] = [0, 0];
    for (let k = 0; k < data.length;) {
      const code = data[k];
      if (code === MOVE) {
        cur = start = apply(ctm, data[k + 1], data[k + 2]);
        k += 3;
      } else if (code === LINE) {
        const next = apply(ctm, data[k + 1], data[k + 2]);
        const s = segmentOf(cur, next);
        if (s && this.open) this.segments.push(s);
        cur = next;
        k += 3;
      } else if (code === CURVE) {
        cur = apply(ctm, data[k + 5], data[k + 6]);
        k += 7;
      } else if (code === QUAD) {
        cur = apply(ctm, data[k + 3], data[k + 4]);
        k += 5;
      } else if (code === CLOSE) {
        const s = segmentOf(cur, start);
        if (s && this.open) this.segments.push(s);
        cur = start;
        k += 1;
      } else break;
    }
  }

  /** The drawings, moved so that the page's view (its crop box) starts at the origin. */
  result(viewX0: number, viewY0: number): PageDrawings {
    const { segments, marks } = this;
    if (!viewX0 && !viewY0) return { segments, marks };
    return {
      segments: segments.map((s) => ({ x0: s.x0 - viewX0, x1: s.x1 - viewX0, y0: s.y0 - viewY0, y1: s.y1 - viewY0 })),
      marks: marks.map((m) => ({ x0: m.x0 - viewX0, x1: m.x1 - viewX0, y0: m.y0 - viewY0, y1: m.y1 - viewY0 })),
    };
  }
}

export /** Bounds of a cubic Bézier added to `mm` (pdf.js's `Util.bezierBoundingBox`: the end points and the extremes). */
function bezierBounds(
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  x2: number,
  y2: number,
  x3: number,
  y3: number,
  mm: number[],
): void {
  mm[0] = Math.min(mm[0], x0, x3);
  mm[1] = Math.min(mm[1], y0, y3);
  mm[2] = Math.max(mm[2], x0, x3);
  mm[3] = Math.max(mm[3], y0, y3);
  const onCurve = (t: number) => {
    if (t < 0 || t > 1) return;
    const mt = 1 - t;
    const x = x0 * mt * mt * mt + 3 * x1 * t * mt * mt + 3 * x2 * t * t * mt + x3 * t * t * t;
    const y = y0 * mt * mt * mt + 3 * y1 * t * mt * mt + 3 * y2 * t * t * mt + y3 * t * t * t;
    mm[0] = Math.min(mm[0], x);
    mm[1] = Math.min(mm[1], y);
    mm[2] = Math.max(mm[2], x);
    mm[3] = Math.max(mm[3], y);
  };
  const extremes = (a: number, b: number, c: number) => {
    if (Math.abs(a) < 1e-12) {
      if (Math.abs(b) >= 1e-12) onCurve(-c / b);
      return;
    }
    const delta = b * b - 4 * c * a;
    if (delta < 0) return;
    const sq = Math.sqrt(delta);
    onCurve((-b + sq) / (2 * a));
    onCurve((-b - sq) / (2 * a));
  };
  extremes(3 * (-x0 + 3 * (x1 - x2) + x3), 6 * (x0 - 2 * x1 + x2), 3 * (x1 - x0));
  extremes(3 * (-y0 + 3 * (y1 - y2) + y3), 6 * (y0 - 2 * y1 + y2), 3 * (y1 - y0));
}

/** `(x, y)` added to the bounds `mm`. */
export function point(mm: number[], x: number, y: number): void {
  if (x < mm[0]) mm[0] = x;
  if (y < mm[1]) mm[1] = y;
  if (x > mm[2]) mm[2] = x;
  if (y > mm[3]) mm[3] = y;
}

/** Marks that stand just left of a line's text, as bullets of that line. */
export function bulletsOf(marks: readonly Mark[], items: readonly LayoutItem[]): LayoutItem[] {
  const out: LayoutItem[] = [];
  for (const m of marks) {
    const next = items.find(
      (i) => m.y0 >= i.y - 0.2 * i.size && m.y1 <= i.y + 0.9 * i.size && i.x >= m.x1 && i.x - m.x1 < 2.5 * i.size,
    );
    if (next) out.push({ str: '•', x: round(m.x0), y: next.y, w: round(m.x1 - m.x0), size: next.size });
  }
  return out;
}
