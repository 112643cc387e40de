/**
 * The API's event loop while it answers a native PDF request itself (issues 24, 25): the Markdown is read and built
 * in a worker thread, so the loop should be as free as during a text request. The real app (`createApp`, as
 * test/support/servers/api.ts builds it: no Temporal needed for a direct answer) in this process; for each document, in one
 * run: the loop's delay while idle, during a text request and during a Markdown request (`monitorEventLoopDelay`,
 * 1 ms resolution: max and p99; `eventLoopUtilization`: the loop's active time, which includes this script's own
 * fetch), and, for comparison, the way not taken: the layout step (`markdownPageLayouts`) and the rules
 * (`documentMarkdown`) run on the loop, and the layouts' structured clone (what handing them to a thread costs).
 * Asserts nothing.
 *
 *   npx tsx bench/pdf-direct-loop.bench.ts
 *
 * Inputs: a generated 300-page text PDF (INLINE_PDF_MAX_PAGES's default) and the real documents of 100–300 pages of
 * bench/real-pdfs.ts. Knob: BENCH_LOOP_RUNS (2 per document and kind).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { startTestApi } from '../test/support/servers/api';
import { buildPdf, wrapText } from '../test/support/documents/pdf-factory';
import { markdownPageLayouts } from '../providers/pdf/markdown-layouts';
import { documentMarkdown } from '../domain/pdf/markdown/document';
import { describePdf } from '../providers/pdf/text-engine';
import { realPdfsWithPages } from './real-pdfs';
import { envInt, ms, out, sleep } from './support';

const RUNS = envInt('BENCH_LOOP_RUNS', 2);
const PAGES = 300;

function generated(): Buffer {
  const para =
    'The council approved the new budget after a long debate about schools, roads and the renovation of the old ' +
    'depot; the minutes will be published next week. ';
  return buildPdf({
    title: `Loop ${PAGES}`,
    pages: Array.from({ length: PAGES }, (_, n) => ({
      kind: 'lines' as const,
      size: 10,
      leading: 15,
      lines: [`Chapter ${n + 1}`, '', ...wrapText(para.repeat(12), 88).slice(0, 42)],
    })),
  });
}

/** The loop's delay (max, p99) and active time while `work` runs. */
async function watch(work: () => Promise<unknown>): Promise<{ max: number; p99: number; active: number; ms: number }> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const e0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  await work();
  const took = performance.now() - t0;
  const elu = performance.eventLoopUtilization(e0);
  h.disable();
  return { max: h.max / 1e6, p99: h.percentile(99) / 1e6, active: elu.active, ms: took };
}

async function main(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-bench-loop-'));
  const api = await startTestApi({ INLINE_PDF_MAX_PAGES: String(PAGES), MAX_PDF_PAGES: '2000', LOG_LEVEL: 'silent' });
  try {
    const gen = path.join(tmp, `generated-${PAGES}.pdf`);
    fs.writeFileSync(gen, generated());
    const docs = [
      { name: `generated (${PAGES} pages)`, file: gen },
      ...realPdfsWithPages(100, PAGES).map((d) => ({
        name: `${path.basename(d.file)} (${d.pages} pages)`,
        file: d.file,
      })),
    ];
    const post = async (bytes: Buffer, markdown: boolean) => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(bytes)], { type: 'application/pdf' }), 'doc.pdf');
      form.append('extraction_method', 'native');
      form.append('useCache', 'false');
      if (markdown) form.append('output_format', 'markdown');
      const res = await fetch(`${api.url}/api/pdf/process`, { method: 'POST', body: form });
      await res.arrayBuffer();
      if (res.status !== 200 || res.headers.get('x-cache') !== 'miss') throw new Error(`answered ${res.status}`);
    };
    out(
      `load average at start: ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}; ${os.availableParallelism()} cores`,
    );
    // The first Markdown request starts the thread: not measured.
    await post(fs.readFileSync(gen), true);
    const fmt = (w: { max: number; p99: number; active: number; ms: number }) =>
      `max ${ms(w.max)}, p99 ${ms(w.p99)}, loop active ${ms(w.active)} of ${ms(w.ms)}`;
    for (const doc of docs) {
      const bytes = fs.readFileSync(doc.file);
      const d = await describePdf(doc.file, 'poppler');
      const pages = Array.from({ length: Math.min(PAGES, d.pageCount) }, (_, i) => i + 1);
      out(`== ${doc.name}`);
      for (let run = 1; run <= RUNS; run++) {
        const idle = await watch(() => sleep(300));
        const text = await watch(() => post(bytes, false));
        const md = await watch(() => post(bytes, true));
        let layouts: Awaited<ReturnType<typeof markdownPageLayouts>> | undefined;
        const onLoop = await watch(async () => (layouts = await markdownPageLayouts(doc.file, pages, { parallel: 1 })));
        let t = performance.now();
        documentMarkdown([...layouts!.values()]);
        const rules = performance.now() - t;
        t = performance.now();
        structuredClone([...layouts!.values()]);
        const clone = performance.now() - t;
        out(`  run ${run}: idle loop max ${ms(idle.max)}`);
        out(`    text request (direct):               ${fmt(text)}`);
        out(`    Markdown request (direct, thread):    ${fmt(md)}`);
        out(
          `    not taken, on the loop: layout step ${fmt(onLoop)}; rules ${ms(rules)} in one piece; layouts' clone ${ms(clone)} in one piece`,
        );
      }
    }
    out(
      `load average at end: ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await api.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
