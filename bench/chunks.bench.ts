/**
 * Chunks for retrieval (contract §14, issue 37) on the real documents of the PDF → Markdown bench (bench/real-pdfs.ts,
 * from Debian's packages), read as the service reads them (`markdownPageLayouts` + `documentMarkdown`), then cut as
 * the pdf job's last step cuts them (`documentChunks`: the blocks found in the Markdown, packed at 512 tokens of
 * cl100k_base), beside the Markdown itself in the same run.
 *
 * Scores, per document:
 * - over budget: chunks whose text, counted again with js-tiktoken's own `encode`, is over the budget (goal 0);
 * - cut in a sentence: of the boundaries between two chunks that fall inside one paragraph or list item, those where
 *   the first chunk does not end a sentence, as a share of all boundaries (goal ≤ 1 %);
 * - heading path: chunks whose `heading_path` is the stack of the headings above its first block that is not a
 *   heading, in the Markdown (goal 100 %);
 * - pages: chunks whose `pages` hold the page of the text layer (`pdftotext`, page by page) that holds most of the
 *   chunk's runs of five words (goal 100 %; chunks with fewer than 3 runs found anywhere are left out);
 * - time: the chunks' time beside the Markdown's (layouts + rules) for the same pages (goal ≤ 1.1× in all: the chunks
 *   add at most 10 %).
 *
 * Then the recordings of the other benches, transcribed by the local speech engine and cut by the transcript chunker
 * (bench/chunks-media.ts).
 *
 *   npx tsx bench/chunks.bench.ts      (BENCH_CHUNKS_MAX_PAGES, default 100; BENCH_CHUNKS_MEDIA=0: PDFs only)
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { markdownPageLayouts } from '../providers/pdf/markdown-layouts';
import { documentMarkdown } from '../domain/pdf/markdown/document';
import { documentChunks } from '../capabilities/chunks';
import { markdownUnits } from '../domain/chunks/markdown-units';
import { tokenCounter } from '../domain/chunks/tokens';
import { envInt, out } from './support';
import { mediaChunks } from './chunks-media';
import { provisionDocs } from './real-pdfs';

const MAX_PAGES = envInt('BENCH_CHUNKS_MAX_PAGES', 100);
const MAX_TOKENS = 512;
const exact = new Tiktoken(cl100k);
const pct = (a: number, b: number) => (b === 0 ? 'n/a' : `${((100 * a) / b).toFixed(1)} %`);
const SENTENCE_END = /[.!?…:;]["'”’)\]*_`]*\s*$/u;

/** The text layer's text of pages 1..last, one string per page (pdftotext's form feeds). */
function layerPages(pdf: string, last: number): string[] {
  return execFileSync('pdftotext', ['-l', String(last), '-enc', 'UTF-8', pdf, '-'], { maxBuffer: 1 << 28 })
    .toString()
    .split('\f');
}

async function main(): Promise<void> {
  tokenCounter('cl100k_base').count('warm up');
  out(
    `# Chunks of real PDFs at ${MAX_TOKENS} tokens — ${new Date().toISOString()}; ≤ ${MAX_PAGES} pages each (Markdown, then chunks)`,
  );
  out('');
  out(
    '| document | pages | chunks | over budget | cut in a sentence | heading path right | pages right | md ms | chunks ms | chunks / md |',
  );
  out('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  const sum = { chunks: 0, over: 0, cuts: 0, bounds: 0, path: 0, pages: 0, pagesAll: 0, md: 0, ch: 0, n: 0 };
  for (const pdf of provisionDocs()) {
    const count = Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [pdf]).toString())?.[1] ?? 0);
    const wanted = Array.from({ length: Math.min(MAX_PAGES, count) }, (_, i) => i + 1);
    const t0 = performance.now();
    const layouts = [...(await markdownPageLayouts(pdf, wanted)).values()];
    const doc = documentMarkdown(layouts);
    const mdMs = performance.now() - t0;
    const t1 = performance.now();
    const parts = doc.pages.map((p) => ({ page: p.page, text: p.markdown, blocks: p.blocks }));
    const { chunks = [] } = documentChunks(doc.markdown, parts, {
      chunking: true,
      chunk_max_tokens: MAX_TOKENS,
    });
    const chMs = performance.now() - t1;
    const md = doc.markdown;

    const over = chunks.filter((c) => exact.encode(c.text, [], []).length > MAX_TOKENS).length;
    // Boundaries inside a paragraph or list item, and those of them that do not end a sentence.
    const units = markdownUnits(md);
    const unitAt = (at: number) => units.find((u) => u.start <= at && at < u.end);
    let bounds = 0;
    let cuts = 0;
    for (let i = 1; i < chunks.length; i++) {
      bounds++;
      const end = chunks[i - 1].char_end;
      const u = unitAt(end - 1);
      if (!u || (u.kind !== 'paragraph' && u.kind !== 'list_item') || end >= u.end) continue;
      if (!SENTENCE_END.test(md.slice(u.start, end))) cuts++;
    }
    // The headings above each chunk's first block.
    let pathRight = 0;
    for (const c of chunks) {
      // The chunk's first block that is not a heading (its body stands under every heading before it).
      const body = units.find((u) => u.start >= c.char_start && u.start < c.char_end && u.kind !== 'heading');
      const at = body?.start ?? c.char_start;
      const stack: string[] = [];
      for (const u of units) {
        if (u.start > at) break;
        if (u.kind !== 'heading') continue;
        stack.length = Math.min(stack.length, (u.level ?? 1) - 1);
        while (stack.length < (u.level ?? 1) - 1) stack.push('');
        stack.push(u.title ?? '');
      }
      // A chunk that starts at a heading stands under it; blank levels between are dropped by the chunker as well.
      const want = stack.filter((s, i) => s !== '' || i === stack.length - 1);
      const got = c.heading_path.filter((s, i) => s !== '' || i === c.heading_path.length - 1);
      if (JSON.stringify(want) === JSON.stringify(got)) pathRight++;
    }
    // The page of the text layer that holds most of the chunk's runs of five words (letters and digits, lower case;
    // a manual repeats its common words on every page, not its sentences); pages within 10 % of the best count.
    const norm = (t: string) => t.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    const shingles = (w: string[]) => w.slice(0, Math.max(0, w.length - 4)).map((_, i) => w.slice(i, i + 5).join(' '));
    const layer = layerPages(pdf, Math.max(...wanted)).map((t) => new Set(shingles(norm(t))));
    let pagesRight = 0;
    let pagesAll = 0;
    for (const c of chunks) {
      const runs = [...new Set(shingles(norm(c.text)))];
      const scores = layer.map((set) => runs.filter((r) => set.has(r)).length);
      const top = Math.max(...scores);
      if (top < 3) continue;
      pagesAll++;
      if (c.pages.some((p) => scores[p - 1] >= 0.9 * top)) pagesRight++;
    }
    sum.chunks += chunks.length;
    sum.over += over;
    sum.cuts += cuts;
    sum.bounds += bounds;
    sum.path += pathRight;
    sum.pages += pagesRight;
    sum.pagesAll += pagesAll;
    sum.md += mdMs;
    sum.ch += chMs;
    sum.n += wanted.length;
    out(
      `| ${path.basename(pdf)} | ${wanted.length} | ${chunks.length} | ${over} | ${pct(cuts, bounds)} | ` +
        `${pct(pathRight, chunks.length)} | ${pct(pagesRight, pagesAll)} | ${mdMs.toFixed(0)} | ${chMs.toFixed(0)} | ` +
        `${((mdMs + chMs) / mdMs).toFixed(2)}× |`,
    );
  }
  out(
    `| **all** | ${sum.n} | ${sum.chunks} | **${sum.over}** | **${pct(sum.cuts, sum.bounds)}** | ` +
      `**${pct(sum.path, sum.chunks)}** | **${pct(sum.pages, sum.pagesAll)}** | ${sum.md.toFixed(0)} | ` +
      `${sum.ch.toFixed(0)} | **${((sum.md + sum.ch) / sum.md).toFixed(2)}×** |`,
  );
  out('');
  out(
    `Per 100 pages: Markdown ${((100 * sum.md) / sum.n).toFixed(0)} ms, chunks ${((100 * sum.ch) / sum.n).toFixed(0)} ms.`,
  );
  // The recordings (bench/chunks-media.ts); BENCH_CHUNKS_MEDIA=0 leaves them out.
  if (process.env.BENCH_CHUNKS_MEDIA !== '0') await mediaChunks();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
