/**
 * A document's Markdown from its pages' layouts (`types.ts`): running headers, footers and page numbers removed
 * (text in the top or bottom margin that repeats across pages, digits aside, or carries the page number), tables and
 * reading order per page (`tables.ts`, `order.ts`), blocks (`blocks.ts`), then the document's decisions: the body
 * font size (the size most characters have), headings (larger than the body, or bold lines on their own) with levels
 * by size, the outline confirming titles and giving levels, a table that goes on at the top of the next page joined
 * to the one before, and a paragraph cut by a page break joined. Pure.
 */
import { toBlocks } from './blocks';
import { withoutColumnProse } from './column-tables';
import { assignLevels, headingOf, labelsApart } from './headings';
import { toFragments, type Fragment } from './lines';
import { readingOrder } from './order';
import { findTables, type Table } from './tables';
import { furnitureBlocks, linesBox, tableBox, type PageBlock } from './provenance';
import { cell, renderPage, renderRun, type Out } from './render';
import { splitNotes, textRole } from './roles';
import { repeatSpans } from './table-spans';
import type { PageLayout } from './types';
import type { TableFormatName } from '../../../core/jobs/job-defaults';

export interface DocumentMarkdown {
  /** The whole document. */
  markdown: string;
  /** Each page's own Markdown, in the order given. */
  pages: { page: number; markdown: string; blocks: PageBlock[] }[];
}

/** Share of the page height at top and bottom where running headers and footers live. */
const MARGIN = 0.1;
const PAGE_NUMBER = /^(page|seite|p\.)?\s*[-–(]?\s*(\d{1,4}|[ivxlcdm]{1,6})\s*[-–)]?\s*((of|von|\/)\s*\d{1,4})?$/i;

const normKey = (t: string) => t.toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ').trim();
/** Fragments of each page without running headers, footers and page numbers. */
function withoutFurniture(pages: readonly PageLayout[], frags: Fragment[][]): Fragment[][] {
  // Candidates: the two outermost lines at the top and at the bottom, inside the margins.
  const outer = frags.map((fs) => {
    const lines = [...new Set(fs.map((f) => f.line))].sort((a, b) => a - b);
    return new Set([...lines.slice(0, 2), ...lines.slice(-2)]);
  });
  const pageIndex = new Map(pages.map((p, i) => [p, i]));
  const inMargin = (p: PageLayout, f: Fragment) =>
    outer[pageIndex.get(p)!].has(f.line) && (f.y > p.height * (1 - MARGIN) || f.y < p.height * MARGIN);
  const seen = new Map<string, Set<number>>();
  pages.forEach((p, i) => {
    for (const f of frags[i]) {
      if (!inMargin(p, f)) continue;
      const k = normKey(f.text);
      seen.set(k, (seen.get(k) ?? new Set()).add(i));
    }
  });
  const minPages = Math.max(2, Math.ceil(0.4 * pages.length));
  const furniture = (p: PageLayout, f: Fragment) =>
    inMargin(p, f) && (PAGE_NUMBER.test(f.text.trim()) || (seen.get(normKey(f.text))?.size ?? 0) >= minPages);
  // A header that names the chapter ("Chapter 4: Function reference 12") changes with the chapter, so it repeats on
  // fewer pages than the share above; it carries the page number, though: a margin line that starts or ends with a
  // number running with the page (the same text, numbers aside, and the same difference between its number and the
  // page's) on three pages or more is a running header, whatever it says.
  const withPage = pages.map((p, i) => {
    const lines = new Map<number, Fragment[]>();
    for (const f of frags[i]) if (inMargin(p, f)) lines.set(f.line, [...(lines.get(f.line) ?? []), f]);
    return [...lines].map(([line, fs]) => {
      const text = fs
        .map((f) => f.text)
        .join(' ')
        .trim();
      const ends = [...text.matchAll(/^\d{1,4}(?=\D)|(?<=\D)\d{1,4}$/g)].map((m) => Number(m[0]));
      return { line, keys: ends.map((n) => `${normKey(text)}@${n - p.page}`) };
    });
  });
  const running = new Map<string, Set<number>>();
  withPage.forEach((ls, i) => {
    for (const k of ls.flatMap((l) => l.keys)) running.set(k, (running.get(k) ?? new Set()).add(i));
  });
  const runningLines = withPage.map(
    (ls) => new Set(ls.filter((l) => l.keys.some((k) => (running.get(k)?.size ?? 0) >= 3)).map((l) => l.line)),
  );
  // A line goes only as a whole: a number in the last row of a table is no page number.
  return pages.map((p, i) => {
    const kept = new Set(frags[i].filter((f) => !furniture(p, f) && !runningLines[i].has(f.line)).map((f) => f.line));
    return frags[i].filter((f) => kept.has(f.line));
  });
}

/** The font size most characters of the document have. */
function bodySize(frags: Fragment[][]): number {
  const weight = new Map<number, number>();
  for (const f of frags.flat()) {
    const s = Math.round(f.size * 2) / 2;
    weight.set(s, (weight.get(s) ?? 0) + f.text.length);
  }
  return [...weight.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 10;
}

/**
 * A document that opens with a paragraph whose first line is a title in body type (title case, no closing
 * punctuation, the next line starting anew with a capital): that line is the document's title, a heading.
 */
function titleApart(outs: Out[][], pages: readonly PageLayout[]): void {
  const index = outs.findIndex((o) => o.length > 0);
  const page = outs[index];
  const first = page?.[0];
  if (!page || first?.kind !== 'text' || first.lines.length < 2) return;
  const [line, next] = first.lines;
  const words = line.text.split(/\s+/);
  const long = words.filter((w) => /^\p{L}{4,}/u.test(w));
  const titleCase = long.length > 0 && long.filter((w) => /^\p{Lu}/u.test(w)).length >= (2 / 3) * long.length;
  if (words.length > 12 || /[.!?:;,]["'”’)]?$/u.test(line.text) || !titleCase || !/^\p{Lu}/u.test(next.text)) return;
  const height = pages[index].height;
  const rest = first.lines.slice(1);
  page.splice(
    0,
    1,
    { kind: 'heading', h: { text: line.text, size: first.size, bold: first.bold }, box: linesBox([line], height) },
    { ...first, lines: rest, box: linesBox(rest, height) },
  );
}

const sameColumns = (a: Table, b: Table) =>
  a.columns.length === b.columns.length &&
  a.columns.every((c, i) => Math.abs(c[0] - b.columns[i][0]) < 25 || Math.abs(c[1] - b.columns[i][1]) < 25);

/**
 * How tables come out: `auto` writes GFM, and HTML for a table whose cells span columns; `gfm` always GFM (a
 * spanning cell's text in its first column).
 */
export interface MarkdownOptions {
  tableFormat?: TableFormatName;
}

/** The document's Markdown, whole and page by page. */
export function documentMarkdown(pages: readonly PageLayout[], options: MarkdownOptions = {}): DocumentMarkdown {
  const rawFrags = pages.map((p) => toFragments(p.items, p.segments));
  const frags = withoutFurniture(pages, rawFrags);
  const body = bodySize(frags);
  const outs: Out[][] = pages.map((p, i) => {
    const { tables, rest } = withoutColumnProse(frags[i], findTables(frags[i], p.segments));
    if (options.tableFormat === 'gfm')
      for (const t of tables)
        if (t.spans) {
          t.rows = repeatSpans(t.rows, t.spans);
          delete t.spans;
        }
    const blocks = toBlocks(readingOrder(rest, tables));
    return blocks.map((b): Out => {
      const box = b.kind === 'table' ? tableBox(b.table, p.height) : linesBox(b.lines, p.height);
      const h = headingOf(b, body, p.outline ?? []);
      return h ? { kind: 'heading', h, box } : { ...b, box };
    });
  });
  labelsApart(outs, body);
  titleApart(outs, pages);
  assignLevels(outs, body);
  outs.forEach((o, i) => {
    for (const x of o) x.role = textRole(x, body, pages[i].height);
    outs[i] = o.flatMap((x) => splitNotes(x, pages[i].height));
  });

  // A table continued at the top of the next page: one table in the document (a repeated header row dropped); the
  // page's own Markdown shows its part under the first part's header.
  const continued = new Map<Table, string[]>();
  const joinedInto = new Map<Table, Table>();
  for (let i = 1; i < outs.length; i++) {
    const last = outs[i - 1][outs[i - 1].length - 1];
    const first = outs[i][0];
    if (last?.kind !== 'table' || first?.kind !== 'table' || !sameColumns(last.table, first.table)) continue;
    const head = (joinedInto.get(last.table) ?? last.table).rows[0];
    const cont = first.table;
    if (cont.rows[0].map(cell).join('|') === head.map(cell).join('|')) cont.rows = cont.rows.slice(1);
    if (cont.rows.length === 0) continue;
    continued.set(cont, head);
    joinedInto.set(cont, joinedInto.get(last.table) ?? last.table);
  }
  const pageMd = outs.map((o, i) => {
    // What the furniture rule took off the page: its running headers and footers, blocks outside the Markdown.
    const kept = new Set(frags[i]);
    const furniture = furnitureBlocks(
      rawFrags[i].filter((f) => !kept.has(f)),
      pages[i].height,
    );
    return { page: pages[i].page, ...renderPage(o, continued, furniture.header, furniture.footer) };
  });

  // The whole document: parts of a continued table appended to their first part, a paragraph cut by the page break
  // joined.
  const flat: Out[] = [];
  for (const page of outs) {
    page.forEach((o, j) => {
      const prev = flat[flat.length - 1];
      if (o.kind === 'table' && joinedInto.has(o.table)) {
        joinedInto.get(o.table)!.rows.push(...o.table.rows);
        return;
      }
      if (j === 0 && prev?.kind === 'text' && o.kind === 'text') {
        const tail = prev.lines[prev.lines.length - 1].text;
        if (!/[.!?:]["”’)]?$/u.test(tail) && /^\p{Ll}/u.test(o.lines[0].text)) {
          flat[flat.length - 1] = { ...prev, lines: [...prev.lines, ...o.lines] };
          return;
        }
      }
      flat.push(o);
    });
  }
  return { markdown: renderRun(flat), pages: pageMd };
}
