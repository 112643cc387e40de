/**
 * Helpers the benchmarks share: knobs from the environment, formatting, the provisioned Temporal CLI, per-process
 * memory and CPU from /proc (Linux), a machine-load meter, a peak-RSS sampler, the code state a run measured, and
 * workflow-history timestamps, and starting the real api/worker pair. Benchmarks only: nothing here is product code.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import { spawnService, type Proc } from '../test/support/servers/processes';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const EventType = proto.temporal.api.enums.v1.EventType;

/** An integer knob from the environment (0 allowed), else the fallback. */
export const envInt = (name: string, fallback: number) => {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v >= 0 && process.env[name] !== '' && process.env[name] !== undefined ? v : fallback;
};

export const out = (line = '') => process.stdout.write(`${line}\n`);
export const nowEpoch = () => performance.timeOrigin + performance.now();
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(1)} ms` : 'n/a');
export const secs = (x: number) => (Number.isFinite(x) ? `${(x / 1000).toFixed(2)} s` : 'n/a');
export const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;

/** The fastest of `runs` calls of `fn` (milliseconds), with that call's value. */
export async function bestOf<T>(runs: number, fn: () => Promise<T> | T): Promise<{ ms: number; value: T }> {
  let r = { ms: Infinity, value: undefined as T };
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const value = await fn();
    const ms = performance.now() - t0;
    if (ms < r.ms) r = { ms, value };
  }
  return r;
}

export function temporalBinary(): string {
  if (process.env.TEMPORAL_CLI_PATH) return process.env.TEMPORAL_CLI_PATH;
  const dir = path.join(process.env.DOCPROC_CACHE_DIR || path.join(os.homedir(), '.cache', 'docproc'), 'bin');
  const found = fs.existsSync(dir) ? fs.readdirSync(dir).find((f) => f.startsWith('temporal-')) : undefined;
  if (!found)
    throw new Error('The Temporal CLI is not provisioned: run `npm run bench` (it sets up the engines first).');
  return path.join(dir, found);
}

/** kB figures from /proc/<pid>/status (Linux); null elsewhere or once the process is gone. */
export function procMem(pid: number | undefined): { rss: number; hwm: number } | null {
  if (!pid) return null;
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? NaN);
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return null;
  }
}

/**
 * Resets the kernel's peak RSS (VmHWM) of a process to its current RSS (`5` → /proc/<pid>/clear_refs); false if not
 * allowed.
 */
export function resetPeak(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat; NaN when unreadable. */
export function procCpuSeconds(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime (fields 14, 15 of the line) and the waited-for children's cutime, cstime (16, 17):
    // the worker's tesseract and pdftoppm processes count as the worker's (and the raw engines as the bench's) once
    // they have exited.
    return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return NaN;
  }
}

/** Busy CPU seconds of the whole machine (all cores, everything but idle and iowait), from /proc/stat. */
export function machineBusySeconds(): number {
  try {
    const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = cpu;
    return (user + nice + system + irq + softirq + (steal ?? 0)) / 100;
  } catch {
    return NaN;
  }
}

/**
 * CPU used by named processes (with their exited children: the engines they ran) between `start()` and
 * `report()`, and by everything else on the machine: other load makes every figure slower, so the report says
 * how much there was.
 */
export class CpuMeter {
  private before = new Map<string, number>();
  private machineBefore = 0;
  private t0 = 0;
  constructor(private readonly pids: Record<string, number | undefined>) {}
  start(): this {
    this.t0 = performance.now();
    this.machineBefore = machineBusySeconds();
    this.before = new Map(Object.entries(this.pids).map(([k, pid]) => [k, procCpuSeconds(pid)]));
    return this;
  }
  report(label: string): string {
    const wall = (performance.now() - this.t0) / 1000;
    let ours = 0;
    const parts = Object.entries(this.pids).map(([k, pid]) => {
      const used = procCpuSeconds(pid) - (this.before.get(k) ?? NaN);
      ours += used;
      return `${k} ${used.toFixed(1)} s`;
    });
    const others = machineBusySeconds() - this.machineBefore - ours;
    const cores = os.availableParallelism();
    return `${label}: CPU over ${wall.toFixed(1)} s wall × ${cores} cores = ${(wall * cores).toFixed(0)} core-s: ${parts.join(', ')}; other processes ${Math.max(0, others).toFixed(1)} s${others > 0.1 * wall * cores ? '  <-- the machine was shared: figures are slower than on an idle machine' : ''}; load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`;
  }
}

/** Samples VmRSS of named processes every 250 ms and keeps each one's maximum since the last `resetPhase()`. */
export class RssSampler {
  private readonly max = new Map<string, number>();
  private readonly pids = new Map<string, number>();
  private readonly timer = setInterval(() => this.sample(), 250);
  private resetOk = true;
  constructor() {
    this.timer.unref();
  }
  watch(name: string, pid: number | undefined) {
    if (pid) this.pids.set(name, pid);
  }
  sample() {
    for (const [name, pid] of this.pids) {
      const m = procMem(pid);
      if (m && Number.isFinite(m.rss)) this.max.set(name, Math.max(this.max.get(name) ?? 0, m.rss));
    }
  }
  /** Starts a phase: the sampled maxima are cleared and the kernel's peak (VmHWM) is reset where allowed. */
  resetPhase() {
    this.max.clear();
    for (const pid of this.pids.values()) this.resetOk = resetPeak(pid) && this.resetOk;
    this.sample();
  }
  /** Peak figures of the phase: the kernel's high-water mark (VmHWM) and the largest sampled VmRSS. */
  report(name: string, label = ''): { text: string; hwmMb: number } {
    this.sample();
    const pid = this.pids.get(name);
    const m = procMem(pid);
    const mb = (kb: number | undefined) => (kb && Number.isFinite(kb) ? `${(kb / 1024).toFixed(0)} MB` : 'n/a');
    const text = `${label}${name.padEnd(7)} peak RSS (VmHWM) ${mb(m?.hwm).padStart(7)}   max sampled VmRSS ${mb(this.max.get(name)).padStart(7)}   RSS now ${mb(m?.rss).padStart(7)}   (pid ${pid}${this.resetOk ? '' : '; VmHWM could not be reset: it covers the whole process life'})`;
    return { text, hwmMb: (m?.hwm ?? NaN) / 1024 };
  }
  stop() {
    clearInterval(this.timer);
  }
}

/**
 * Which code ran: commit, uncommitted files in the service's folders, a hash of workflows/ + activities/ + providers/.
 */
export function codeState(): string {
  const root = path.resolve(HERE, '..');
  const git = (args: string[]) => spawnSync('git', ['-C', root, ...args], { encoding: 'utf8' }).stdout?.trim() ?? '';
  const head = git(['rev-parse', '--short', 'HEAD']) || 'no git';
  const dirty = git(['status', '--porcelain', '--', 'workflows', 'activities', 'api', 'worker', 'core', 'providers'])
    .split('\n')
    .filter(Boolean).length;
  const h = createHash('sha256');
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|mjs)$/.test(e.name)) h.update(path.relative(root, p)).update(fs.readFileSync(p));
    }
  };
  for (const d of ['workflows', 'activities', 'providers'])
    if (fs.existsSync(path.join(root, d))) walk(path.join(root, d));
  return `commit ${head}${dirty ? ` + ${dirty} uncommitted file(s) in the service's folders` : ''}; workflows/+activities/+providers/ fingerprint ${h.digest('hex').slice(0, 12)}`;
}

export function tsMs(t: proto.google.protobuf.ITimestamp | null | undefined): number {
  if (!t) return NaN;
  const s = t.seconds as unknown as { toNumber?: () => number } | number | null | undefined;
  const sec = typeof s === 'number' ? s : s && typeof s.toNumber === 'function' ? s.toNumber() : Number(s ?? 0);
  return sec * 1000 + (t.nanos ?? 0) / 1e6;
}

export const eventName = (t: number | null | undefined) => (EventType[t ?? 0] ?? String(t)).replace(/^EVENT_TYPE_/, '');

/** The real worker and api processes, as `npm start` runs them. */
interface ServicePair {
  url: string;
  worker: Proc;
  api: Proc;
  /** Spawn → healthy, in milliseconds. */
  startMs: number;
}

/**
 * Spawns `worker/main.ts` and `api/main.ts` with `env` (the api on `port`) and resolves once `GET /api/health`
 * says `ok`, within 120 s. A process that exits meanwhile fails the start with the end of its output; on any
 * failure both processes are killed.
 */
export async function spawnServicePair(env: Record<string, string | undefined>, port: number): Promise<ServicePair> {
  const worker = spawnService('worker', env);
  const api = spawnService('api', { ...env, PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  try {
    return await waitHealthy(url, worker, api, t0);
  } catch (e) {
    worker.child.kill('SIGKILL');
    api.child.kill('SIGKILL');
    throw e;
  }
}

async function waitHealthy(url: string, worker: Proc, api: Proc, t0: number): Promise<ServicePair> {
  for (let last = ''; ; await sleep(250)) {
    for (const [name, p] of [
      ['worker', worker],
      ['api', api],
    ] as const) {
      if (p.child.exitCode !== null || p.child.signalCode !== null) {
        throw new Error(
          `${name} exited during start (${p.child.exitCode ?? p.child.signalCode}):\n${p.output().slice(-3000)}`,
        );
      }
    }
    try {
      const res = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(5000) });
      const body = (await res.json()) as { status?: string };
      if (res.status === 200 && body.status === 'ok') return { url, worker, api, startMs: performance.now() - t0 };
      last = `${res.status} ${JSON.stringify(body).slice(0, 300)}`;
    } catch (e) {
      last = String(e);
    }
    if (performance.now() - t0 > 120_000)
      throw new Error(`the service did not become healthy in 120 s (last answer: ${last})`);
  }
}

/**
 * A benchmark's cleanups: `run` calls them once, the last added first (errors printed, not thrown), also on SIGINT
 * or SIGTERM, after which the process exits with 130.
 */
export function cleanupRegistry(): { add(fn: () => Promise<unknown>): void; run(): Promise<void> } {
  const cleanups: (() => Promise<unknown>)[] = [];
  let running: Promise<void> | null = null;
  const run = () =>
    (running ??= (async () => {
      for (const c of cleanups.reverse()) await c().catch((e: unknown) => out(`cleanup: ${String(e)}`));
    })());
  const onSignal = (sig: string) => {
    out(`received ${sig}: stopping`);
    void run().finally(() => process.exit(130));
  };
  process.once('SIGINT', () => onSignal('SIGINT'));
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  return { add: (fn) => void cleanups.push(fn), run };
}
