/**
 * The first seconds after `npm start` prints ready (issue 38: ready means warm), each figure beside its limit in the
 * same run, printed as ratios. Asserts nothing.
 *
 *   npx tsx bench/cold-start.bench.ts      (or `npm run bench -- cold-start`, which provisions the engines first)
 *
 * In order, all on 127.0.0.1:
 * 1. the bare server (bench/bare-html-server.ts: node:http on one thread running the service's HTML-to-Markdown
 *    operation) under the load client of bench/load-client.ts: BENCH_COLD_CLIENTS (50) clients posting 1 KB of new
 *    HTML each time for BENCH_COLD_LOAD_S (10) seconds;
 * 2. a fresh `node scripts/start.mjs` (the whole stack: Temporal dev server, the local model server, worker, API) on
 *    a new DATA_DIR and free ports, timed from the spawn to its ready lines;
 * 3. at once, the same load on `POST /api/transformer/html-to-markdown` (the first seconds after ready), then the
 *    first transcription of a spoken recording (espeak-ng, about 10 s) through `POST /api/audio/process`, then a
 *    second one (`useCache=false`), then the load again (warm);
 * 4. faster-whisper alone on the same file (bench/raw-whisper.ts: the engine's model, compute type, decoding, threads).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../core/config/config';
import { localSpeechOptions } from '../providers/speech/local';
import { freePort, stopChild } from '../scripts/services.mjs';
import { ROOT } from '../test/support/servers/processes';
import { SENTENCES, speak } from '../test/support/media/speech-samples';
import { agent, htmlKb, load, pct } from './load-client';
import { rawEngine } from './raw-whisper';
import { cleanupRegistry, codeState, envInt, ms, out, ratio, secs } from './support';

const LOAD_S = envInt('BENCH_COLD_LOAD_S', 10);
const CLIENTS = envInt('BENCH_COLD_CLIENTS', 50);

/** Spawns `args` with node, resolving once a line of its output matches `ready` (rejects if it exits first). */
function spawnUntil(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  timeoutMs: number,
): Promise<{ child: ChildProcess; ms: number; match: RegExpMatchArray; log: () => string }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`not ready within ${timeoutMs} ms:\n${log.slice(-3000)}`)),
      timeoutMs,
    );
    const onData = (b: Buffer) => {
      log += b.toString('utf8');
      const m = ready.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve({ child, ms: performance.now() - t0, match: m, log: () => log });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`exited (${signal ?? code}) before ready:\n${log.slice(-3000)}`));
    });
  });
}

async function transcribe(
  base: string,
  file: string,
  fields: Record<string, string>,
): Promise<{ ms: number; text: string }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([new Uint8Array(fs.readFileSync(file))], { type: 'audio/wav' }), path.basename(file));
  const t0 = performance.now();
  const res = await fetch(`${base}/api/audio/process`, { method: 'POST', body: form });
  const body = (await res.json()) as { data?: { original_text?: string }; error?: unknown };
  if (res.status !== 200) throw new Error(`audio answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
  return { ms: performance.now() - t0, text: body.data?.original_text ?? '' };
}

const loadLine = (label: string, r: { rps: number; times: number[]; bad: number }) =>
  `${label.padEnd(44)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${ms(pct(r.times, 50)).padStart(9)}  p99 ${ms(pct(r.times, 99)).padStart(9)}  non-200 ${r.bad}`;

async function main(): Promise<void> {
  const cleanups = cleanupRegistry();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-bench-cold-'));
  cleanups.add(async () => fs.rmSync(tmp, { recursive: true, force: true }));
  try {
    out(`# Cold start — ${new Date().toISOString()}; ${os.availableParallelism()} cores; code: ${codeState()}`);
    out(
      `load average at start: ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    );
    const speech = await speak(`${SENTENCES.en} ${SENTENCES.en}`, 'en', tmp, 'first');
    const seconds = fs.statSync(speech).size / 32_000;
    const body = () => JSON.stringify({ html: htmlKb() });
    const ok = (r: { status: number }) => r.status === 200;

    // 1. The bare server.
    const barePort = await freePort();
    const bare = await spawnUntil(
      ['--import', 'tsx', 'bench/bare-html-server.ts', String(barePort)],
      process.env,
      /listening/,
      60_000,
    );
    cleanups.add(() => stopChild(bare.child, 5000));
    const bareLoad = await load(`http://127.0.0.1:${barePort}/`, CLIENTS, LOAD_S, body, ok);
    await stopChild(bare.child, 5000);

    // 2. A fresh stack.
    const [port, grpc, ui, llm] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATA_DIR: path.join(tmp, 'data'),
      PORT: String(port),
      TEMPORAL_DEV_PORT: String(grpc),
      TEMPORAL_UI_PORT: String(ui),
      LLM_LOCAL_PORT: String(llm),
      SERVICE_API_KEY: '',
      LOG_LEVEL: 'warn',
    };
    delete env.TEMPORAL_ADDRESS;
    const stack = await spawnUntil(['scripts/start.mjs'], env, /Ctrl-C stops everything/, 600_000);
    cleanups.add(() => stopChild(stack.child, 30_000));
    const base = `http://127.0.0.1:${port}`;

    // 3. Right after ready, then warm.
    const cold = await load(`${base}/api/transformer/html-to-markdown`, CLIENTS, LOAD_S, body, ok);
    const first = await transcribe(base, speech, { source_language: 'en', target_language: 'en' });
    const second = await transcribe(base, speech, { source_language: 'en', target_language: 'en', useCache: 'false' });
    const warm = await load(`${base}/api/transformer/html-to-markdown`, CLIENTS, LOAD_S, body, ok);
    await stopChild(stack.child, 30_000);

    // 4. faster-whisper alone.
    const opts = localSpeechOptions(loadConfig({ ...process.env, MEDIA_CONCURRENCY: '', SPEECH_THREADS: '' }));
    const raw = await rawEngine(opts.python, opts.modelDir, opts.threads, speech);

    out();
    out(`time to ready (spawn of scripts/start.mjs to its ready lines): ${secs(stack.ms)}`);
    out();
    out(`${CLIENTS} clients, ${LOAD_S} s, 1 KB html-to-markdown, new input each time:`);
    out(loadLine('bare server (one thread, the same operation)', bareLoad));
    out(`${loadLine('service: the first seconds after ready', cold)}  ${ratio(cold.rps, bareLoad.rps)} of bare`);
    out(`${loadLine('service: warm (after the transcriptions)', warm)}  ${ratio(warm.rps, bareLoad.rps)} of bare`);
    out();
    out(`transcription of a ${seconds.toFixed(1)} s recording (espeak-ng), POST /api/audio/process:`);
    out(`  first after ready   ${secs(first.ms).padStart(8)}  ${ratio(first.ms, raw.transcribeMs)} raw faster-whisper`);
    out(
      `  second              ${secs(second.ms).padStart(8)}  ${ratio(second.ms, raw.transcribeMs)} raw faster-whisper`,
    );
    out(
      `  raw faster-whisper  ${secs(raw.transcribeMs).padStart(8)}  (its model load ${secs(raw.loadMs)} apart; ${opts.threads} threads)`,
    );
    if (!first.text.trim() || !second.text.trim()) out('  WARNING: an empty transcript');
    out(
      `load average at the end: ${os
        .loadavg()
        .map((x) => x.toFixed(2))
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
