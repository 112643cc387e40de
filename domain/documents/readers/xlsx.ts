/**
 * XLSX (SpreadsheetML) to the document model: one `sheet` part per sheet in workbook order, each a table of the
 * cells' values (shared and inline strings, numbers as written, booleans, formulas' cached `<v>`, dates as ISO dates
 * by the cell's number format and the workbook's 1900/1904 date system), merged ranges as spans, empty leading and
 * trailing rows and columns trimmed. Formulas are never evaluated; a hidden sheet is read and says it is hidden.
 */
import { type DocBlock, type DocPart, type DocumentReader, type TableCell } from '../model';
import { child, descendants, elements, path, textOf, type XmlElement } from '../xml';
import { openZip } from '../zip';
import { isOn, mainPart, readCoreProperties, readRels, readXmlPart } from './ooxml-package';

export const readXlsx: DocumentReader = async (bytes, limits) => {
  const zip = await openZip(bytes, limits);
  try {
    const part = await mainPart(zip, limits, 'xl/workbook.xml', 'Excel');
    const workbook = await readXmlPart(zip, part, limits);
    const rels = await readRels(zip, part, limits);
    const target = (type: string) => [...rels.values()].find((r) => r.type === type && !r.external)?.target;
    const shared = sharedStrings(await readXmlPart(zip, target('sharedStrings') ?? 'xl/sharedStrings.xml', limits));
    const dateStyles = dateStyleIndexes(await readXmlPart(zip, target('styles') ?? 'xl/styles.xml', limits));
    const date1904 = isOn(path(workbook, 's:workbookPr')?.attrs.date1904 ?? '0');
    const parts: DocPart[] = [];
    for (const sheet of elements(path(workbook, 's:sheets'), 's:sheet')) {
      const rel = rels.get(sheet.attrs['r:id'] ?? '');
      const xml = rel && !rel.external ? await readXmlPart(zip, rel.target, limits) : undefined;
      const blocks: DocBlock[] = [];
      const state = sheet.attrs.state;
      if (state === 'hidden' || state === 'veryHidden')
        blocks.push({ type: 'paragraph', text: 'This sheet is hidden in the workbook.' });
      const table = xml ? sheetTable(xml, shared, dateStyles, date1904) : undefined;
      if (table) blocks.push(table);
      parts.push({ kind: 'sheet', name: sheet.attrs.name, blocks });
    }
    const props = await readCoreProperties(zip, limits);
    return { format: 'xlsx', title: props.title, author: props.author, language: props.language, parts, images: [] };
  } finally {
    zip.close();
  }
};

/** Shared strings in order; rich runs concatenated, phonetic guides (`rPh`) left out. */
function sharedStrings(root: XmlElement | undefined): string[] {
  return elements(root, 's:si').map((si) => stringItem(si));
}

function stringItem(si: XmlElement): string {
  const t = child(si, 's:t');
  if (t) return textOf(t);
  return elements(si, 's:r')
    .map((r) => textOf(child(r, 's:t')))
    .join('');
}

/** Built-in number formats that are dates or times (ECMA-376 part 1, 18.8.30). */
const BUILTIN_DATES = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47]);

/** The indexes of `cellXfs` whose number format is a date or time, and whether it shows a date, a time or both. */
function dateStyleIndexes(styles: XmlElement | undefined): Map<number, 'date' | 'time' | 'datetime'> {
  const custom = new Map<number, string>();
  for (const f of elements(path(styles, 's:numFmts'), 's:numFmt'))
    custom.set(Number(f.attrs.numFmtId), f.attrs.formatCode ?? '');
  const out = new Map<number, 'date' | 'time' | 'datetime'>();
  elements(path(styles, 's:cellXfs'), 's:xf').forEach((xf, i) => {
    const id = Number(xf.attrs.numFmtId ?? 0);
    const kind = BUILTIN_DATES.has(id)
      ? builtinKind(id)
      : custom.has(id)
        ? formatKind(custom.get(id) ?? '')
        : undefined;
    if (kind) out.set(i, kind);
  });
  return out;
}

const builtinKind = (id: number) => ((id >= 18 && id <= 21) || id >= 45 ? 'time' : id === 22 ? 'datetime' : 'date');

/** A custom format's kind, from its date and time tokens outside quoted text, escapes and `[...]` sections. */
function formatKind(code: string): 'date' | 'time' | 'datetime' | undefined {
  const bare = code
    .split(';')[0]
    .replace(/"[^"]*"/g, '')
    .replace(/\\./g, '')
    .replace(/\[[^\]]*\]/g, '');
  const date = /[dy]/i.test(bare) || (/m/i.test(bare) && !/[hs]/i.test(bare));
  const time = /[hs]/i.test(bare);
  return date && time ? 'datetime' : date ? 'date' : time ? 'time' : undefined;
}

/** A serial date to ISO 8601; the 1900 system counts the fictitious 29 February 1900 (serial 60). */
export function serialToIso(serial: number, date1904: boolean, kind: 'date' | 'time' | 'datetime'): string {
  const epoch = date1904 ? Date.UTC(1904, 0, 1) : serial < 60 ? Date.UTC(1899, 11, 31) : Date.UTC(1899, 11, 30);
  const ms = Math.round(serial * 86_400_000) + epoch;
  const iso = new Date(ms).toISOString();
  if (kind === 'date') return iso.slice(0, 10);
  if (kind === 'time') return iso.slice(11, 19);
  return iso.slice(0, 19);
}

/** `BC12` → [row 11, col 54] (0-based). */
function cellRef(ref: string): [number, number] | undefined {
  const m = /^([A-Z]+)(\d+)$/i.exec(ref);
  if (!m) return undefined;
  let col = 0;
  for (const ch of m[1].toUpperCase()) col = col * 26 + (ch.charCodeAt(0) - 64);
  return [Number(m[2]) - 1, col - 1];
}

function cellValue(c: XmlElement, shared: string[], dates: Map<number, string>, date1904: boolean): string {
  const type = c.attrs.t ?? 'n';
  const v = textOf(child(c, 's:v'));
  switch (type) {
    case 's':
      return shared[Number(v)] ?? '';
    case 'inlineStr':
      return child(c, 's:is') ? stringItem(child(c, 's:is') as XmlElement) : v;
    case 'b':
      return v === '1' ? 'TRUE' : v === '0' ? 'FALSE' : v;
    case 'str':
    case 'e':
      return v;
    default: {
      const kind = dates.get(Number(c.attrs.s ?? 0)) as 'date' | 'time' | 'datetime' | undefined;
      const n = Number(v);
      if (kind && v !== '' && Number.isFinite(n)) return serialToIso(n, date1904, kind);
      return v;
    }
  }
}

/** The sheet's cells as a table: trimmed to the used range, merged ranges spanning, covered cells dropped. */
function sheetTable(
  sheet: XmlElement,
  shared: string[],
  dates: Map<number, string>,
  date1904: boolean,
): DocBlock | undefined {
  const values = new Map<number, Map<number, string>>();
  let top = Infinity;
  let bottom = -1;
  let left = Infinity;
  let right = -1;
  let rowIndex = -1;
  for (const row of elements(path(sheet, 's:sheetData'), 's:row')) {
    rowIndex = row.attrs.r ? Number(row.attrs.r) - 1 : rowIndex + 1;
    let colIndex = -1;
    for (const c of elements(row, 's:c')) {
      const ref = c.attrs.r ? cellRef(c.attrs.r) : undefined;
      colIndex = ref ? ref[1] : colIndex + 1;
      const value = cellValue(c, shared, dates, date1904).trim();
      if (!value) continue;
      let cols = values.get(rowIndex);
      if (!cols) values.set(rowIndex, (cols = new Map()));
      cols.set(colIndex, value);
      top = Math.min(top, rowIndex);
      bottom = Math.max(bottom, rowIndex);
      left = Math.min(left, colIndex);
      right = Math.max(right, colIndex);
    }
  }
  if (bottom < 0) return undefined;
  const spans = new Map<string, { rowspan: number; colspan: number }>();
  const covered = new Set<string>();
  for (const m of descendants(path(sheet, 's:mergeCells'), 's:mergeCell')) {
    const [a, b] = (m.attrs.ref ?? '').split(':');
    const from = cellRef(a ?? '');
    const to = cellRef(b ?? a ?? '');
    if (!from || !to) continue;
    spans.set(`${from[0]}:${from[1]}`, { rowspan: to[0] - from[0] + 1, colspan: to[1] - from[1] + 1 });
    for (let r = from[0]; r <= to[0]; r++)
      for (let c = from[1]; c <= to[1]; c++) if (r !== from[0] || c !== from[1]) covered.add(`${r}:${c}`);
  }
  const rows: TableCell[][] = [];
  for (let r = top; r <= bottom; r++) {
    const row: TableCell[] = [];
    for (let c = left; c <= right; c++) {
      if (covered.has(`${r}:${c}`)) continue;
      const cell: TableCell = { text: values.get(r)?.get(c) ?? '' };
      const span = spans.get(`${r}:${c}`);
      // Spans clipped to the trimmed range, so a merge reaching into empty trimmed cells stays consistent.
      if (span) {
        const colspan = Math.min(span.colspan, right - c + 1);
        const rowspan = Math.min(span.rowspan, bottom - r + 1);
        if (colspan > 1) cell.colspan = colspan;
        if (rowspan > 1) cell.rowspan = rowspan;
      }
      row.push(cell);
    }
    rows.push(row);
  }
  return { type: 'table', rows };
}
