/**
 * Cells that span columns in a booktabs table: a header cell over a partial rule (`\cmidrule`) that reaches across
 * two columns or more spans them (a group label over its sub-columns). GFM holds no such cell, so a table with one
 * is rendered as an HTML `<table>` with `colspan` (Markdown readers pass HTML blocks through). Pure.
 */
import type { HRule } from './table-rules';

export interface CellSpans {
  /** Per row, per column: how many columns the cell starting there spans; 0 for a column a cell to its left covers. */
  spans: number[][];
  /** Rows above the table's middle rule: its header. */
  headerRows: number;
}

/**
 * Spans from the partial rules inside a table: the row just above each (by its lines' baselines, `rowTops`) gets
 * one cell over the columns whose middle the rule covers, when that row has text in one of them only. Changes the
 * rows in place (the text moves to the span's first column); undefined when no cell spans.
 */
export function partialRuleSpans(
  rows: string[][],
  rowTops: number[],
  columns: [number, number][],
  partials: readonly HRule[],
  midY: number | undefined,
): CellSpans | undefined {
  const spans = rows.map((r) => r.map(() => 1));
  let any = false;
  for (const p of partials) {
    const cs = columns
      .map((c, i) => ((c[0] + c[1]) / 2 > p.x0 && (c[0] + c[1]) / 2 < p.x1 ? i : -1))
      .filter((i) => i >= 0);
    if (cs.length < 2 || cs[cs.length - 1] - cs[0] !== cs.length - 1) continue;
    const r = rowTops.reduce((best, y, i) => (y > p.y ? i : best), -1);
    if (r < 0 || cs.some((c) => spans[r][c] !== 1)) continue;
    const texts = cs.filter((c) => rows[r][c].trim() !== '');
    if (texts.length !== 1) continue;
    const text = rows[r][texts[0]];
    for (const c of cs) [rows[r][c], spans[r][c]] = ['', 0];
    [rows[r][cs[0]], spans[r][cs[0]]] = [text, cs.length];
    any = true;
  }
  if (!any) return undefined;
  const headerRows = midY === undefined ? 1 : Math.max(1, rowTops.filter((y) => y > midY).length);
  return { spans, headerRows };
}

const esc = (t: string) =>
  t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\s+/g, ' ').trim();

/** A table whose cells span columns as an HTML table: header rows in `<thead>` with `<th>`, the rest `<td>`. */
export function htmlTable(rows: readonly string[][], { spans, headerRows }: CellSpans): string {
  const row = (r: readonly string[], i: number, tag: 'th' | 'td') => {
    const cells = r
      .map((c, j) => {
        const n = spans[i]?.[j] ?? 1;
        if (n === 0) return '';
        return `<${tag}${n > 1 ? ` colspan="${n}"` : ''}>${esc(c)}</${tag}>`;
      })
      .join('');
    return `<tr>${cells}</tr>`;
  };
  const head = rows.slice(0, headerRows).map((r, i) => row(r, i, 'th'));
  const body = rows.slice(headerRows).map((r, i) => row(r, i + headerRows, 'td'));
  return ['<table>', '<thead>', ...head, '</thead>', '<tbody>', ...body, '</tbody>', '</table>'].join('\n');
}

/**
 * The rows with each spanning cell's text repeated into every column it covers (`table_format=gfm`, contract §13:
 * GFM holds no span, and a cell left empty would read as no value).
 */
export function repeatSpans(rows: readonly string[][], { spans }: CellSpans): string[][] {
  return rows.map((r, i) =>
    r.map((c, j) => {
      for (let k = j; k >= 0; k--) {
        const n = spans[i]?.[k] ?? 1;
        if (n !== 0) return k === j ? c : k + n > j ? r[k] : c;
      }
      return c;
    }),
  );
}
