/**
 * The walk (issue 34, item 4): which of the project's files run code on the way of one request, file by file, from
 * `POST /api/pdf/process` (`extraction_method=combined`, a new document) to pdftotext, and from `POST /api/audio/process`
 * (a new recording) to the speech engine. Measured, not read off the imports: the real api and worker processes
 * run with the inspector on loopback, a first request of each kind warms them (modules load, threads start), then
 * V8's precise coverage is started in both, one request of the kind is sent, and every project file with a function
 * that ran is listed (module top-level code does not run again, node_modules and Node's own files are left out).
 * Workflow code runs in the worker's workflow sandbox (one bundled script, in a worker thread): its files are listed
 * apart, from the bundle's modules whose functions the workflow thread ran (reached through the worker inspector's
 * NodeWorker domain), or said to be missing; the first count of each request leaves them out.
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
  /** Calls `fn` with the params of every event `method` the process sends. */
  on(method: string, fn: (params: any) => void): void;
  close(): void;
}

/** A protocol session over message strings (a process's WebSocket, or a worker thread's session inside it). */
function session(post: (text: string) => void): {
  cdp: Omit<Cdp, 'close'>;
  receive(text: string): void;
} {
  let id = 0;
  const waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  const listeners = new Map<string, ((params: any) => void)[]>();
  return {
    cdp: {
      send: (method, params = {}) =>
        new Promise((resolve, reject) => {
          const n = ++id;
          waiting.set(n, { resolve, reject });
          post(JSON.stringify({ id: n, method, params }));
        }),
      on: (method, fn) => listeners.set(method, [...(listeners.get(method) ?? []), fn]),
    },
    receive: (text) => {
      const m = JSON.parse(text) as { id?: number; method?: string; params?: unknown; result?: unknown; error?: any };
      if (m.method) for (const fn of listeners.get(m.method) ?? []) fn(m.params);
      const w = m.id !== undefined ? waiting.get(m.id) : undefined;
      if (!w) return;
      waiting.delete(m.id!);
      if (m.error) w.reject(new Error(m.error.message));
      else w.resolve(m.result);
    },
  };
}

async function connect(url: string): Promise<Cdp> {
  const WS = (globalThis as { WebSocket?: new (u: string) => any }).WebSocket;
  if (!WS) throw new Error('run with node --experimental-websocket (Node 20) for the global WebSocket');
  const ws = new WS(url);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  const s = session((text) => ws.send(text));
  ws.onmessage = (ev: { data: string }) => s.receive(String(ev.data));
  return { ...s.cdp, close: () => ws.close() };
}

/** The workflow bundle's script name (`workflow-bundle-<hash>.js`, Temporal's bundler). */
const BUNDLE = /workflow-bundle-[^/]*\.js$/;

/**
 * The worker's workflow thread (Temporal runs the workflow bundle in a worker thread, out of the main isolate's
 * coverage): its session through the main inspector's NodeWorker domain, or null when no thread runs the bundle.
 */
async function workflowThread(main: Cdp): Promise<Omit<Cdp, 'close'> | null> {
  const threads = new Map<string, ReturnType<typeof session>>();
  main.on('NodeWorker.receivedMessageFromWorker', (p: { sessionId: string; message: string }) =>
    threads.get(p.sessionId)?.receive(p.message),
  );
  main.on('NodeWorker.attachedToWorker', (p: { sessionId: string }) => {
    const sessionId = p.sessionId;
    threads.set(
      sessionId,
      session((message) => void main.send('NodeWorker.sendMessageToWorker', { sessionId, message })),
    );
  });
  await main.send('NodeWorker.enable', { waitForDebuggerOnStart: false });
  await new Promise((r) => setTimeout(r, 200));
  for (const t of threads.values()) {
    // The thread that parsed the bundle (Debugger.enable reports every script it has parsed).
    let bundle = false;
    t.cdp.on('Debugger.scriptParsed', (p: { url: string }) => (bundle ||= BUNDLE.test(p.url)));
    await t.cdp.send('Debugger.enable');
    await new Promise((r) => setTimeout(r, 500));
    if (bundle) {
      await t.cdp.send('Profiler.enable');
      return t.cdp;
    }
    await t.cdp.send('Debugger.disable');
  }
  return null;
}

/**
 * The project's files in the workflow bundle with a function that ran, besides its module function: each function's
 * offset mapped to the bundle module around it (webpack's development bundle marks each module `/***\/ "./path"`).
 * A module's own function (its top-level code, the first function after its mark) and webpack's getters of its exports
 * run for every workflow run (each run loads the modules afresh) and are not counted, as top-level code is not in the
 * processes.
 */
async function ranWorkflowFiles(
  thread: Omit<Cdp, 'close'>,
  result: {
    scriptId: string;
    url: string;
    functions: { ranges: { startOffset: number; endOffset: number; count: number }[] }[];
  }[],
  sources: Map<string, string>,
): Promise<Set<string>> {
  const files = new Set<string>();
  for (const s of result) {
    if (!BUNDLE.test(s.url)) continue;
    let source = sources.get(s.scriptId);
    if (source === undefined) {
      source = ((await thread.send('Debugger.getScriptSource', { scriptId: s.scriptId })) as { scriptSource: string })
        .scriptSource;
      sources.set(s.scriptId, source);
    }
    const marks = [...source.matchAll(/^\/\*\*\*\/ "([^"]+)"$/gm)].map((m) => ({ at: m.index, file: m[1] }));
    const moduleOf = (offset: number) => {
      let i = -1;
      while (i + 1 < marks.length && marks[i + 1].at <= offset) i++;
      return i;
    };
    // Each module's first function (its module function), by the smallest start offset inside the module.
    const first = new Map<number, number>();
    for (const f of s.functions) {
      const at = f.ranges[0]?.startOffset;
      if (at === undefined) continue;
      const i = moduleOf(at);
      if (i >= 0 && at > marks[i].at && at < (first.get(i) ?? Infinity)) first.set(i, at);
    }
    for (const f of s.functions) {
      const r = f.ranges[0];
      if (!r || r.count === 0) continue;
      const i = moduleOf(r.startOffset);
      if (i < 0 || first.get(i) === r.startOffset) continue;
      // Webpack's getter of an export (`name: () => (/* binding */ name)`, or a re-export's), read where it is imported.
      if (/^\(\) => \(\/\* (binding|reexport[\w ]*) \*\/ [\w$.]+\)$/.test(source.slice(r.startOffset, r.endOffset)))
        continue;
      const file = marks[i].file;
      if (!file.includes('node_modules') && !file.startsWith('?')) files.add(path.normalize(file.replace(/^\.\//, '')));
    }
  }
  return files;
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
    const wf = await workflowThread(worker);
    const bundleSources = new Map<string, string>();

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
        for (const c of [api, worker, ...(wf ? [wf] : [])])
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
        let f: Set<string> | null = null;
        if (wf) {
          const r = (await wf.send('Profiler.takePreciseCoverage')) as { result: any[] };
          await wf.send('Profiler.stopPreciseCoverage');
          f = await ranWorkflowFiles(wf, r.result, bundleSources);
        }
        return { a, w, f, ms, value };
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
      // The workflow code the request ran, in the worker's workflow thread: not in the count above.
      if (!req.f) out('  workflow thread: not found (its files are missing from this list)');
      else {
        const f = [...req.f].filter((x) => !idle.f?.has(x)).sort();
        const more = f.filter((x) => !all.includes(x));
        out(
          `  + in the workflow thread: ${f.length} files, ${more.length} not listed above (${all.length + more.length} ` +
            `in all); not counting what ran as much without a request: ${[...(idle.f ?? [])].sort().join(', ') || 'nothing'}`,
        );
        for (const x of f) out(`  ${x}  (workflow)`);
      }
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
