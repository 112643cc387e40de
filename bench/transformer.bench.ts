/**
 * Transformer endpoints: the cache-hit path against a model-backed miss, and a 1 MB HTML-to-Markdown conversion
 * with the api and worker processes' peak memory. Prints readable lines to stdout; asserts nothing about timing.
 *
 *   npx tsx bench/transformer.bench.ts        (or `npm run bench -- transformer`, which provisions the engines first)
 *
 * Everything runs on 127.0.0.1: the OpenAI-compatible test server of the tests (a fixed 200 ms latency on every
 * answer), a Temporal dev server on a temp SQLite file in WAL mode (headless), and the real `worker/main.ts` and
 * `api/main.ts` processes as `npm start` runs them. Knobs (env): BENCH_MISS_N (30), BENCH_HIT_N (200),
 * BENCH_HTML_RUNS (3), BENCH_HTML_BYTES (1048576).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startTemporalDev, stopChild } from '../scripts/services.mjs';
import { startLlmServer } from '../test/support/servers/llm-server';
import { llmEnv } from '../test/support/servers/llm-env';
import type { Proc } from '../test/support/servers/processes';
import { cleanupRegistry, envInt, ms, out, spawnServicePair, temporalBinary } from './support';

const MISS_N = envInt('BENCH_MISS_N', 30);
const HIT_N = envInt('BENCH_HIT_N', 200);
const HTML_RUNS = envInt('BENCH_HTML_RUNS', 3);
const HTML_BYTES = envInt('BENCH_HTML_BYTES', 1024 * 1024);
const LATENCY_MS = 200;

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) =>
    s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] : NaN;
  return { n: s.length, p50: at(50), p95: at(95), min: s[0] ?? NaN, max: s[s.length - 1] ?? NaN };
}
const statLine = (label: string, xs: number[]) => {
  const x = stats(xs);
  return `${label.padEnd(34)} p50 ${ms(x.p50).padStart(9)}  p95 ${ms(x.p95).padStart(9)}  min ${ms(x.min).padStart(9)}  max ${ms(x.max).padStart(9)}  (n=${x.n})`;
};

/** VmHWM and VmRSS of a process in MB, from /proc/<pid>/status (Linux). */
function mem(pid: number | undefined): { hwm: number; rss: number } {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const mb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? NaN) / 1024;
    return { hwm: mb('VmHWM'), rss: mb('VmRSS') };
  } catch {
    return { hwm: NaN, rss: NaN };
  }
}
const memLine = (name: string, pid: number | undefined) => {
  const m = mem(pid);
  return `${name.padEnd(8)} peak RSS (VmHWM) ${m.hwm.toFixed(0).padStart(5)} MB   RSS now ${m.rss.toFixed(0).padStart(5)} MB   (pid ${pid})`;
};

/** About `bytes` characters of HTML: headings, paragraphs with inline markup and links, lists and tables. */
function pageHtml(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const rows = Array.from(
      { length: 8 },
      (_, r) =>
        `<tr><td>Zeile ${r}</td><td>${i * 8 + r}</td><td><a href="https://example.com/t/${i}/${r}">Link ${r}</a></td></tr>`,
    ).join('');
    const p =
      `<h2>Abschnitt ${i}</h2><p>Absatz ${i} mit <b>Fettdruck</b>, <i>Kursivem</i>, <code>code()</code> und einem ` +
      `<a href="https://example.com/${i}">Verweis</a>. Köln liegt am Rhein; der Dom ist gotisch.</p>` +
      `<ul><li>Punkt eins</li><li>Punkt zwei mit <a href="https://example.org/${i}">Link</a></li><li>Punkt drei<ol><li>a</li><li>b</li></ol></li></ul>` +
      `<table><thead><tr><th>Name</th><th>Wert</th><th>Verweis</th></tr></thead><tbody>${rows}</tbody></table>`;
    parts.push(p);
    size += p.length;
  }
  return `<!doctype html><html><head><title>Bench</title></head><body>${parts.join('\n')}</body></html>`;
}

async function post(
  base: string,
  p: string,
  body: unknown,
): Promise<{ status: number; ms: number; cache: string | null; body: any }> {
  const payload = JSON.stringify(body);
  const t0 = performance.now();
  const res = await fetch(base + p, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: payload,
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  const took = performance.now() - t0;
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, ms: took, cache: res.headers.get('x-cache'), body: parsed };
}

async function main(): Promise<void> {
  const cleanups = cleanupRegistry();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-bench-transformer-'));
  cleanups.add(async () => fs.rmSync(tmp, { recursive: true, force: true }));
  try {
    out(
      `transformer bench: ${os.availableParallelism()} cores, load average ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}, Node ${process.version}`,
    );
    const llm = await startLlmServer();
    llm.respond(() => ({ delayMs: LATENCY_MS }));
    cleanups.add(() => llm.close());
    out(`LLM test server on ${llm.url}: every answer after ${LATENCY_MS} ms`);

    const t0 = performance.now();
    const temporal = await startTemporalDev({
      bin: temporalBinary(),
      dbFile: path.join(tmp, 'temporal.db'),
      port: await freePort(),
      uiPort: 0,
      headless: true,
    });
    cleanups.add(() => temporal.stop(10_000));
    out(
      `temporal dev server on ` +
        `${temporal.address} (file DB, WAL), ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );

    const port = await freePort();
    const env = {
      ...llmEnv(llm, { LLM_TIMEOUT_MS: '30000' }),
      TEMPORAL_ADDRESS: temporal.address,
      DATA_DIR: path.join(tmp, 'data'),
      LOG_LEVEL: 'warn',
      TASK_QUEUE_PREFIX: `bench-tf-${randomUUID().slice(0, 8)}`,
      HOST: '127.0.0.1',
      SERVICE_API_KEY: '',
      DOCPROC_PARENT_PID: String(process.pid),
    };
    const pair = await spawnServicePair(env, port);
    const procs: Record<'worker' | 'api', Proc> = { worker: pair.worker, api: pair.api };
    for (const name of ['api', 'worker'] as const) cleanups.add(() => stopChild(procs[name].child, 15_000));
    const url = pair.url;
    out(`api ${url} and worker healthy ${(pair.startMs / 1000).toFixed(1)} s after spawn`);
    out(memLine('api', procs.api.child.pid));
    out(memLine('worker', procs.worker.child.pid));

    // ---- template: misses (model, 200 ms) against hits (blob store, no job)
    const request = {
      text: 'Ada und Alan trafen sich am 3. Mai in Köln und beschlossen, das Projekt fortzusetzen.',
      template: 'Besprechung',
      target_language: 'en',
    };
    const unexpected: string[] = [];
    const check = (r: Awaited<ReturnType<typeof post>>, want: string) => {
      if (r.status !== 200 || r.cache !== want)
        unexpected.push(`${r.status} X-Cache ${r.cache} (wanted ${want}) ${JSON.stringify(r.body).slice(0, 200)}`);
    };
    for (let i = 0; i < 3; i++)
      check(await post(url, '/api/transformer/template', { ...request, use_cache: false }), 'miss');
    const misses: number[] = [];
    for (let i = 0; i < MISS_N; i++) {
      const r = await post(url, '/api/transformer/template', { ...request, use_cache: false });
      check(r, 'miss');
      misses.push(r.ms);
    }
    for (let i = 0; i < 10; i++) check(await post(url, '/api/transformer/template', request), 'hit');
    const calls = llm.chatRequests().length;
    const hits: number[] = [];
    for (let i = 0; i < HIT_N; i++) {
      const r = await post(url, '/api/transformer/template', request);
      check(r, 'hit');
      hits.push(r.ms);
    }
    const hitCalls = llm.chatRequests().length - calls;
    out();
    out(`POST /api/transformer/template (Besprechung, en), sequential; 3 + 10 warm-up requests not counted`);
    out(statLine(`miss (use_cache:false, model ${LATENCY_MS} ms)`, misses));
    out(statLine('hit (default use_cache)', hits));
    const hit = stats(hits).p50;
    const miss = stats(misses).p50;
    out(
      `hit p50 ${ms(hit)} (goal ≤ 20 ms: ${hit <= 20 ? 'met' : 'NOT met'}); miss p50 ${ms(miss)}; miss/hit ratio ${(miss / hit).toFixed(1)}×`,
    );
    out(
      `model calls during the ${HIT_N} hits: ${hitCalls}; unexpected answers: ${unexpected.length}${unexpected.length ? ` (first: ${unexpected[0]})` : ''}`,
    );

    // ---- html-to-markdown of a generated 1 MB page, without the cache
    const html = pageHtml(HTML_BYTES);
    out();
    out(
      `POST /api/transformer/html-to-markdown, use_cache:false, generated page of ` +
        `${(html.length / 1024 / 1024).toFixed(2)} MB (${Buffer.byteLength(html)} bytes UTF-8)`,
    );
    out(`before: ${memLine('api', procs.api.child.pid)}`);
    out(`before: ${memLine('worker', procs.worker.child.pid)}`);
    const times: number[] = [];
    for (let i = 0; i < HTML_RUNS; i++) {
      const r = await post(url, '/api/transformer/html-to-markdown', { html, use_cache: false });
      const md: string = r.body?.data?.markdown ?? '';
      out(
        `run ${i + 1}: ${r.status} X-Cache ${r.cache} in ${ms(r.ms)}; Markdown ${(md.length / 1024).toFixed(0)} KB, ${(md.match(/^\| /gm) ?? []).length} table lines, ${(md.match(/\]\(https:/g) ?? []).length} links`,
      );
      if (r.status !== 200) out(`   body: ${JSON.stringify(r.body).slice(0, 300)}`);
      times.push(r.ms);
    }
    const first = times[0];
    out(
      `1 MB html-to-markdown: first ` +
        `${ms(first)}, median ${ms(stats(times).p50)} (goal ≤ 2 s: ${stats(times).p50 <= 2000 ? 'met' : 'NOT met'})`,
    );
    out(`after: ${memLine('api', procs.api.child.pid)}`);
    out(`after: ${memLine('worker', procs.worker.child.pid)}`);
    out(
      `load average at the end ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
    );
  } finally {
    await cleanups.run();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`${(e as Error)?.stack ?? e}\n`);
    process.exit(1);
  },
);
