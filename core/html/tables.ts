import { load, type Cheerio, type CheerioAPI } from 'cheerio';

/** domhandler's node types, reached through cheerio's own signatures (domhandler is not a direct dependency). */
type AnyNode = ReturnType<CheerioAPI['root']>[0]['children'][number];
type Element = ReturnType<Cheerio<AnyNode>['children']> extends Cheerio<infer E> ? E : never;

/**
 * One HTML table as plain text. Every row (and `headers`, when present) has the same length: the table's widest
 * row after colspan/rowspan expansion, shorter rows padded with ''.
 */
export interface ExtractedTable {
  /** The last row of <thead>, or a leading all-<th> row when there is no <thead>; [] when the table has neither. */
  headers: string[];
  /** Data rows, <tfoot> rows last. */
  rows: string[][];
  /** Text of the table's <caption>, when it has a non-empty one. */
  caption?: string;
}

/** Limits that keep a hostile table (colspan="999999" on every row) from blowing up memory or time. */
export interface SpanLimits {
  /** Widest row the expansion builds; cells starting beyond it are dropped. HTML itself caps colspan at 1000. */
  maxColumns?: number;
  /** Cells the expansion (and padding) may add per table; past it, spans count as 1 and rows are not padded. */
  maxAddedCells?: number;
  /** Pad every row with empty cells to the table's width, so the table is rectangular. */
  pad?: boolean;
}

const DEFAULT_MAX_COLUMNS = 1000;
const DEFAULT_MAX_ADDED_CELLS = 200_000;
const SECTION = new Set(['thead', 'tbody', 'tfoot']);
const CELL = new Set(['td', 'th']);
const SKIP_TEXT = new Set(['table', 'script', 'style', 'template', 'noscript']);
const BLOCK = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'dd',
  'div',
  'dl',
  'dt',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'ul',
]);

interface Slot {
  cell: Element;
  origin: boolean;
}

/** One row group as HTML defines it: a thead, tbody or tfoot, or a run of <tr> directly under <table>. */
interface RowGroup {
  section: Element | null;
  rows: Element[];
}

function isElement(node: AnyNode): node is Element {
  return node.nodeType === 1;
}

function childElements(node: Element, names: Set<string>): Element[] {
  return node.children.filter((c): c is Element => isElement(c) && names.has(c.name));
}

/** The table's own row groups in document order; rows of nested tables are not included. */
export function rowGroups(table: Element): RowGroup[] {
  const groups: RowGroup[] = [];
  let loose: RowGroup | null = null;
  for (const child of table.children) {
    if (!isElement(child)) continue;
    if (SECTION.has(child.name)) {
      loose = null;
      groups.push({ section: child, rows: childElements(child, new Set(['tr'])) });
    } else if (child.name === 'tr') {
      if (!loose) groups.push((loose = { section: null, rows: [] }));
      loose.rows.push(child);
    }
  }
  return groups;
}

/** The cells (td/th) of one row, in order. */
export function rowCells(row: Element): Element[] {
  return childElements(row, CELL);
}

/** HTML's "rules for parsing non-negative integers": leading digits count ("2px" is 2), anything else is null. */
function parseSpan(value: string | undefined): number | null {
  const m = /^\s*\+?(\d+)/.exec(value ?? '');
  return m ? Number(m[1]) : null;
}

/** A new empty element shaped like `template` (no attributes, no children) named `name`. */
export function blankElement(template: Element, name: string): Element {
  const el = template.cloneNode(false);
  el.name = name;
  el.attribs = {};
  return el;
}

function containsTable(node: Element): boolean {
  return node.children.some((c) => isElement(c) && (c.name === 'table' || containsTable(c)));
}

function copyOfCell($: CheerioAPI, cell: Element): Element {
  const copy = cell.cloneNode(true);
  if (containsTable(copy)) $(copy).find('table').remove();
  return copy;
}

function replaceRowCells(row: Element, cells: Element[]): void {
  for (const old of rowCells(row)) old.parent = null;
  row.children = cells;
  cells.forEach((cell, i) => {
    cell.parent = row;
    cell.prev = cells[i - 1] ?? null;
    cell.next = cells[i + 1] ?? null;
  });
}

/**
 * Rewrites `table` in place so that no cell spans: a colspan=3 cell becomes three cells with the same content, a
 * rowspan=2 cell is repeated in the next row at the same column. Spans stay inside their row group, as in HTML;
 * rowspan="0" reaches the group's end; non-numeric or zero colspan counts as 1. Copies leave out nested tables, so
 * a nested table still appears once. Returns the table's width in columns.
 */
export function expandTableSpans($: CheerioAPI, table: Element | Cheerio<Element>, limits: SpanLimits = {}): number {
  const el = 'nodeType' in table ? table : table[0];
  if (!el) return 0;
  const maxColumns = limits.maxColumns ?? DEFAULT_MAX_COLUMNS;
  let budget = limits.maxAddedCells ?? DEFAULT_MAX_ADDED_CELLS;
  const groups = rowGroups(el).map((g) => ({ rows: g.rows, grid: g.rows.map((): Slot[] => []) }));
  let width = 0;
  let template: Element | null = null;

  for (const { rows, grid } of groups) {
    rows.forEach((row, r) => {
      let c = 0;
      for (const cell of rowCells(row)) {
        template ??= cell;
        while (grid[r]![c]) c++;
        if (c >= maxColumns) break;
        let cs = Math.min(Math.max(parseSpan(cell.attribs.colspan) ?? 1, 1), maxColumns - c);
        const rsRaw = parseSpan(cell.attribs.rowspan);
        let rs = Math.min(rsRaw === 0 ? rows.length - r : Math.max(rsRaw ?? 1, 1), rows.length - r);
        if (cs * rs - 1 > budget) cs = rs = 1;
        delete cell.attribs.colspan;
        delete cell.attribs.rowspan;
        for (let dr = 0; dr < rs; dr++) {
          for (let dc = 0; dc < cs; dc++) {
            const line = grid[r + dr]!;
            if (line[c + dc]) continue;
            line[c + dc] = { cell, origin: dr === 0 && dc === 0 };
            if (dr || dc) budget--;
          }
        }
        c += cs;
      }
      width = Math.max(width, grid[r]!.length);
    });
  }

  for (const { rows, grid } of groups) {
    rows.forEach((row, r) => {
      const line = grid[r]!;
      const original = rowCells(row);
      const padTo = limits.pad && template && width - line.length <= budget ? width : line.length;
      const unchanged = padTo === original.length && original.every((cell, i) => line[i]?.cell === cell);
      if (unchanged) return;
      const allTh = original.length > 0 && original.every((cell) => cell.name === 'th');
      const cells: Element[] = [];
      for (let i = 0; i < padTo; i++) {
        const slot = line[i];
        if (slot?.origin) cells.push(slot.cell);
        else if (slot) cells.push(copyOfCell($, slot.cell));
        else cells.push(blankElement(template ?? row, allTh ? 'th' : 'td'));
      }
      if (padTo > line.length) budget -= padTo - line.length;
      replaceRowCells(row, cells);
    });
  }
  return width;
}

function collectText(node: AnyNode, out: string[]): void {
  if (node.nodeType === 3) {
    out.push(node.data);
    return;
  }
  if (!isElement(node)) return;
  if (SKIP_TEXT.has(node.name)) {
    if (node.name === 'table') out.push(' ');
    return;
  }
  if (node.name === 'br') {
    out.push(' ');
    return;
  }
  const block = BLOCK.has(node.name) || CELL.has(node.name);
  if (block) out.push(' ');
  for (const child of node.children) collectText(child, out);
  if (block) out.push(' ');
}

/** Text of an element with whitespace collapsed, <br> and block boundaries as spaces, nested tables left out. */
export function cellText(node: Element): string {
  const out: string[] = [];
  for (const child of node.children) collectText(child, out);
  return out.join('').replace(/\s+/g, ' ').trim();
}

function pad(row: string[], width: number): string[] {
  return row.length >= width ? row : row.concat(Array<string>(width - row.length).fill(''));
}

function tableToText($: CheerioAPI, table: Element): ExtractedTable | null {
  expandTableSpans($, table);
  const groups = rowGroups(table);
  const head = groups.find((g) => g.section?.name === 'thead' && g.rows.length > 0);
  const body = groups.filter((g) => g !== head && g.section?.name !== 'tfoot');
  const foot = groups.filter((g) => g !== head && g.section?.name === 'tfoot');
  const texts = (rows: Element[]): string[][] => rows.map((row) => rowCells(row).map(cellText));

  let headers: string[] = [];
  let rows = texts([...body, ...foot].flatMap((g) => g.rows));
  if (head) {
    headers = texts(head.rows).at(-1)!;
  } else {
    const first = body.find((g) => g.rows.length > 0)?.rows[0];
    const cells = first ? rowCells(first) : [];
    if (cells.length > 0 && cells.every((cell) => cell.name === 'th')) {
      headers = rows.shift()!;
    }
  }
  const width = Math.max(headers.length, ...rows.map((row) => row.length));
  if (width === 0) return null;

  const result: ExtractedTable = {
    headers: headers.length > 0 ? pad(headers, width) : [],
    rows: rows.map((row) => pad(row, width)),
  };
  const caption = childElements(table, new Set(['caption']))[0];
  const captionText = caption ? cellText(caption) : '';
  if (captionText) result.caption = captionText;
  return result;
}

/**
 * Every table in `html`, in document order, as text. A nested table is its own entry and is not repeated in the
 * text of the outer cell that holds it. Tables without any cell are skipped.
 */
export function extractTables(html: string): ExtractedTable[] {
  if (!html.trim()) return [];
  const $ = load(html);
  const tables: ExtractedTable[] = [];
  for (const table of $('table').toArray()) {
    const extracted = tableToText($, table);
    if (extracted) tables.push(extracted);
  }
  return tables;
}
