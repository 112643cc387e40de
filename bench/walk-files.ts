/**
 * The walk (issue 34, item 4): which of the project's files run code on the way of one request, file by file, from
 * `POST /api/pdf/process` (`extraction_method=combined`, a new document) to pdftotext, and from `POST /api/audio/process`
 * (a new recording) to the speech engine. Measured, not read off the imports: the real api and worker processes
 * run with the inspector on loopback, a first request of each kind warms them (modules load, threads start), then
 * V8's precise coverage is started in both, one request of the kind is sent, and every project file with a function
 * that ran is listed (module top-level code does not run again, node_modules and Node's own files are left out).
 * Workflow code runs in the worker's workflow sandbox (one bundled script): its files are listed from the bundle's
 * source names that the workflow task ran, when the inspector sees them, else said to be missing.
 *
 *   node --experimental-websocket --import tsx bench/walk-files.ts
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startTemporalDev } from '../scripts/services.mjs';
import { startService, stopService } from './service';
import { cleanupRegistry, out, temporalBinary } from './support';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Cdp {
  send(method: string, params?: Record<string, unknown>): Promise<any>;
  close(): void;
}

async function connect(url: string): Promise<Cdp> {
  const WS = (globalThis as { WebSocket?: new (u: string) => any }).WebSocket;
  if (!WS) throw new Error('run with node --experimental-websocket (Node 20) for the global WebSocket');
  const ws = new WS(url);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  let id = 0;
  const waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  ws.onmessage = (ev: { data: string }) => {
    const m = JSON.parse(String(ev.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const w = m.id !== undefined ? waiting.get(m.id) : undefined;
    if (!w) return;
    waiting.delete(m.id!);
    if (m.error) w.reject(new Error(m.error.message));
    else w.resolve(m.result);
  };
  return {
    send: (method, params = {}) =>
      new Promise((resolve, reject) => {
        const n = ++id;
        waiting.set(n, { resolve, reject });
        ws.send(JSON.stringify({ id: n, method, params }));
      }),
    close: () => ws.close(),
  };
}

/** The inspector's WebSocket URL a process printed (`Debugger listening on ws://…`). */
async function inspectorUrl(output: () => string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const m = /Debugger listening on (ws:\/\/\S+)/.exec(output());
    if (m) return m[1];
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no inspector URL in the output');
}

/** Project files (relative) with a function that ran, from a precise coverage result. */
function ranFiles(result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[]) {
  const files = new Set<string>();
  for (const s of result) {
    const url = s.url.startsWith('file://') ? fileURLToPath(s.url) : s.url;
    if (!url.startsWith(ROOT) || url.includes('/node_modules/')) continue;
    if (s.functions.some((f) => f.ranges[0]?.count > 0)) files.add(path.relative(ROOT, url));
  }
  return files;
}

async function main(): Promise<void> {
  const cleanups = cleanupRegistry();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-walk-'));
  cleanups.add(async () => fs.rmSync(tmp, { recursive: true, force: true }));
  try {
    const temporal = await startTemporalDev({
      bin: temporalBinary(),
      dbFile: path.join(tmp, 'temporal.db'),
      port: await freePort(),
      uiPort: 0,
      headless: true,
    });
    cleanups.add(() => temporal.stop(10_000));
    const svc = await startService('walk', temporal.address, { NODE_OPTIONS: '--inspect=127.0.0.1:0' });
    cleanups.add(() => stopService(svc));
    const api = await connect(await inspectorUrl(() => svc.api.output()));
    const worker = await connect(await inspectorUrl(() => svc.worker.output()));
    cleanups.add(async () => {
      api.close();
      worker.close();
    });
    for (const c of [api, worker]) await c.send('Profiler.enable');

    const pdfBytes = fs.readFileSync(path.join(ROOT, 'samples', 'sample.pdf'));
    let n = 0;
    const pdf = async () => {
      // A new document each time (bytes after %%EOF change the sha256, not the reading): no cache hit.
      const bytes = Buffer.concat([pdfBytes, Buffer.from(`\n% walk ${process.pid} ${++n}\n`)]);
      const form = new FormData();
      form.append('file', new Blob([bytes], { type: 'application/pdf' }), 'walk.pdf');
      form.append('extraction_method', 'combined');
      const r = await fetch(`${svc.url}/api/pdf/process`, { method: 'POST', body: form });
      const text = await r.text();
      if (r.status !== 200) throw new Error(`pdf: ${r.status} ${text.slice(0, 300)}`);
      return r.headers.get('x-cache');
    };
    const audio = async () => {
      const wav = path.join(tmp, `tone-${++n}.wav`);
      execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', `sine=frequency=${200 + n * 37}:duration=2`, wav]);
      const form = new FormData();
      form.append('file', new Blob([fs.readFileSync(wav)], { type: 'audio/wav' }), 'walk.wav');
      const r = await fetch(`${svc.url}/api/audio/process`, { method: 'POST', body: form });
      const text = await r.text();
      if (r.status !== 200) throw new Error(`audio: ${r.status} ${text.slice(0, 300)}`);
      return r.headers.get('x-cache');
    };

    for (const [name, send] of [
      ['POST /api/pdf/process (combined) → pdftotext', pdf],
      ['POST /api/audio/process → the speech engine', audio],
    ] as const) {
      await send();
      const window = async (during: () => Promise<unknown>) => {
        for (const c of [api, worker])
          await c.send('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
        const t0 = performance.now();
        const value = await during();
        const ms = performance.now() - t0;
        const [a, w] = await Promise.all(
          [api, worker].map(async (c) => {
            const r = (await c.send('Profiler.takePreciseCoverage')) as { result: any[] };
            await c.send('Profiler.stopPreciseCoverage');
            return ranFiles(r.result);
          }),
        );
        return { a, w, ms, value };
      };
      const req = await window(send);
      // What runs without a request (timers: the parent watch, sweepers, health probes) over as long a window.
      const idle = await window(() => new Promise((r) => setTimeout(r, req.ms)));
      const background = new Set([...idle.a, ...idle.w]);
      // A file counts in a process when it ran there during the request and not in the idle window.
      const a = new Set([...req.a].filter((f) => !idle.a.has(f)));
      const w = new Set([...req.w].filter((f) => !idle.w.has(f)));
      const all = [...new Set([...a, ...w])].sort();
      out();
      out(
        `${name} (X-Cache ${String(req.value)}, ${req.ms.toFixed(0)} ms): ${all.length} files (api ${a.size}, ` +
          `worker ${w.size}), not counting what ran as much without a request: ${[...background].sort().join(', ') || 'nothing'}`,
      );
      for (const f of all)
        out(`  ${f}${a.has(f) && w.has(f) ? '  (api, worker)' : a.has(f) ? '  (api)' : '  (worker)'}`);
    }
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
