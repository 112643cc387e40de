/**
 * Page drawings (rulings and bullet marks, what the Markdown rules read of a page's paths): our content-stream reader
 * (`domain/pdf/content-drawings.ts`) beside the engine it replaces, pdf.js's operator list, on the same pages of
 * the real documents of the Markdown bench, in one run: time (best of `BENCH_DRAWINGS_RUNS`, the document opened
 * once per run by each) and whether the two give the same drawings page by page.
 *
 *   npx tsx bench/pdf-drawings.bench.ts      (BENCH_DRAWINGS_PAGES, default 60 pages per document; 0 = all)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ContentDrawings } from '../domain/pdf/content-drawings';
import type { PageDrawings } from '../domain/pdf/drawings';
import { openPdf } from '../providers/pdf/pdfjs';
import { provisionDocs } from './real-pdfs';
import { bestOf, envInt, out, ratio } from './support';

const PAGES = envInt('BENCH_DRAWINGS_PAGES', 60);
const RUNS = envInt('BENCH_DRAWINGS_RUNS', 3);

const pageCount = (f: string) =>
  Number(/^Pages:\s+(\d+)/m.exec(execFileSync('pdfinfo', [f], { encoding: 'utf8' }))?.[1] ?? 0);

async function main() {
  out(`Page drawings: our content-stream reader against pdf.js's operator list (best of ${RUNS})`);
  out(
    `load average at the start: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  out('');
  out('| document | pages | rulings | marks | same pages | ours ms | pdf.js ms | pdf.js / ours |');
  out('|---|---|---|---|---|---|---|---|');
  let oursTotal = 0;
  let pdfjsTotal = 0;
  let pagesTotal = 0;
  let sameTotal = 0;
  for (const file of provisionDocs()) {
    const n = PAGES > 0 ? Math.min(PAGES, pageCount(file)) : pageCount(file);
    const bytes = fs.readFileSync(file);
    const pages = Array.from({ length: n }, (_, i) => i + 1);
    const ours = await bestOf(RUNS, () => {
      const doc = new ContentDrawings(bytes);
      return pages.map((p) => doc.pageDrawings(p));
    });
    const pdfjs = await bestOf(RUNS, async () => {
      const doc = await openPdf(bytes);
      try {
        const r: PageDrawings[] = [];
        for (const p of pages) r.push(await doc.pageDrawings(p));
        return r;
      } finally {
        await doc.close();
      }
    });
    const same = pages.filter((_, i) => JSON.stringify(ours.value[i]) === JSON.stringify(pdfjs.value[i])).length;
    const rulings = pdfjs.value.reduce((s, d) => s + d.segments.length, 0);
    const marks = pdfjs.value.reduce((s, d) => s + d.marks.length, 0);
    oursTotal += ours.ms;
    pdfjsTotal += pdfjs.ms;
    pagesTotal += n;
    sameTotal += same;
    out(
      `| ${path.basename(file)} | ${n} | ${rulings} | ${marks} | ${same}/${n} | ${ours.ms.toFixed(1)} | ${pdfjs.ms.toFixed(1)} | ${ratio(pdfjs.ms, ours.ms)} |`,
    );
  }
  out('');
  out(
    `total: ${pagesTotal} pages, the same drawings on ${sameTotal}; ours ${oursTotal.toFixed(0)} ms ` +
      `(${(oursTotal / pagesTotal).toFixed(2)} ms a page), pdf.js ${pdfjsTotal.toFixed(0)} ms: ${ratio(pdfjsTotal, oursTotal)}`,
  );
  out(
    `load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  process.exit(0);
}

void main();
