/**
 * Answers without a job (issue 24): transformer cache hits read by the API itself and small HTML transforms in the
 * API's worker threads, each beside its raw engine in the same run (the cache entry read from the blob store
 * in-process; the HTML converter called in-process), printed as ratios. Asserts nothing about timing.
 *
 *   npx tsx bench/fastpath.bench.ts        (or `npm run bench -- fastpath`, which provisions the engines first)
 *
 * On 127.0.0.1: the OpenAI-compatible test server of the tests answering at once (so what is left is ours), a Temporal
 * dev server on a temp SQLite file (headless), and the real `worker/main.ts` and `api/main.ts` processes. The load runs
 * come from this process over keep-alive connections (node:http, one socket per client). Knobs (env): BENCH_SEQ_N
 * (300), BENCH_JOB_N (30), BENCH_LOAD_S (20), BENCH_HTML_CLIENTS (50), BENCH_HIT_CLIENTS (20), BENCH_RAW_MS (3000);
 * section 5 (audio hits, bench/fastpath-media.ts): BENCH_AUDIO_HIT_N (100), BENCH_AUDIO_JOB_HIT_N (20), BENCH_AUDIO_RAW_N (100).
 */
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { peekCache } from '../core/stores/cache';
import { TRANSFORM_CACHE_OPERATION, transformCacheKey } from '../core/stores/cache-keys';
import { htmlToMarkdown } from '../core/html';
import { runHtmlOperation } from '../core/html/run';
import { LocalBlobStore } from '../providers/storage';
import { freePort, startTemporalDev } from '../scripts/services.mjs';
import { LLM_MODEL, llmEnv } from '../test/support/servers/llm-env';
import { startLlmServer } from '../test/support/servers/llm-server';
import { audioHits } from './fastpath-media';
import { startService, stopService } from './service';
import { cleanupRegistry, CpuMeter, envInt, ms, out, ratio, temporalBinary } from './support';
import { agent, htmlKb, load, pct, post } from './load-client';

const SEQ_N = envInt('BENCH_SEQ_N', 300);
const JOB_N = envInt('BENCH_JOB_N', 30);
const LOAD_S = envInt('BENCH_LOAD_S', 20);
const HTML_CLIENTS = envInt('BENCH_HTML_CLIENTS', 50);
const HIT_CLIENTS = envInt('BENCH_HIT_CLIENTS', 20);
const RAW_MS = envInt('BENCH_RAW_MS', 3000);

const line = (label: string, xs: number[]) =>
  `${label.padEnd(46)} p50 ${ms(pct(xs, 50)).padStart(9)}  p99 ${ms(pct(xs, 99)).padStart(9)}  (n=${xs.length})`;
const goal = (ok: boolean) => (ok ? 'met' : 'NOT met');

function get(url: string): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(performance.now() - t0));
      })
      .on('error', reject);
  });
}

/** Runs `fn` back to back (`parallel` at once) for `forMs`: operations per second and their times. */
async function raw(forMs: number, parallel: number, fn: () => unknown): Promise<{ ops: number; times: number[] }> {
  const times: number[] = [];
  const deadline = performance.now() + forMs;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (performance.now() < deadline) {
        const s = performance.now();
        await fn();
        times.push(performance.now() - s);
      }
    }),
  );
  return { ops: times.length / ((performance.now() - t0) / 1000), times };
}

async function main(): Promise<void> {
  const cleanups = cleanupRegistry();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-bench-fastpath-'));
  cleanups.add(async () => fs.rmSync(tmp, { recursive: true, force: true }));
  try {
    const load0 = os.loadavg().map((x) => x.toFixed(1));
    out(`fastpath bench: ${os.availableParallelism()} cores, load average ${load0.join(' ')}, Node ${process.version}`);
    const llm = await startLlmServer();
    cleanups.add(() => llm.close());
    const temporal = await startTemporalDev({
      bin: temporalBinary(),
      dbFile: path.join(tmp, 'temporal.db'),
      port: await freePort(),
      uiPort: 0,
      headless: true,
    });
    cleanups.add(() => temporal.stop(10_000));
    const svc = await startService('fastpath', temporal.address, llmEnv(llm, { LLM_TIMEOUT_MS: '30000' }));
    cleanups.add(() => stopService(svc));
    const store = await new LocalBlobStore(path.join(svc.dataDir, 'blobs')).init();
    const base = svc.url;

    // ---- HTTP floor: the API's cheapest route, for scale.
    for (let i = 0; i < 20; i++) await get(`${base}/api/health/live`);
    const live: number[] = [];
    for (let i = 0; i < SEQ_N; i++) live.push(await get(`${base}/api/health/live`));

    // ---- 1. cache hit: the same translation again, sequential.
    const translation = {
      text: 'Der Rhein fließt durch Köln, und der Dom steht am Ufer. Die Brücke ist voller Menschen.',
      source_language: 'de',
      target_language: 'en',
    };
    const tBody = JSON.stringify(translation);
    const first = await post(`${base}/api/transformer/text`, tBody);
    if (first.status !== 200) throw new Error(`translation: ${first.status} ${first.text.slice(0, 300)}`);
    const hits: number[] = [];
    let hitBad = 0;
    for (let i = 0; i < 20; i++) await post(`${base}/api/transformer/text`, tBody);
    for (let i = 0; i < SEQ_N; i++) {
      const r = await post(`${base}/api/transformer/text`, tBody);
      if (r.status !== 200 || r.cache !== 'hit') hitBad++;
      hits.push(r.ms);
    }
    const key = transformCacheKey({ operation: 'text', ...translation }, { model: LLM_MODEL });
    if (!(await peekCache(store, TRANSFORM_CACHE_OPERATION, key))) throw new Error('no cache entry under the key');
    const rawRead = await raw(RAW_MS, 1, () => peekCache(store, TRANSFORM_CACHE_OPERATION, key));
    out();
    out('1. POST /api/transformer/text, the same request again (a cache hit), sequential');
    out(line('HTTP floor: GET /api/health/live', live));
    out(line('service: cache hit', hits));
    out(line('raw: the cache entry read in-process', rawRead.times));
    out(
      `cache hit p50 ${ms(pct(hits, 50))} (goal ≤ 10 ms: ${goal(pct(hits, 50) <= 10)}); service / raw read ` +
        `${ratio(pct(hits, 50), pct(rawRead.times, 50))}, service / HTTP floor ${ratio(pct(hits, 50), pct(live, 50))}; ` +
        `answers not a 200 hit: ${hitBad}; model calls ${llm.chatRequests().length} (1 for the first request)`,
    );

    // ---- 2. html-to-markdown of 1 KB, new input each time, sequential; the job path (wait_ms) beside it.
    const inputs = Array.from({ length: SEQ_N + 20 }, htmlKb);
    const direct: number[] = [];
    let directBad = 0;
    for (const [i, html] of inputs.entries()) {
      const r = await post(`${base}/api/transformer/html-to-markdown`, JSON.stringify({ html }));
      if (r.status !== 200 || r.cache !== 'miss') directBad++;
      if (i >= 20) direct.push(r.ms);
    }
    const viaJob: number[] = [];
    for (let i = 0; i < JOB_N; i++) {
      const r = await post(
        `${base}/api/transformer/html-to-markdown?wait_ms=60000`,
        JSON.stringify({ html: htmlKb() }),
      );
      if (r.status !== 200) directBad++;
      viaJob.push(r.ms);
    }
    let k = 0;
    const rawConvert = await raw(RAW_MS, 1, () => htmlToMarkdown(inputs[k++ % inputs.length]));
    k = 0;
    const rawWhole = await raw(RAW_MS, 1, () => runHtmlOperation('html-to-markdown', inputs[k++ % inputs.length]));
    out();
    out(
      `2. POST /api/transformer/html-to-markdown, ${Buffer.byteLength(inputs[0])} bytes, new input each time, sequential`,
    );
    out(line('service: in the API worker threads', direct));
    out(line('service: as a job (wait_ms=60000, as before)', viaJob));
    out(line('raw: htmlToMarkdown in-process', rawConvert.times));
    out(line('raw: runHtmlOperation (depth check + shape)', rawWhole.times));
    out(
      `1 KB p50 ${ms(pct(direct, 50))} (goal ≤ 25 ms: ${goal(pct(direct, 50) <= 25)}); service / raw converter ` +
        `${ratio(pct(direct, 50), pct(rawConvert.times, 50))}; job path / direct ${ratio(pct(viaJob, 50), pct(direct, 50))}; ` +
        `unexpected answers: ${directBad}`,
    );

    const pids = { api: svc.api.child.pid, worker: svc.worker.child.pid, 'bench (load generator)': process.pid };
    // ---- 3. 50 clients at once on 1 KB html-to-markdown, new input each time.
    const cpu3 = new CpuMeter(pids).start();
    const htmlLoad = await load(
      `${base}/api/transformer/html-to-markdown`,
      HTML_CLIENTS,
      LOAD_S,
      () => JSON.stringify({ html: htmlKb() }),
      (r) => r.status === 200,
    );
    const cpu3Line = cpu3.report('during the load');
    const rawOne = await raw(RAW_MS, 1, () => runHtmlOperation('html-to-markdown', htmlKb()));
    out();
    out(`3. ${HTML_CLIENTS} clients at once, ${LOAD_S} s, 1 KB html-to-markdown, new input each time`);
    out(
      `${line(`service: ${htmlLoad.rps.toFixed(0)} req/s`, htmlLoad.times)}  non-200: ${htmlLoad.bad}` +
        `${htmlLoad.firstBad ? ` (first: ${htmlLoad.firstBad})` : ''}`,
    );
    out(cpu3Line);
    out(`raw: runHtmlOperation on one thread in-process: ${rawOne.ops.toFixed(0)} ops/s`);
    out(
      `${htmlLoad.rps.toFixed(0)} req/s (goal ≥ 300: ${goal(htmlLoad.rps >= 300)}), p99 ${ms(pct(htmlLoad.times, 99))} ` +
        `(goal ≤ 200 ms: ${goal(pct(htmlLoad.times, 99) <= 200)}); service / raw one thread ${ratio(htmlLoad.rps, rawOne.ops)}`,
    );

    // ---- 4. 20 clients at once on the same cached translation.
    const cpu4 = new CpuMeter(pids).start();
    const hitLoad = await load(
      `${base}/api/transformer/text`,
      HIT_CLIENTS,
      LOAD_S,
      () => tBody,
      (r) => r.status === 200 && r.cache === 'hit',
    );
    const cpu4Line = cpu4.report('during the load');
    const rawReads = await raw(RAW_MS, HIT_CLIENTS, () => peekCache(store, TRANSFORM_CACHE_OPERATION, key));
    out();
    out(`4. ${HIT_CLIENTS} clients at once, ${LOAD_S} s, the same cached translation`);
    out(
      `${line(`service: ${hitLoad.rps.toFixed(0)} req/s`, hitLoad.times)}  not a 200 hit: ${hitLoad.bad}` +
        `${hitLoad.firstBad ? ` (first: ${hitLoad.firstBad})` : ''}`,
    );
    out(cpu4Line);
    out(
      `raw: ${HIT_CLIENTS} concurrent in-process reads of the entry: ${rawReads.ops.toFixed(0)} reads/s, p99 ${ms(pct(rawReads.times, 99))}`,
    );
    out(
      `${hitLoad.rps.toFixed(0)} req/s (goal ≥ 500: ${goal(hitLoad.rps >= 500)}), p99 ${ms(pct(hitLoad.times, 99))} ` +
        `(goal ≤ 50 ms: ${goal(pct(hitLoad.times, 99) <= 50)}); service / raw reads ${ratio(hitLoad.rps, rawReads.ops)}`,
    );

    // ---- 5. audio cache hit (issue 24): the same upload again, without a job, beside the job path's hit.
    const audio = await audioHits(base, store, tmp, agent, LLM_MODEL, line);
    out();
    for (const l of audio.lines) out(l);
    out(
      `audio hit p50 ${ms(pct(audio.direct, 50))}; job path / direct ${ratio(pct(audio.viaJob, 50), pct(audio.direct, 50))}`,
    );
    out();
    out(
      `model calls in all: ${llm.chatRequests().length}; load average at the end ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
    );
  } finally {
    agent.destroy();
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
