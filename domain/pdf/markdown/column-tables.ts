/**
 * Tables found on a page set in columns that are no tables: an unruled "table" across the gutter whose columns on
 * one side are one column of prose (a left column's lines beside a displayed equation or a contents list in the
 * right column line up like cells). Such a region is given back to the text, and the reading order reads it column
 * by column. Ruled tables, and tables on pages without a gutter, stay. Pure.
 */
import type { Fragment } from './lines';
import { pageGutter } from './order';
import type { Table } from './tables';

/** A side's one column is prose when it spans this share of the side's width... */
const PROSE_WIDTH = 0.7;
/** ...and its cells hold this many words on average. */
const PROSE_WORDS = 4;
/** Lines of prose outside the tables each side of the gutter holds at least; lines beside a table's prose column. */
const MIN_SIDE_LINES = 6;

const words = (c: string) => c.split(/\s+/).filter(Boolean).length;

function proseSide(t: Table, cols: number[], sideWidth: number, rest: readonly Fragment[]): boolean {
  if (cols.length !== 1) return false;
  const j = cols[0];
  const [x0, x1] = t.columns[j];
  if (x1 - x0 < PROSE_WIDTH * sideWidth) return false;
  // The page's column goes on outside the table: lines of text beyond it start where this column starts.
  const aligned = new Set(
    rest.filter((f) => (f.y > t.top || f.y < t.bottom) && Math.abs(f.x0 - x0) <= f.size).map((f) => f.line),
  );
  if (aligned.size < MIN_SIDE_LINES) return false;
  const cells = t.rows.map((r) => r[j]).filter((c) => c && c.trim() !== '');
  return cells.length > 0 && cells.reduce((a, c) => a + words(c), 0) / cells.length >= PROSE_WORDS;
}

/** The tables that stand, and the fragments of those that are columns of prose added back to the rest. */
export function withoutColumnProse(
  frags: readonly Fragment[],
  found: { tables: Table[]; rest: Fragment[] },
): { tables: Table[]; rest: Fragment[] } {
  const unruled = found.tables.filter((t) => !t.ruled);
  if (!unruled.length) return found;
  const gutter = pageGutter(frags);
  if (!gutter) return found;
  const centre = (gutter.left + gutter.right) / 2;
  const minX = Math.min(...frags.map((f) => f.x0));
  const maxX = Math.max(...frags.map((f) => f.x1));
  // A page set in columns has prose outside its tables on both sides of the gutter: lines that fill their column,
  // where a one-column manual's option list has short terms on the left of a gutter its descriptions make.
  const proseLines = (side: (f: Fragment) => boolean, width: number) => {
    const lines = new Map<number, { x0: number; x1: number }>();
    for (const f of found.rest.filter(side)) {
      const l = lines.get(f.line);
      lines.set(f.line, l ? { x0: Math.min(l.x0, f.x0), x1: Math.max(l.x1, f.x1) } : { x0: f.x0, x1: f.x1 });
    }
    return [...lines.values()].filter((l) => l.x1 - l.x0 >= PROSE_WIDTH * width).length;
  };
  if (
    proseLines((f) => f.x1 <= centre, gutter.left - minX) < MIN_SIDE_LINES ||
    proseLines((f) => f.x0 >= centre, maxX - gutter.right) < MIN_SIDE_LINES
  )
    return found;
  const prose = unruled.filter((t) => {
    if (!(t.x0 < centre && t.x1 > centre)) return false;
    const left = t.columns.map((c, j) => [c, j] as const).filter(([c]) => c[1] <= centre);
    const right = t.columns.map((c, j) => [c, j] as const).filter(([c]) => c[0] >= centre);
    return (
      proseSide(
        t,
        left.map(([, j]) => j),
        gutter.left - minX,
        found.rest,
      ) ||
      proseSide(
        t,
        right.map(([, j]) => j),
        maxX - gutter.right,
        found.rest,
      )
    );
  });
  if (!prose.length) return found;
  const inTable = (f: Fragment, t: Table) => f.y < t.top && f.y > t.bottom && f.x0 >= t.x0 - 2 && f.x1 <= t.x1 + 2;
  const back = frags.filter((f) => prose.some((t) => inTable(f, t)) && !found.rest.includes(f));
  return { tables: found.tables.filter((t) => !prose.includes(t)), rest: [...found.rest, ...back] };
}
