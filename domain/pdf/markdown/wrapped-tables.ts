/**
 * Tables without rules whose cells wrap onto several lines (Texinfo's `@multitable`, an HTML table printed without
 * borders): columns from left edges that lines share, rows from the gaps between lines, each cell's lines joined in
 * reading order. `tables.ts` asks it before its aligned-columns reader. Pure.
 */
import type { Fragment } from './lines';
import { byLine, plausible } from './table-parts';
import type { Table } from './tables';

/**
 * Cell lines joined: a word hyphenated at the line end made whole, a compound or an identifier cut after its own `-`
 * or `_` joined without a space.
 */
function joinCell(lines: string[]): string {
  let out = '';
  for (const line of lines) {
    if (!out) out = line;
    else if (/\p{L}-$/u.test(out) && /^\p{Ll}/u.test(line)) out = out.slice(0, -1) + line;
    else if (/(_|[\p{L}\p{N}]-)$/u.test(out) && /^[\p{L}\p{N}]/u.test(line)) out += line;
    else out += ` ${line}`;
  }
  return out;
}

/**
 * A fragment that starts at a column edge and runs over the next one (two cells' text read as one run: the gutter
 * is narrower than a stretched word space) is cut at the space nearest that edge, character widths taken as equal.
 */
function splitAtEdges(f: Fragment, edges: readonly number[], em: number): Fragment[] {
  const start = edges.findIndex((e) => Math.abs(f.x0 - e) <= 1.5);
  const crossed = edges.filter((e) => e > f.x0 + 1.5 && e < f.x1 - 0.5 * em);
  if (start < 0 || crossed.length !== 1 || crossed[0] !== edges[start + 1]) return [f];
  const per = (f.x1 - f.x0) / f.text.length;
  const spaces = [...f.text.matchAll(/ /g)].map((m) => m.index);
  if (spaces.length === 0) return [f];
  const at = spaces.reduce((a, b) =>
    Math.abs(f.x0 + b * per - crossed[0]) < Math.abs(f.x0 + a * per - crossed[0]) ? b : a,
  );
  if (Math.abs(f.x0 + at * per - crossed[0]) > 1.5 * em) return [f];
  const left = f.text.slice(0, at);
  return [
    { ...f, text: left, x1: f.x0 + left.length * per },
    { ...f, text: f.text.slice(at + 1), x0: crossed[0] },
  ];
}

/** Left edges of columns: the header's cell starts, else starts shared by several lines that text never runs over. */
function columnEdges(run: Fragment[][], em: number): number[] {
  const head = run[0];
  // A bold header's cells start at edges (two of them may be one run of text: the body's starts give the edge).
  const header =
    head.length >= 2 && head.every((f) => f.bold) && run.length > 1 && !run[run.length - 1].every((f) => f.bold)
      ? head.map((f) => f.x0)
      : [];
  const multi = run.filter((l) => l.length >= 2);
  if (multi.length < 2) return header;
  // Starts within 1.5 pt of a cluster's first are one; a cluster counts the lines it is on.
  const starts = multi.flatMap((l, n) => l.map((f) => ({ x: f.x0, n }))).sort((a, b) => a.x - b.x);
  const support: { x: number; lines: Set<number> }[] = [];
  for (const st of starts) {
    const last = support[support.length - 1];
    if (last && st.x - last.x <= 1.5) last.lines.add(st.n);
    else support.push({ x: st.x, lines: new Set([st.n]) });
  }
  let frags: Fragment[] | undefined;
  const found = support
    .filter(({ x, lines }) => x <= head[0].x0 + 1.5 || lines.size >= Math.max(2, 0.3 * multi.length))
    .map(({ x }) => x)
    .filter((x) => x >= head[0].x0 - 1.5)
    .filter(
      (x, _, all) =>
        x <= head[0].x0 + 1.5 ||
        // A start inside a cell (the second word of a justified line) has the cell's text ending just past it.
        (frags ??= run.flat()).filter(
          (f) => f.x0 < x - 1.5 && f.x1 > x + 0.5 && f.x1 < x + em && !all.some((y) => y > x && f.x1 > y),
        ).length < 2,
    )
    .sort((a, b) => a - b);
  if (header.length === 0) return found;
  return [...header, ...found.filter((x) => x > head[0].x0 + 1.5 && header.every((h) => Math.abs(h - x) > 1.5))].sort(
    (a, b) => a - b,
  );
}

/**
 * Tables whose cells wrap onto several lines (Texinfo's `@multitable`): a line of two fragments or more opens one;
 * lines go on while each starts at a column edge and no text runs over two edges. Rows start below a gap wider than
 * the line spacing (or where bold text ends: a header); when every gap is the same, where the first column has
 * text. Only a table with a cell of two lines or more is taken here; the others are `alignedTables`'.
 */
export function wrappedTables(frags: readonly Fragment[]): Table[] {
  const lines = byLine(frags);
  const tables: Table[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].length < 2) continue;
    const em = lines[i][0].size;
    let end = i + 1;
    while (end < lines.length && lines[end - 1][0].y - lines[end][0].y <= 2.6 * Math.max(em, lines[end][0].size)) end++;
    const run = lines.slice(i, end);
    if (run.length < 3) continue;
    // Lines all the same distance apart under no bold header: nothing tells a row from a cell's next line, here or
    // from a later start in the block.
    const ys = run.map((l) => l[0].y);
    const steps = ys.slice(1).map((y, n) => ys[n] - y);
    if (!lines[i].every((f) => f.bold) && Math.max(...steps) - Math.min(...steps) <= 0.3) {
      i = end - 1;
      continue;
    }
    // Edges from the run's first lines: a long run (a page of two columns) is not read again for every start.
    const edges = columnEdges(run.slice(0, 30), em);
    if (edges.length < 2) continue;
    const at = (x: number) => edges.findIndex((e) => Math.abs(x - e) <= 1.5);
    // The table: lines that start at an edge and whose fragments, cut at the edges, stay inside their columns.
    const kept: Fragment[][] = [];
    for (const line of run) {
      // A run of text alone on its line across a column edge is prose (a paragraph below the table), no cell.
      const cut = line.length > 1 ? line.flatMap((f) => splitAtEdges(f, edges, em)) : line;
      // A line of another size (a heading below the table) ends it.
      const fits =
        at(cut[0].x0) >= 0 &&
        cut.every((f) => Math.abs(f.size - em) <= 0.1 * em) &&
        cut.every((f) => edges.filter((e) => e > f.x0 + 1.5 && e < f.x1 - 0.5 * em).length === 0);
      // Bold text below text that is not (a label, a title) is no row: bold is the header's, at the top.
      const bold = (l: Fragment[]) => l.every((f) => f.bold);
      if (!fits || (kept.length > 0 && bold(cut) && !bold(kept[kept.length - 1]))) break;
      kept.push(cut);
    }
    // Too short: the next start worth trying is the line that did not fit.
    if (kept.length < 3) {
      i += Math.max(0, kept.length - 1);
      continue;
    }
    // Lines of a block that is no table here are none from a later start either (the rules are read once a page).
    const skip = kept.length - 1;
    const gaps = kept.slice(1).map((l, n) => kept[n][0].y - l[0].y);
    // Gaps between the highest baselines: a label in another font at a line's start may sit a little lower, so that
    // the line seems further from the one above than it is.
    const top = (l: Fragment[]) => Math.max(...l.map((f) => f.y));
    const tops = kept.slice(1).map((l, n) => top(kept[n]) - top(l));
    // The line spacing: the median of the gaps near the smallest (a monospace line sits a little closer or further).
    const near = gaps.filter((g) => g <= 1.4 * Math.min(...gaps)).sort((a, b) => a - b);
    const pitch = near[Math.floor(near.length / 2)];
    const spaced = gaps.filter((g) => g > 1.4 * pitch).length >= 2;
    const colOf = (f: Fragment) => Math.max(0, edges.filter((e) => e <= f.x0 + 1.5).length - 1);
    // A line with an empty first column is a cell's second line or a row of its own: a gap tells (rows further
    // apart than lines, or a row below such a line further from it than any such line from the line above), or a
    // bold header; else the table is `alignedTables`'.
    const header = kept[0].every((f) => f.bold) && !kept[kept.length - 1].every((f) => f.bold);
    const hasFirst = kept.map((l) => l.some((f) => colOf(f) === 0));
    const inner = tops.filter((_, n) => !hasFirst[n + 1]);
    const after = tops.filter((_, n) => hasFirst[n + 1] && !hasFirst[n]);
    const apart = inner.length > 0 && after.length > 0 && Math.min(...after) > Math.max(...inner) + 0.3;
    if (!spaced && !header && !apart) {
      i += skip;
      continue;
    }
    const cells: string[][][] = [];
    kept.forEach((line, n) => {
      const bold = line.every((f) => f.bold);
      const prevBold = n > 0 && kept[n - 1].every((f) => f.bold);
      const first = hasFirst[n];
      // Below a cell taller than the others' the gap before the next row is smaller: a little wider than the line
      // spacing, with text in the first column.
      const gap = n > 0 ? gaps[n - 1] : 0;
      // A first cell whose line ends inside a word (`gnutls_privkey_sign_`, `CHACHA20-`) goes on below.
      const prevFirst = n > 0 ? kept[n - 1].filter((f) => colOf(f) === 0) : [];
      const goesOn = prevFirst.length > 0 && /[\p{L}\p{N}][-_]$/u.test(prevFirst[prevFirst.length - 1].text);
      const starts =
        n === 0 ||
        bold !== prevBold ||
        (spaced ? gap > 1.4 * pitch || (first && gap > 1.06 * pitch) : first && !(goesOn && gap <= 1.06 * pitch));
      if (starts) cells.push(edges.map(() => []));
      const row = cells[cells.length - 1];
      const parts = edges.map(() => [] as string[]);
      for (const f of line) parts[colOf(f)].push(f.text);
      parts.forEach((p, c) => {
        if (p.length) row[c].push(p.join(' '));
      });
    });
    if (!cells.some((row) => row.some((c) => c.length >= 2))) {
      i += skip;
      continue;
    }
    const rows = cells.map((row) => row.map(joinCell));
    const columns = edges.map((e, c) => {
      const right = Math.max(
        e,
        ...kept
          .flat()
          .filter((f) => colOf(f) === c)
          .map((f) => f.x1),
      );
      return [e, right] as [number, number];
    });
    // A table has a column of short cells (labels, names, numbers), or rows set apart by gaps and a first column
    // narrower than the widest (a term and its explanation); two columns of prose have neither.
    const words = (c: string) => c.split(/\s+/).filter(Boolean).length;
    const width = ([a, b]: [number, number]) => b - a;
    const short =
      columns.some((_, j) => {
        const col = rows.map((row) => row[j]).filter((c) => c.trim() !== '');
        return col.length > 0 && col.reduce((a, c) => a + words(c), 0) / col.length <= 4;
      }) ||
      (spaced && width(columns[0]) < 0.7 * Math.max(...columns.map(width)));
    if (!short || !plausible(rows, columns)) {
      i += skip;
      continue;
    }
    const all = kept.flat();
    const last = kept[kept.length - 1][0];
    tables.push({
      x0: Math.min(...all.map((f) => f.x0)),
      x1: Math.max(...all.map((f) => f.x1)),
      top: kept[0][0].y + kept[0][0].size,
      bottom: last.y - 0.3 * last.size,
      rows,
      ruled: false,
      columns,
    });
    i += kept.length - 1;
  }
  return tables;
}
