/**
 * Table truth of real documents for the PDF Markdown bench: a Texinfo manual's HTML twin (made from the same source
 * as its PDF) gives its data tables; the pages holding each are found in `pdftotext`'s text; outputs are scored on
 * those pages only.
 *
 * - detection: share of truth tables that come out as a GFM table whose first row is the truth's first row (its
 *   header, or its first data row when it has none), every cell equal after normalisation; false tables: GFM tables
 *   none of whose rows matches a row of a truth table of the document (half of its cells or more equal, same columns).
 * - cell accuracy: share of truth cells found in the right row and column: each truth row is paired with the GFM row
 *   (among the GFM tables matched to its table) that has the most cells equal in the same column, and those count.
 * - cells whole: share of truth cells (3 words or more) whose text appears whole anywhere in the output (any
 *   structure): whether a wrapped cell is kept together, for pdftotext too.
 * Cell text normalised: NFKC, lower case, markup and punctuation stripped, whitespace collapsed.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import * as cheerio from 'cheerio';

export type Rows = string[][];

export interface TruthTable {
  rows: Rows;
  /** 1-based pages that hold its rows. */
  pages: number[];
}

export const normCell = (t: string) =>
  t
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\\\|/g, ' ')
    .replace(/[*_#`|>]/g, ' ')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();

/**
 * The data tables of a Texinfo HTML manual: `<table>`s without a class (the indices are `index-*`, examples in a box
 * `cartouche`) that are no "Jump to:" letter bar of an index. Rows without text dropped, cells normalised.
 */
export function htmlTables(html: string): Rows[] {
  const $ = cheerio.load(html);
  return $('table')
    .toArray()
    .filter((t) => !$(t).attr('class') && !/^Jump to:/.test($(t).text().trim()))
    .map((t) =>
      $(t)
        .find('tr')
        .toArray()
        .map((tr) =>
          $(tr)
            .children('td,th')
            .toArray()
            .map((c) => normCell($(c).text())),
        )
        .filter((r) => r.some((c) => c !== '')),
    )
    .filter((rows) => rows.length > 0);
}

/**
 * Where each table is: the first page from which its rows are found in order (a row is on a page when the first
 * three words of its first two cells with text are; a row may be on the page of the row before or the next), best start
 * taken. Tables come in document order, so the search for one starts at the page where the one before starts.
 */
export function locateTables(pdf: string, tables: Rows[]): TruthTable[] {
  const text = execFileSync('pdftotext', ['-enc', 'UTF-8', pdf, '-'], { maxBuffer: 1 << 28 }).toString();
  const pages = text.split('\f').map((p) => ` ${normCell(p)} `);
  const has = (p: number, r: string[]) =>
    r
      .filter((c) => c !== '')
      .slice(0, 2)
      .every((c) => pages[p].includes(` ${c.split(' ').slice(0, 3).join(' ')} `));
  const out: TruthTable[] = [];
  let from = 0;
  for (const rows of tables) {
    let best = { start: -1, pages: [] as number[], hit: 0 };
    for (let s = from; s < pages.length && best.hit < rows.length; s++) {
      if (!has(s, rows[0])) continue;
      let p = s;
      let hit = 0;
      const ps = new Set<number>();
      for (const r of rows) {
        if (has(p, r)) hit++;
        else if (p + 1 < pages.length && has(p + 1, r)) [p, hit] = [p + 1, hit + 1];
        else continue;
        ps.add(p + 1);
      }
      if (hit > best.hit) best = { start: s, pages: [...ps], hit };
    }
    if (best.start < 0 || best.hit < 0.4 * rows.length) continue;
    out.push({ rows, pages: best.pages });
    from = best.start;
  }
  return out;
}

/** Runs of consecutive page numbers (a document's Markdown is built per run: tables join across a page break). */
export function pageRuns(pages: number[]): number[][] {
  const sorted = [...new Set(pages)].sort((a, b) => a - b);
  const runs: number[][] = [];
  for (const p of sorted) {
    const last = runs[runs.length - 1];
    if (last && p === last[last.length - 1] + 1) last.push(p);
    else runs.push([p]);
  }
  return runs;
}

/**
 * The GFM tables of a Markdown text (header row first, the delimiter row left out), cells normalised; and its HTML
 * tables (written where cells span), a cell of `colspan` n as its text and n − 1 empty cells.
 */
export function gfmTables(md: string): Rows[] {
  const tables: Rows[] = htmlBlocks(md);
  let cur: Rows | undefined;
  const lines = md.split('\n');
  lines.forEach((line, i) => {
    const l = line.trim();
    const isRow = l.startsWith('|') && l.endsWith('|') && l.length > 1;
    if (!isRow) {
      cur = undefined;
      return;
    }
    if (/^\|(\s*:?-{3,}:?\s*\|)+$/.test(l)) return;
    if (!cur) {
      // A table starts with a header row followed by a delimiter row.
      if (!/^\|(\s*:?-{3,}:?\s*\|)+$/.test(lines[i + 1]?.trim() ?? '')) return;
      cur = [];
      tables.push(cur);
    }
    cur.push(
      l
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map(normCell),
    );
  });
  return tables;
}

function htmlBlocks(md: string): Rows[] {
  return [...md.matchAll(/^<table>\n[\s\S]*?\n<\/table>$/gm)].map((m) => {
    const $ = cheerio.load(m[0]);
    return $('tr')
      .toArray()
      .map((tr) =>
        $(tr)
          .children('td,th')
          .toArray()
          .flatMap((c) => [
            normCell($(c).text()),
            ...Array.from({ length: Number($(c).attr('colspan') ?? 1) - 1 }, () => ''),
          ]),
      );
  });
}

const equalCells = (a: string[], b: string[]) => b.filter((c, j) => c !== '' && a[j] === c).length;

const rowMatches = (gfm: string[], truth: string[]) => {
  const filled = truth.filter((c) => c !== '').length;
  return filled > 0 && equalCells(gfm, truth) >= Math.max(1, filled / 2);
};

export interface TableScore {
  detected: number;
  tables: number;
  falseTables: number;
  gfmTables: number;
  cellsFound: number;
  cells: number;
  cellsWhole: number;
  longCells: number;
}

export function scoreTables(md: string, truth: readonly TruthTable[]): TableScore {
  const got = gfmTables(md);
  // Each GFM table goes to the truth table it shares the most matching rows with.
  const owner = got.map((g) => {
    let best = -1;
    let bestN = 0;
    truth.forEach((t, i) => {
      // Rows matched, then (for tables alike: one before and after a correction) cells equal break the tie.
      const cellsEqual = g.reduce((a, r) => a + Math.max(0, ...t.rows.map((tr) => equalCells(r, tr))), 0);
      const n = g.filter((r) => t.rows.some((tr) => rowMatches(r, tr))).length + cellsEqual / 1e4;
      if (n > bestN) [best, bestN] = [i, n];
    });
    return best;
  });
  const text = ` ${normCell(md)} `;
  const s: TableScore = {
    detected: 0,
    tables: truth.length,
    falseTables: owner.filter((o) => o < 0).length,
    gfmTables: got.length,
    cellsFound: 0,
    cells: 0,
    cellsWhole: 0,
    longCells: 0,
  };
  truth.forEach((t, i) => {
    const mine = got.filter((_, j) => owner[j] === i);
    const first = t.rows[0];
    if (mine.some((g) => g[0].length === first.length && g[0].every((c, j) => c === first[j]))) s.detected++;
    for (const row of t.rows) {
      const filled = row.filter((c) => c !== '');
      s.cells += filled.length;
      s.cellsFound += Math.max(0, ...mine.flatMap((g) => g.map((r) => equalCells(r, row))));
      for (const c of filled)
        if (c.split(' ').length >= 3) {
          s.longCells++;
          if (text.includes(` ${c} `)) s.cellsWhole++;
        }
    }
  });
  return s;
}

/** The table twins: a PDF and the HTML made from the same Texinfo source. */
export function tableTwins(pairs: readonly { pdf: string; html: string }[]): { pdf: string; tables: TruthTable[] }[] {
  return pairs
    .filter((p) => fs.existsSync(p.pdf) && fs.existsSync(p.html))
    .map((p) => ({ pdf: p.pdf, tables: locateTables(p.pdf, htmlTables(fs.readFileSync(p.html, 'utf8'))) }));
}
