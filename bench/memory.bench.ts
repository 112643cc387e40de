/**
 * Memory and storage under load (issue #13, defects 3 and 8), on the real `worker/main.ts` and `api/main.ts`
 * processes against a Temporal dev server (temp SQLite file, headless):
 *
 *   1. 50 concurrent uploads of distinct ~10 MB text PDFs to POST /api/pdf/process (native): api and worker peak RSS,
 *      and the bytes left under DATA_DIR (blob store) per input byte, by area (records, jobs, cache, uploads).
 *   2. One more request for one of them (a cache miss when its entry is gone, else a hit), then 50 concurrent identical
 *      requests answered from the result cache: api and worker peak RSS, and the api's RSS 10 s later.
 *
 * Peak RSS is the kernel's high-water mark (VmHWM, reset at the start of each phase where allowed) and the largest
 * VmRSS sampled every 250 ms. Asserts nothing; prints figures (and the status codes seen: 429 when MAX_HEAVY_REQUESTS
 * is below the concurrency).
 *
 *   npx tsx bench/memory.bench.ts      (or `npm run bench -- memory`)
 *
 * Knobs (env): BENCH_MEM_DOCS (50), BENCH_MEM_CONCURRENCY (50), BENCH_MEM_PAGES (1000), BENCH_MEM_LINES (80 lines
 * a page, ~10 MB at 1000 pages), BENCH_MEM_HITS (50). Extra service variables pass through (MAX_HEAVY_REQUESTS...).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startTemporalDev } from '../scripts/services.mjs';
import { mapPool } from '../core/runtime/pool';
import { buildPdf } from '../test/support/documents/pdf-factory';
import { startService, stopService } from './service';
import { RssSampler, cleanupRegistry, envInt, out, secs, sleep, temporalBinary } from './support';

const DOCS = envInt('BENCH_MEM_DOCS', 50);
const CONCURRENCY = envInt('BENCH_MEM_CONCURRENCY', 50);
const PAGES = envInt('BENCH_MEM_PAGES', 1000);
const LINES = envInt('BENCH_MEM_LINES', 80);
const HITS = envInt('BENCH_MEM_HITS', 50);

/** A text PDF whose every line is distinct (document `doc`), about `PAGES × LINES × 120` bytes. */
function documentPdf(doc: number): Buffer {
  const words = [
    'Vertrag',
    'Grüße',
    'Straße',
    'Rechnung',
    'Anlage',
    'Prüfung',
    'Bericht',
    'Übersicht',
    'Zahlung',
    'Frist',
  ];
  const line = (p: number, i: number) =>
    `Dokument ${doc} Seite ${p} Zeile ${i}: ${Array.from({ length: 9 }, (_, k) => words[(p * 7 + i * 3 + k) % words.length]).join(' ')} ${(p * 1000 + i) * 37}`;
  return buildPdf({
    title: `Dokument ${doc}`,
    pages: Array.from({ length: PAGES }, (_, p) => ({
      kind: 'lines' as const,
      lines: Array.from({ length: LINES }, (_, i) => line(p + 1, i)),
      size: 7,
      leading: 9,
    })),
  });
}

async function post(url: string, file: string): Promise<{ status: number; cache: string | null; bytes: number }> {
  const form = new FormData();
  form.append('file', await fs.openAsBlob(file, { type: 'application/pdf' }), path.basename(file));
  form.append('extraction_method', 'native');
  const res = await fetch(`${url}/api/pdf/process`, {
    method: 'POST',
    body: form,
    signal: AbortSignal.timeout(600_000),
  });
  const bytes = (await res.arrayBuffer()).byteLength;
  return { status: res.status, cache: res.headers.get('x-cache'), bytes };
}

function bytesUnder(dir: string): Map<string, number> {
  const by = new Map<string, number>();
  const walk = (d: string, area: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p, area || e.name);
      else by.set(area, (by.get(area) ?? 0) + fs.statSync(p).size);
    }
  };
  if (fs.existsSync(dir)) walk(dir, '');
  return by;
}

const statuses = (rs: { status: number; cache: string | null }[]) => {
  const c = new Map<string, number>();
  for (const r of rs)
    c.set(`${r.status}${r.cache ? ` ${r.cache}` : ''}`, (c.get(`${r.status}${r.cache ? ` ${r.cache}` : ''}`) ?? 0) + 1);
  return [...c].map(([k, v]) => `${v}× ${k}`).join(', ');
};
const mb = (b: number) => `${(b / 2 ** 20).toFixed(1)} MB`;

async function main(): Promise<void> {
  const cleanups = cleanupRegistry();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-bench-memory-'));
  cleanups.add(async () => fs.rmSync(tmp, { recursive: true, force: true }));
  const rss = new RssSampler();
  cleanups.add(async () => rss.stop());
  try {
    out(
      `# docproc memory benchmark — ${new Date().toISOString()}; ${os.availableParallelism()} cores; load average ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    );
    let t = performance.now();
    const files: string[] = [];
    let inputBytes = 0;
    for (let d = 0; d < DOCS; d++) {
      const f = path.join(tmp, `doc-${d}.pdf`);
      const pdf = documentPdf(d);
      fs.writeFileSync(f, pdf);
      inputBytes += pdf.length;
      files.push(f);
    }
    out(
      `inputs: ${DOCS} PDFs of ${PAGES} pages, ${mb(inputBytes / DOCS)} each (${mb(inputBytes)} in all), made in ${secs(performance.now() - t)}`,
    );

    const temporal = await startTemporalDev({
      bin: temporalBinary(),
      dbFile: path.join(tmp, 'temporal', 'temporal.db'),
      port: await freePort(),
      uiPort: 0,
      headless: true,
    });
    cleanups.add(() => temporal.stop(10_000));
    const extra = Object.fromEntries(
      ['MAX_HEAVY_REQUESTS', 'RETENTION_DAYS', 'SYNC_WAIT_MS']
        .filter((k) => process.env[k])
        .map((k) => [k, process.env[k]!]),
    );
    const svc = await startService('memory', temporal.address, { SYNC_WAIT_MS: '1800000', ...extra });
    let stopped = false;
    cleanups.add(async () => {
      if (!stopped) await stopService(svc);
    });
    rss.watch('api', svc.api.child.pid);
    rss.watch('worker', svc.worker.child.pid);
    out(rss.report('api', 'after start: ').text);
    out(rss.report('worker', 'after start: ').text);

    // ---- 1. concurrent distinct uploads
    rss.resetPhase();
    t = performance.now();
    const uploads = await mapPool(files, CONCURRENCY, (f) => post(svc.url, f));
    out('');
    out(`== ${DOCS} uploads, ${CONCURRENCY} at once: ${statuses(uploads)} in ${secs(performance.now() - t)}`);
    const upApi = rss.report('api', '  ');
    const upWorker = rss.report('worker', '  ');
    out(upApi.text);
    out(upWorker.text);
    const stored = bytesUnder(path.join(svc.dataDir, 'blobs'));
    const total = [...stored.values()].reduce((a, b) => a + b, 0);
    const answered = uploads.filter((r) => r.status === 200).length;
    const answeredInput = (inputBytes / DOCS) * answered;
    out(
      `  stored under DATA_DIR/blobs: ${mb(total)} for ${answered} documents (${mb(answeredInput)} input) → ${(total / answeredInput).toFixed(2)} bytes per input byte; by area: ${[...stored].map(([k, v]) => `${k} ${mb(v)}`).join(', ')}`,
    );
    out(
      `  answer size: ${mb(uploads[0].bytes)} per document (${(uploads[0].bytes / (inputBytes / DOCS)).toFixed(2)} per input byte)`,
    );

    // ---- 2. concurrent cache hits
    const first = await post(svc.url, files[0]);
    out('');
    out(`== first request for document 0 again: ${statuses([first])}`);
    await sleep(2000);
    rss.resetPhase();
    out(rss.report('api', '  before the hits: ').text);
    t = performance.now();
    const hits = await Promise.all(Array.from({ length: HITS }, () => post(svc.url, files[0])));
    out(`== ${HITS} concurrent identical requests: ${statuses(hits)} in ${secs(performance.now() - t)}`);
    const hitApi = rss.report('api', '  ');
    const hitWorker = rss.report('worker', '  ');
    out(hitApi.text);
    out(hitWorker.text);
    await sleep(10_000);
    out(rss.report('api', '  10 s later: ').text);

    out('');
    out('== SUMMARY ==');
    out(
      `uploads (${DOCS} × ${mb(inputBytes / DOCS)}, ${CONCURRENCY} at once): api peak ${upApi.hwmMb.toFixed(0)} MB, worker peak ${upWorker.hwmMb.toFixed(0)} MB; stored ${(total / answeredInput).toFixed(2)} bytes per input byte`,
    );
    out(
      `cache hits (${HITS} at once, ${mb(hits[0].bytes)} answers): api peak ${hitApi.hwmMb.toFixed(0)} MB (goal < 500 MB: ${hitApi.hwmMb < 500 ? 'met' : 'NOT met'}), worker peak ${hitWorker.hwmMb.toFixed(0)} MB`,
    );
    await stopService(svc);
    stopped = true;
  } finally {
    await cleanups.run();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`bench failed: ${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
