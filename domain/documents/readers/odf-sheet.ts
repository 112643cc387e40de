/**
 * ODS to the document model: one `sheet` part per `table:table`, named, its cells' values (`office:value` for
 * numbers, percentages and currencies, `office:date-value`, `office:time-value`, `office:boolean-value`, else the
 * cell's text), spans as `colspan`/`rowspan` (covered cells skipped), empty leading and trailing rows and columns
 * trimmed. Formulas are never evaluated: the value the suite saved is read. A hidden sheet is read and says so.
 *
 * Repeats: office suites write `number-columns-repeated="16384"` and `number-rows-repeated="1048576"` for the empty
 * rest of a sheet, so an empty repeat only moves the position. A repeated non-empty cell or row is expanded, but
 * never past column 1,000, row 100,000 or 1,000,000 cells: the sheet is TRUNCATED there (not refused), and its part
 * says so in a paragraph before the table.
 */
import type { DocBlock, DocPart, DocumentReader, TableCell } from '../model';
import { elements, textOf, type XmlElement } from '../xml';
import { openZip } from '../zip';
import { openOdf } from './odf-package';

export const MAX_ODS_COLUMNS = 1_000;
export const MAX_ODS_ROWS = 100_000;
export const MAX_ODS_CELLS = 1_000_000;

export const readOds: DocumentReader = async (bytes, limits) => {
  const zip = await openZip(bytes, limits);
  try {
    const { body, meta, styles } = await openOdf(zip, limits, 'spreadsheet');
    const parts: DocPart[] = elements(body, 'table:table').map((t) => {
      const { table, truncated } = sheetTable(t);
      const blocks: DocBlock[] = [];
      if (styles.hiddenTables.has(t.attrs['table:style-name'] ?? ''))
        blocks.push({ type: 'paragraph', text: 'This sheet is hidden in the workbook.' });
      if (truncated)
        blocks.push({
          type: 'paragraph',
          text:
            `This sheet was truncated to its first ${MAX_ODS_COLUMNS.toLocaleString('en')} columns, ` +
            `${MAX_ODS_ROWS.toLocaleString('en')} rows and ${MAX_ODS_CELLS.toLocaleString('en')} cells.`,
        });
      if (table) blocks.push(table);
      return { kind: 'sheet', name: t.attrs['table:name'], blocks };
    });
    return { format: 'ods', ...meta, parts, images: [] };
  } finally {
    zip.close();
  }
};

function cellValue(cell: XmlElement): string {
  const a = cell.attrs;
  switch (a['office:value-type']) {
    case 'float':
    case 'percentage':
    case 'currency':
      return a['office:value'] ?? textOf(cell);
    case 'date':
      return a['office:date-value'] ?? textOf(cell);
    case 'time':
      return a['office:time-value'] ?? textOf(cell);
    case 'boolean':
      return a['office:boolean-value'] === 'true' ? 'TRUE' : a['office:boolean-value'] === 'false' ? 'FALSE' : '';
    default:
      return elements(cell, 'text:p')
        .map((p) => textOf(p))
        .join('\n');
  }
}

function rowsOf(el: XmlElement): XmlElement[] {
  const rows: XmlElement[] = [];
  for (const c of elements(el)) {
    if (c.name === 'table:table-row') rows.push(c);
    else if (['table:table-header-rows', 'table:table-rows', 'table:table-row-group'].includes(c.name))
      rows.push(...rowsOf(c));
  }
  return rows;
}

const repeat = (v: string | undefined) => Math.max(1, Math.floor(Number(v ?? 1)) || 1);

function sheetTable(sheet: XmlElement): { table?: DocBlock; truncated: boolean } {
  const values = new Map<number, Map<number, string>>();
  const spans = new Map<string, { rowspan: number; colspan: number }>();
  let top = Infinity;
  let bottom = -1;
  let left = Infinity;
  let right = -1;
  let cells = 0;
  let truncated = false;
  let r = 0;
  for (const row of rowsOf(sheet)) {
    if (r >= MAX_ODS_ROWS) {
      truncated ||= row.children.length > 0 && rowHasValue(row);
      break;
    }
    // The row's cells once, then placed at each repeat of the row.
    const rowCells: Array<[number, string, number, number]> = [];
    let c = 0;
    for (const cell of elements(row)) {
      if (cell.name !== 'table:table-cell' && cell.name !== 'table:covered-table-cell') continue;
      const times = repeat(cell.attrs['table:number-columns-repeated']);
      const value = cell.name === 'table:table-cell' ? cellValue(cell).trim() : '';
      if (value) {
        const colspan = repeat(cell.attrs['table:number-columns-spanned']);
        const rowspan = repeat(cell.attrs['table:number-rows-spanned']);
        for (let i = 0; i < times; i++) {
          if (c + i >= MAX_ODS_COLUMNS) {
            truncated = true;
            break;
          }
          rowCells.push([c + i, value, colspan, rowspan]);
        }
      }
      c += times;
    }
    const times = repeat(row.attrs['table:number-rows-repeated']);
    if (rowCells.length) {
      for (let i = 0; i < times; i++) {
        if (r + i >= MAX_ODS_ROWS || cells + rowCells.length > MAX_ODS_CELLS) {
          truncated = true;
          break;
        }
        let cols = values.get(r + i);
        if (!cols) values.set(r + i, (cols = new Map()));
        for (const [col, value, colspan, rowspan] of rowCells) {
          cols.set(col, value);
          if (colspan > 1 || rowspan > 1) spans.set(`${r + i}:${col}`, { colspan, rowspan });
          left = Math.min(left, col);
          right = Math.max(right, col);
        }
        cells += rowCells.length;
        top = Math.min(top, r + i);
        bottom = Math.max(bottom, r + i);
      }
    }
    r += times;
    if (truncated && cells + rowCells.length > MAX_ODS_CELLS) break;
  }
  if (bottom < 0) return { truncated };
  const covered = new Set<string>();
  for (const [key, span] of spans) {
    const [r0, c0] = key.split(':').map(Number);
    for (let y = r0; y < r0 + span.rowspan && y <= bottom; y++)
      for (let x = c0; x < c0 + span.colspan && x <= right; x++) if (y !== r0 || x !== c0) covered.add(`${y}:${x}`);
  }
  const rows: TableCell[][] = [];
  for (let y = top; y <= bottom; y++) {
    const row: TableCell[] = [];
    for (let x = left; x <= right; x++) {
      if (covered.has(`${y}:${x}`)) continue;
      const cell: TableCell = { text: values.get(y)?.get(x) ?? '' };
      const span = spans.get(`${y}:${x}`);
      // Spans clipped to the trimmed range, as the XLSX reader does.
      if (span) {
        const colspan = Math.min(span.colspan, right - x + 1);
        const rowspan = Math.min(span.rowspan, bottom - y + 1);
        if (colspan > 1) cell.colspan = colspan;
        if (rowspan > 1) cell.rowspan = rowspan;
      }
      row.push(cell);
    }
    rows.push(row);
  }
  return { table: { type: 'table', rows }, truncated };
}

function rowHasValue(row: XmlElement): boolean {
  return elements(row, 'table:table-cell').some((c) => cellValue(c).trim() !== '');
}
