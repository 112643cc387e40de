/**
 * Where the blocks of a page stand (contract §13, issue 36), against the text layer's own word boxes: the real
 * documents of the PDF → Markdown bench (bench/real-pdfs.ts, from Debian's packages), read as the service reads them
 * (`markdownPageLayouts` + `documentMarkdown`), beside `pdftotext -bbox` on the same pages in the same run.
 *
 * Scores, per document:
 * - words in their box: of the words (4 letters or more) of each block's Markdown, the share that stands on the page
 *   (`pdftotext -bbox`) with its centre inside that block's box;
 * - layer covered: of the text layer's words on the page, the share whose centre lies inside some block's box
 *   (running headers and footers count: they are blocks);
 * - box area: the blocks' boxes' mean area as a share of the page (a box around the whole page would score the two
 *   above at 100 %; this says it does not);
 * - time: the blocks cost nothing apart from the Markdown (they are made as it is): the Markdown's time beside
 *   pdftotext -bbox's.
 *
 *   npx tsx bench/pdf-blocks.bench.ts      (BENCH_BLOCKS_MAX_PAGES, default 30)
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { markdownPageLayouts } from '../providers/pdf/markdown-layouts';
import { documentMarkdown } from '../domain/pdf/markdown/document';
import { textLayerWords, type TextLayerWord } from '../test/support/documents/text-layer-words';
import { envInt, out } from './support';
import { provisionDocs } from './real-pdfs';

const MAX_PAGES = envInt('BENCH_BLOCKS_MAX_PAGES', 30);

/** The text layer's words by page, and the time `pdftotext -bbox` took. */
async function layerWords(pdf: string, last: number): Promise<{ words: Map<number, TextLayerWord[]>; ms: number }> {
  const t0 = performance.now();
  const all = await textLayerWords(pdf, { first: 1, last });
  const ms = performance.now() - t0;
  const words = new Map<number, TextLayerWord[]>();
  for (const w of all) {
    if (!words.has(w.page)) words.set(w.page, []);
    words.get(w.page)!.push(w);
  }
  return { words, ms };
}

const inBox = (w: TextLayerWord, b: number[]) =>
  w.cx >= b[0] - 1 && w.cx <= b[2] + 1 && w.cy >= b[1] - 1 && w.cy <= b[3] + 1;
const pct = (a: number, b: number) => (b === 0 ? 'n/a' : `${((100 * a) / b).toFixed(1)} %`);

async function main(): Promise<void> {
  const files = provisionDocs();
  out(`# PDF blocks against the text layer's word boxes — ${new Date().toISOString()}; ≤ ${MAX_PAGES} pages each`);
  out('');
  out(
    '| document | pages | blocks | words in their box | layer covered | mean box / page area | md ms | pdftotext -bbox ms |',
  );
  out('| --- | --- | --- | --- | --- | --- | --- | --- |');
  const sum = { own: 0, ownAll: 0, cov: 0, covAll: 0 };
  for (const pdf of files) {
    const count = Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [pdf]).toString())?.[1] ?? 0);
    const first = Array.from({ length: Math.min(MAX_PAGES, count) }, (_, i) => i + 1);
    const layouts = await markdownPageLayouts(pdf, first);
    const pages = [...layouts.values()];
    const t0 = performance.now();
    const doc = documentMarkdown(pages);
    const mdMs = performance.now() - t0;
    const { words, ms } = await layerWords(pdf, Math.max(...pages.map((p) => p.page)));
    let own = 0;
    let ownAll = 0;
    let cov = 0;
    let covAll = 0;
    let blocks = 0;
    let area = 0;
    for (const [i, p] of doc.pages.entries()) {
      const layout = pages[i];
      const layer = words.get(p.page) ?? [];
      blocks += p.blocks.length;
      for (const b of p.blocks) {
        area += ((b.bbox[2] - b.bbox[0]) * (b.bbox[3] - b.bbox[1])) / (layout.width * layout.height);
        const mine = b.text
          .replace(/[#`|*\\]+/g, ' ')
          .split(/\s+/)
          .filter((w) => /^\p{L}{4,}$/u.test(w));
        for (const w of mine) {
          ownAll++;
          if (layer.some((x) => x.text.includes(w) && inBox(x, b.bbox))) own++;
        }
      }
      for (const x of layer) {
        covAll++;
        if (p.blocks.some((b) => inBox(x, b.bbox))) cov++;
      }
    }
    Object.assign(sum, {
      own: sum.own + own,
      ownAll: sum.ownAll + ownAll,
      cov: sum.cov + cov,
      covAll: sum.covAll + covAll,
    });
    out(
      `| ${path.basename(pdf)} | ${pages.length} | ${blocks} | ${pct(own, ownAll)} | ${pct(cov, covAll)} | ` +
        `${pct(area, blocks)} | ${mdMs.toFixed(0)} | ${ms.toFixed(0)} |`,
    );
  }
  out('');
  out(
    `all documents: words in their block's box ${pct(sum.own, sum.ownAll)} (${sum.own} of ${sum.ownAll}); text layer ` +
      `covered by blocks ${pct(sum.cov, sum.covAll)} (${sum.cov} of ${sum.covAll})`,
  );
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
