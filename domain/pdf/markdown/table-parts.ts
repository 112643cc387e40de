/** Parts both table readers use (`tables.ts`, `wrapped-tables.ts`). Pure. */
import type { Fragment } from './lines';

/** Fragments grouped by line, top to bottom. */
export function byLine(frags: readonly Fragment[]): Fragment[][] {
  const m = new Map<number, Fragment[]>();
  for (const f of frags) {
    const line = m.get(f.line);
    if (line) line.push(f);
    else m.set(f.line, [f]);
  }
  return [...m.values()].sort((a, b) => b[0].y - a[0].y).map((l) => l.sort((a, b) => a.x0 - b.x0));
}

/** A table worth the name: two columns or more, two rows or more, most rows with two cells or more. */
export function plausible(rows: string[][], columns: [number, number][]): boolean {
  if (columns.length < 2 || rows.length < 2) return false;
  const full = rows.filter((r) => r.filter((c) => c.trim() !== '').length >= 2).length;
  return full >= Math.max(2, 0.5 * rows.length);
}
