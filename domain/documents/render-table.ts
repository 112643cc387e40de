import type { TableFormatName } from '../../core/jobs/job-defaults';
import type { TableCell } from './model';
import { cellMarkdown, escapeHtml, plainText } from './render-inline';

/**
 * A model table in Markdown (contract §13): a GFM pipe table when no cell spans (or `table_format=gfm`, which repeats
 * a spanning cell into every cell it covers), else an HTML `<table>` with its colspan and rowspan.
 */

/** The job's `table_format` (core/jobs/job-defaults.ts). */
export type TableFormat = TableFormatName;

const spanOf = (c: TableCell) => ({ cols: Math.max(1, c.colspan ?? 1), rows: Math.max(1, c.rowspan ?? 1) });

export const hasSpans = (rows: TableCell[][]): boolean =>
  rows.some((r) => r.some((c) => (c.colspan ?? 1) > 1 || (c.rowspan ?? 1) > 1));

/** The table as a rectangular grid: each spanning cell copied into every position it covers. */
export function expandSpans(rows: TableCell[][]): TableCell[][] {
  const grid: TableCell[][] = [];
  rows.forEach((row, r) => {
    grid[r] ??= [];
    let col = 0;
    for (const cell of row) {
      while (grid[r]![col]) col++;
      const { cols, rows: down } = spanOf(cell);
      // A rowspan past the last row stops at it (a file that overstates one).
      for (let dr = 0; dr < down && r + dr < rows.length; dr++) {
        grid[r + dr] ??= [];
        for (let dc = 0; dc < cols; dc++) grid[r + dr]![col + dc] = { text: cell.text, header: cell.header };
      }
      col += cols;
    }
  });
  const width = Math.max(0, ...grid.map((r) => r.length));
  return grid.map((r) => Array.from({ length: width }, (_, i) => r[i] ?? { text: '' }));
}

function gfm(rows: TableCell[][]): string {
  const grid = expandSpans(rows);
  if (grid.length === 0 || grid[0]!.length === 0) return '';
  const line = (r: TableCell[]) => `| ${r.map(cellMarkdown).join(' | ')} |`;
  // GFM needs a header row: the first row is it (an empty header row would add a row no file has).
  return [line(grid[0]!), `| ${grid[0]!.map(() => '---').join(' | ')} |`, ...grid.slice(1).map(line)].join('\n');
}

function html(rows: TableCell[][], headerRows: number, caption?: string): string {
  const out = ['<table>'];
  if (caption) out.push(`<caption>${escapeHtml(caption)}</caption>`);
  const row = (r: TableCell[], head: boolean) =>
    `<tr>${r
      .map((c) => {
        const tag = head || c.header ? 'th' : 'td';
        const { cols, rows: down } = spanOf(c);
        const attrs = `${cols > 1 ? ` colspan="${cols}"` : ''}${down > 1 ? ` rowspan="${down}"` : ''}`;
        return `<${tag}${attrs}>${escapeHtml(plainText(c.text).trim())}</${tag}>`;
      })
      .join('')}</tr>`;
  if (headerRows > 0) out.push('<thead>', ...rows.slice(0, headerRows).map((r) => row(r, true)), '</thead>');
  out.push('<tbody>', ...rows.slice(headerRows).map((r) => row(r, false)), '</tbody>', '</table>');
  return out.join('\n');
}

/** The table's Markdown; its caption, for a pipe table, as an emphasised line above it. */
export function tableMarkdown(
  t: { rows: TableCell[][]; headerRows?: number; caption?: string },
  format: TableFormat,
): string {
  if (t.rows.length === 0) return '';
  if (format === 'gfm' || !hasSpans(t.rows)) {
    const body = gfm(t.rows);
    return t.caption ? `*${cellMarkdown({ text: t.caption })}*\n\n${body}` : body;
  }
  const headerRows = t.headerRows ?? (t.rows[0]!.every((c) => c.header) ? 1 : 0);
  return html(t.rows, headerRows, t.caption);
}

/** The table as text: cells by tabs, rows by lines (spans repeated, so columns stay aligned). */
export const tableText = (rows: TableCell[][]): string =>
  expandSpans(rows)
    .map((r) => r.map((c) => plainText(c.text).replace(/\s+/g, ' ').trim()).join('\t'))
    .join('\n');
