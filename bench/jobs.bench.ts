/**
 * Job latency and throughput of the service against a raw Temporal baseline, on one Temporal dev server (SQLite
 * file DB in WAL mode) for the whole run. Prints readable lines to stdout; asserts nothing about timing.
 *
 *   npx tsx bench/jobs.bench.ts        (or `npm run bench`, which provisions the engines first)
 *
 * Knobs (env): BENCH_RAW_N (200), BENCH_RAW_PARALLEL (200), BENCH_SERVICE_N (100), BENCH_BATCH_JOBS (1000),
 * BENCH_SECOND_WINDOW (200; 0 skips the second api/worker pair that runs the batch with that BATCH_WINDOW).
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { freePort, startTemporalDev, stopChild } from '../scripts/services.mjs';
import { mapPool } from '../core/runtime/pool';
import type { Proc } from '../test/support/servers/processes';
import {
  CpuMeter,
  RssSampler,
  cleanupRegistry,
  codeState,
  envInt,
  eventName,
  ms,
  nowEpoch,
  out,
  procMem,
  ratio,
  sleep,
  spawnServicePair,
  temporalBinary,
  tsMs,
} from './support';

const HERE = path.dirname(fileURLToPath(import.meta.url));
type History = proto.temporal.api.history.v1.IHistory;

const RAW_WARMUP = 20;
const RAW_N = envInt('BENCH_RAW_N', 200);
const RAW_PARALLEL = envInt('BENCH_RAW_PARALLEL', 200);
const SERVICE_WARMUP = 10;
const SERVICE_N = envInt('BENCH_SERVICE_N', 100);
const BATCH_JOBS = envInt('BENCH_BATCH_JOBS', 1000);
const SECOND_WINDOW = envInt('BENCH_SECOND_WINDOW', 200);
/** The second batch pair runs only when the run so far took less than this (keeps the total near 5 minutes). */
const SECOND_PAIR_BUDGET_MS = 170_000;

// ---------------------------------------------------------------------------------------------------------------
// Small statistics and formatting helpers

interface Summary {
  n: number;
  p50: number;
  p95: number;
  min: number;
  max: number;
  mean: number;
}

function summarize(xs: number[]): Summary {
  const s = [...xs].filter(Number.isFinite).sort((a, b) => a - b);
  const at = (p: number) =>
    s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] : NaN;
  return {
    n: s.length,
    p50: at(50),
    p95: at(95),
    min: s[0] ?? NaN,
    max: s[s.length - 1] ?? NaN,
    mean: s.reduce((a, b) => a + b, 0) / (s.length || 1),
  };
}

const line = (label: string, s: Summary) =>
  `${label.padEnd(44)} p50 ${ms(s.p50).padStart(9)}  p95 ${ms(s.p95).padStart(9)}  min ${ms(s.min).padStart(9)}  max ${ms(s.max).padStart(9)}  (n=${s.n})`;

// ---------------------------------------------------------------------------------------------------------------
// Engines and processes

/** CPU seconds per thread of a process, keyed by thread id, with the thread's name. */
function threadCpu(pid: number | undefined): Map<string, { name: string; cpu: number }> {
  const res = new Map<string, { name: string; cpu: number }>();
  if (!pid) return res;
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        res.set(tid, { name, cpu: (Number(f[11]) + Number(f[12])) / 100 });
      } catch {
        /* the thread ended */
      }
    }
  } catch {
    /* the process ended */
  }
  return res;
}

/**
 * The busiest threads of a process between two snapshots: shows whether one thread (the workflow thread) is saturated.
 */
function threadReport(
  pid: number | undefined,
  before: Map<string, { name: string; cpu: number }>,
  wallS: number,
  top = 5,
): string {
  const after = threadCpu(pid);
  const rows = [...after].map(([tid, a]) => ({ tid, name: a.name, used: a.cpu - (before.get(tid)?.cpu ?? 0) }));
  rows.sort((x, y) => y.used - x.used);
  return rows
    .slice(0, top)
    .map((r) => `${r.name}[${r.tid}] ${r.used.toFixed(1)} s (${((r.used / wallS) * 100).toFixed(0)} %)`)
    .join(', ');
}

interface Service {
  url: string;
  worker: Proc;
  api: Proc;
  dataDir: string;
  prefix: string;
}

async function startService(address: string, label: string, extraEnv: Record<string, string> = {}): Promise<Service> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `docproc-bench-${label}-`));
  const prefix = `bench-${label}-${randomUUID().slice(0, 8)}`;
  const port = await freePort();
  const common = {
    TEMPORAL_ADDRESS: address,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    TASK_QUEUE_PREFIX: prefix,
    HOST: '127.0.0.1',
    SERVICE_API_KEY: '',
    DOCPROC_PARENT_PID: String(process.pid),
    ...extraEnv,
  };
  out(`service ${label}: code: ${codeState()}`);
  const { url, worker, api, startMs } = await spawnServicePair(common, port);
  out(`service ${label}: api ${url}, queues ${prefix}-io/-media, healthy ${(startMs / 1000).toFixed(1)} s after spawn`);
  return { url, worker, api, dataDir, prefix };
}

async function stopService(s: Service, label: string): Promise<void> {
  for (const [name, p] of [
    ['api', s.api],
    ['worker', s.worker],
  ] as const) {
    const t0 = performance.now();
    await stopChild(p.child, 15_000);
    out(
      `service ${label}: ${name} stopped with ${p.child.exitCode ?? p.child.signalCode} after SIGTERM in ${(performance.now() - t0).toFixed(0)} ms`,
    );
    const warn = p
      .output()
      .split('\n')
      .filter((l) => /"level":(40|50|60)/.test(l) && !/No SERVICE_API_KEY/.test(l));
    if (warn.length)
      out(`service ${label}: ${name} logged ${warn.length} warning/error line(s); first: ${warn[0].slice(0, 300)}`);
  }
  fs.rmSync(s.dataDir, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

async function call(base: string, method: string, p: string, body?: unknown): Promise<Answer> {
  const res = await fetch(base + p, {
    method,
    headers: body !== undefined ? { 'content-type': 'application/json' } : {},
    body: body !== undefined ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text), headers: res.headers };
  } catch {
    return { status: res.status, body: text, headers: res.headers };
  }
}

/** Makes every input of this run unique: the service caches transformer results by input. */
const NONCE = randomUUID().slice(0, 8);
const trivialHtml = (tag: string, i: number) => `<p>${tag} ${i} ${NONCE}</p>`;
const trivialJob = (tag: string, i: number) => ({
  job_type: 'transformer',
  parameters: { operation: 'html-to-markdown', html: trivialHtml(tag, i) },
});

// ---------------------------------------------------------------------------------------------------------------
// Workflow histories

interface HistoryProfile {
  events: number;
  byType: Map<string, number>;
  workflowTasks: number;
  /** Sum over workflow tasks of started → completed: the time the worker held the workflow. */
  taskBusy: number;
  /** Each workflow task's started → completed, and scheduled → started. */
  taskDurations: number[];
  taskWaits: number[];
  /** Workflow tasks after the first that went to the normal queue, not the worker's sticky one (a full replay). */
  nonStickyRepeats: number;
  started: number;
  firstTaskStarted: number;
  closed: number;
  timeline: { name: string; at: number; detail?: string }[];
}

function profileHistory(h: History): HistoryProfile {
  const events = h.events ?? [];
  const byType = new Map<string, number>();
  const timeline: HistoryProfile['timeline'] = [];
  let started = NaN;
  let firstTaskStarted = NaN;
  let closed = NaN;
  let taskBusy = 0;
  let taskStartedAt = NaN;
  let taskScheduledAt = NaN;
  let scheduledCount = 0;
  let nonStickyRepeats = 0;
  const taskDurations: number[] = [];
  const taskWaits: number[] = [];
  for (const e of events) {
    const name = eventName(e.eventType);
    byType.set(name, (byType.get(name) ?? 0) + 1);
    const at = tsMs(e.eventTime);
    let detail: string | undefined;
    if (e.markerRecordedEventAttributes) {
      const details = e.markerRecordedEventAttributes.details ?? {};
      const type = details.type?.payloads?.[0]?.data
        ? Buffer.from(details.type.payloads[0].data).toString()
        : undefined;
      detail = [e.markerRecordedEventAttributes.markerName, type].filter(Boolean).join(' ');
    }
    if (e.workflowExecutionUpdateAcceptedEventAttributes)
      detail = e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.input?.name ?? undefined;
    if (e.activityTaskScheduledEventAttributes)
      detail = e.activityTaskScheduledEventAttributes.activityType?.name ?? undefined;
    timeline.push({ name, at, detail });
    if (name === 'WORKFLOW_EXECUTION_STARTED') started = at;
    if (name === 'WORKFLOW_TASK_STARTED' && Number.isNaN(firstTaskStarted)) firstTaskStarted = at;
    if (name === 'WORKFLOW_TASK_SCHEDULED') {
      taskScheduledAt = at;
      const kind = e.workflowTaskScheduledEventAttributes?.taskQueue?.kind;
      if (scheduledCount++ > 0 && kind !== proto.temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_STICKY)
        nonStickyRepeats++;
    }
    if (name === 'WORKFLOW_TASK_STARTED') {
      taskStartedAt = at;
      if (Number.isFinite(taskScheduledAt)) taskWaits.push(at - taskScheduledAt);
    }
    if (/^WORKFLOW_TASK_(COMPLETED|FAILED|TIMED_OUT)$/.test(name) && Number.isFinite(taskStartedAt)) {
      taskBusy += at - taskStartedAt;
      taskDurations.push(at - taskStartedAt);
      taskStartedAt = NaN;
    }
    if (
      name.startsWith('WORKFLOW_EXECUTION_') &&
      /COMPLETED|FAILED|TERMINATED|CANCELED|TIMED_OUT|CONTINUED_AS_NEW/.test(name) &&
      !name.includes('UPDATE')
    )
      closed = at;
  }
  return {
    events: events.length,
    byType,
    workflowTasks: byType.get('WORKFLOW_TASK_COMPLETED') ?? 0,
    taskBusy,
    taskDurations,
    taskWaits,
    nonStickyRepeats,
    started,
    firstTaskStarted,
    closed,
    timeline,
  };
}

function printEventCounts(label: string, profiles: HistoryProfile[]): void {
  const names = new Set<string>();
  for (const p of profiles) for (const k of p.byType.keys()) names.add(k);
  const ev = summarize(profiles.map((p) => p.events));
  const wft = summarize(profiles.map((p) => p.workflowTasks));
  out(
    `${label}: ${ev.p50} events (min ${ev.min}, max ${ev.max}), ${wft.p50} workflow tasks (min ${wft.min}, max ${wft.max}) over ${profiles.length} histories; median count by type:`,
  );
  for (const n of [...names].sort()) {
    const s = summarize(profiles.map((p) => p.byType.get(n) ?? 0));
    out(`    ${n.padEnd(48)} ${String(s.p50).padStart(3)}${s.min !== s.max ? `  (${s.min}–${s.max})` : ''}`);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Phases

interface RawResult {
  seq: Summary;
  parallelWallMs: number;
  parallelLatency: Summary;
  perSecond: number;
  profiles: HistoryProfile[];
  serverSide: Summary;
}

async function rawBaseline(address: string, client: Client, temporalPid: number | undefined): Promise<RawResult> {
  out('');
  out('== RAW baseline: plain SDK Worker (empty workflow) + Client.workflow.execute, in this process ==');
  const t0 = performance.now();
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: path.join(HERE, 'workflows', 'empty.workflow.ts'),
    logger: new DefaultLogger('WARN'),
  });
  out(`bundled bench/workflows/empty.workflow.ts in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const connection = await NativeConnection.connect({ address });
  const taskQueue = `bench-raw-${randomUUID().slice(0, 8)}`;
  const worker = await Worker.create({ connection, taskQueue, workflowBundle });
  const running = worker.run();
  try {
    const once = async () => {
      const workflowId = `bench-raw-${randomUUID()}`;
      const t = performance.now();
      await client.workflow.execute('emptyWorkflow', { taskQueue, workflowId });
      return { workflowId, ms: performance.now() - t };
    };
    for (let i = 0; i < RAW_WARMUP; i++) await once();
    const seq: { workflowId: string; ms: number }[] = [];
    for (let i = 0; i < RAW_N; i++) seq.push(await once());
    const seqSummary = summarize(seq.map((r) => r.ms));
    out(line(`raw sequential execute (after ${RAW_WARMUP} warm-up)`, seqSummary));

    const cpu = new CpuMeter({ temporal: temporalPid, 'bench (client + worker)': process.pid }).start();
    const tp = performance.now();
    const par = await Promise.all(Array.from({ length: RAW_PARALLEL }, () => once()));
    const parallelWallMs = performance.now() - tp;
    const parallelLatency = summarize(par.map((r) => r.ms));
    const perSecond = RAW_PARALLEL / (parallelWallMs / 1000);
    out(line(`raw ${RAW_PARALLEL} in parallel, each`, parallelLatency));
    out(
      `raw ${RAW_PARALLEL} in parallel: wall ${(parallelWallMs / 1000).toFixed(2)} s → ${perSecond.toFixed(1)} workflows/s`,
    );
    out(cpu.report(`raw ${RAW_PARALLEL} in parallel`));

    const sample = seq.slice(-20);
    const profiles = await mapPool(sample, 8, async (r) =>
      profileHistory(await client.workflow.getHandle(r.workflowId).fetchHistory()),
    );
    const serverSide = summarize(profiles.map((p) => p.closed - p.started));
    out(line('raw server-side started → closed (history)', serverSide));
    printEventCounts('raw history', profiles);
    return { seq: seqSummary, parallelWallMs, parallelLatency, perSecond, profiles, serverSide };
  } finally {
    worker.shutdown();
    await running.catch(() => undefined);
    await connection.close();
  }
}

interface JobRun {
  jobId: string;
  sentAt: number;
  doneAt: number;
  total: number;
  post: number;
  gets: number;
  getMs: number[];
}

async function runJobAsync(url: string, i: number): Promise<JobRun> {
  const sentAt = nowEpoch();
  const t0 = performance.now();
  const r = await call(url, 'POST', '/api/jobs/', trivialJob('job', i));
  if (r.status !== 200)
    throw new Error(`POST /api/jobs/ answered ${r.status}: ${JSON.stringify(r.body).slice(0, 500)}`);
  const post = performance.now() - t0;
  const jobId = r.body.data.job_id as string;
  const getMs: number[] = [];
  for (;;) {
    const tg = performance.now();
    const g = await call(url, 'GET', `/api/jobs/${jobId}?wait=10`);
    getMs.push(performance.now() - tg);
    if (g.status !== 200)
      throw new Error(`GET /api/jobs/${jobId} answered ${g.status}: ${JSON.stringify(g.body).slice(0, 500)}`);
    const st = g.body.data.status;
    if (st === 'completed') break;
    if (st === 'failed') throw new Error(`job ${jobId} failed: ${JSON.stringify(g.body.data.error)}`);
    if (performance.now() - t0 > 60_000) throw new Error(`job ${jobId} still ${st} after 60 s`);
  }
  const total = performance.now() - t0;
  return { jobId, sentAt, doneAt: nowEpoch(), total, post, gets: getMs.length, getMs };
}

async function runJobSync(url: string, tag: string, i: number): Promise<{ ms: number; cache: string }> {
  const t0 = performance.now();
  const r = await call(url, 'POST', '/api/transformer/html-to-markdown', { html: trivialHtml(tag, i) });
  const dt = performance.now() - t0;
  if (r.status !== 200)
    throw new Error(
      `POST /api/transformer/html-to-markdown answered ${r.status}: ${JSON.stringify(r.body).slice(0, 500)}`,
    );
  if (r.body.data.markdown !== `${tag} ${i} ${NONCE}`)
    throw new Error(`unexpected markdown: ${JSON.stringify(r.body.data.markdown)}`);
  return { ms: dt, cache: r.headers.get('x-cache') ?? 'no X-Cache header' };
}

const tally = (xs: string[]) =>
  Object.entries(xs.reduce<Record<string, number>>((a, x) => ((a[x] = (a[x] ?? 0) + 1), a), {}))
    .map(([k, v]) => `${k} ×${v}`)
    .join(', ');

interface ServiceResult {
  async: Summary;
  post: Summary;
  sync: Summary;
  syncCached: Summary;
}

async function serviceLatency(svc: Service, client: Client, raw: RawResult, cpu: CpuMeter): Promise<ServiceResult> {
  out('');
  out(
    '== SERVICE: real api + worker processes; trivial transformer job (html-to-markdown of one short paragraph, ' +
      'new in each request) ==',
  );
  for (let i = 0; i < SERVICE_WARMUP; i++) await runJobAsync(svc.url, i);
  cpu.start();
  const runs: JobRun[] = [];
  for (let i = 0; i < SERVICE_N; i++) runs.push(await runJobAsync(svc.url, i));
  const asyncS = summarize(runs.map((r) => r.total));
  const postS = summarize(runs.map((r) => r.post));
  out(line(`POST /api/jobs/ → GET ?wait=10 sees completed`, asyncS));
  out(line('  of which POST /api/jobs/ alone', postS));
  const gets = summarize(runs.map((r) => r.gets));
  out(`  GET ?wait=10 round trips per job: p50 ${gets.p50}, min ${gets.min}, max ${gets.max}`);
  out(line('  each GET ?wait=10', summarize(runs.flatMap((r) => r.getMs))));
  out(cpu.report('async jobs'));

  for (let i = 0; i < SERVICE_WARMUP; i++) await runJobSync(svc.url, 'sync-warm-up', i);
  const syncRuns: { ms: number; cache: string }[] = [];
  for (let i = 0; i < SERVICE_N; i++) syncRuns.push(await runJobSync(svc.url, 'sync', i));
  const syncS = summarize(syncRuns.map((r) => r.ms));
  out(line('POST /api/transformer/html-to-markdown (sync)', syncS));
  out(`  each with new HTML (runs the job); X-Cache: ${tally(syncRuns.map((r) => r.cache))}`);
  const hits: { ms: number; cache: string }[] = [];
  for (let i = 0; i < SERVICE_N; i++) hits.push(await runJobSync(svc.url, 'sync', i));
  const syncCached = summarize(hits.map((r) => r.ms));
  out(line('  the same requests again (result cache)', syncCached));
  out(`  X-Cache: ${tally(hits.map((r) => r.cache))}`);

  // Where the time goes: each measured job's history, against the client's clock (same machine).
  out('');
  out('-- profile of the measured async jobs (from their workflow histories) --');
  const profiled = await mapPool(runs, 8, async (r) => ({
    r,
    p: profileHistory(await client.workflow.getHandle(r.jobId).fetchHistory()),
  }));
  const ps = profiled.map((x) => x.p);
  out(line('POST sent → WorkflowExecutionStarted', summarize(profiled.map(({ r, p }) => p.started - r.sentAt))));
  out(line('WorkflowExecutionStarted → 1st task started', summarize(ps.map((p) => p.firstTaskStarted - p.started))));
  out(line('WorkflowExecutionStarted → workflow closed', summarize(ps.map((p) => p.closed - p.started))));
  out(line('POST sent → workflow closed', summarize(profiled.map(({ r, p }) => p.closed - r.sentAt))));
  out(line('workflow closed → client saw completed', summarize(profiled.map(({ r, p }) => r.doneAt - p.closed))));
  out(line('raw: WorkflowExecutionStarted → closed', raw.serverSide));
  for (const wft of [...new Set(ps.map((p) => p.workflowTasks))].sort()) {
    const these = profiled.filter(({ p }) => p.workflowTasks === wft);
    out(line(`  jobs whose history has ${wft} workflow task(s)`, summarize(these.map(({ r }) => r.total))));
  }
  out(line('worker busy in workflow tasks, per job', summarize(ps.map((p) => p.taskBusy))));
  out(line('raw: worker busy in workflow tasks, per run', summarize(raw.profiles.map((p) => p.taskBusy))));
  out(line('each job workflow task, started → completed', summarize(ps.flatMap((p) => p.taskDurations))));
  out(line('each job workflow task, scheduled → started', summarize(ps.flatMap((p) => p.taskWaits))));
  out(line('raw workflow task, scheduled → started', summarize(raw.profiles.flatMap((p) => p.taskWaits))));
  printEventCounts('service job history', ps);
  printEventCounts('raw history (for comparison)', raw.profiles);
  const median = [...profiled].sort((a, b) => a.r.total - b.r.total)[Math.floor(profiled.length / 2)];
  if (median) {
    out(
      `timeline of the median job ${median.r.jobId} (total ${median.r.total.toFixed(1)} ms; offsets from POST sent):`,
    );
    for (const ev of median.p.timeline)
      out(
        `    +${(ev.at - median.r.sentAt).toFixed(1).padStart(7)} ms  ${ev.name}${ev.detail ? ` (${ev.detail})` : ''}`,
      );
    out(
      `    +${(median.r.doneAt - median.r.sentAt).toFixed(1).padStart(7)} ms  client saw completed after ${median.r.gets} GET(s)`,
    );
  }
  return { async: asyncS, post: postS, sync: syncS, syncCached };
}

interface BatchResult {
  wallMs: number;
  postMs: number;
  perSecond: number;
  exact: boolean;
  detail: string;
}

async function batchRun(svc: Service, label: string, client: Client, cpu: CpuMeter): Promise<BatchResult> {
  const jobs = Array.from({ length: BATCH_JOBS }, (_, i) => trivialJob(`batch-${label}`, i));
  cpu.start();
  const threadsBefore = threadCpu(svc.worker.child.pid);
  const t0 = performance.now();
  const r = await call(svc.url, 'POST', '/api/jobs/batch', { batch_name: `bench-${label}`, jobs });
  const postMs = performance.now() - t0;
  if (r.status !== 200)
    throw new Error(`POST /api/jobs/batch answered ${r.status}: ${JSON.stringify(r.body).slice(0, 500)}`);
  const batchId = r.body.data.batch_id as string;
  out(
    `batch ${label}: POST /api/jobs/batch (${BATCH_JOBS} jobs) answered in ${postMs.toFixed(0)} ms; batch ${batchId}`,
  );
  let data: any;
  let lastReport = performance.now();
  for (;;) {
    await sleep(250);
    const g = await call(svc.url, 'GET', `/api/jobs/batch/${batchId}`);
    if (g.status !== 200)
      throw new Error(`GET /api/jobs/batch/${batchId} answered ${g.status}: ${JSON.stringify(g.body).slice(0, 500)}`);
    data = g.body.data;
    if (data.status === 'completed') break;
    if (performance.now() - lastReport > 10_000) {
      lastReport = performance.now();
      out(
        `batch ${label}: ${data.completed_count} completed, ${data.failed_count} failed after ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
    }
    if (performance.now() - t0 > 240_000)
      throw new Error(`batch ${batchId} not completed after 240 s: ${data.completed_count} completed`);
  }
  const wallMs = performance.now() - t0;
  const jobsArr = (data.jobs ?? []) as { status: string }[];
  const allCompleted = jobsArr.length === BATCH_JOBS && jobsArr.every((j) => j.status === 'completed');
  const exact =
    data.completed_count === BATCH_JOBS && data.failed_count === 0 && data.job_count === BATCH_JOBS && allCompleted;
  const detail = `completed_count ${data.completed_count}, failed_count ${data.failed_count}, job_count ${data.job_count}, jobs[] ${jobsArr.length} entries, ${jobsArr.filter((j) => j.status === 'completed').length} completed`;
  const perSecond = BATCH_JOBS / (wallMs / 1000);
  out(
    `batch ${label}: completed in ${(wallMs / 1000).toFixed(2)} s (POST → status completed) → ${perSecond.toFixed(1)} jobs/s`,
  );
  out(`batch ${label}: counts ${exact ? 'EXACT' : 'NOT EXACT'}: ${detail}`);
  out(cpu.report(`batch ${label}`));
  out(`batch ${label}: busiest worker threads: ${threadReport(svc.worker.child.pid, threadsBefore, wallMs / 1000)}`);
  await profileBatch(
    client,
    batchId,
    (data.jobs ?? []).map((j: { job_id: string }) => j.job_id),
    label,
  );
  return { wallMs, postMs, perSecond, exact, detail };
}

/** The batch workflow's runs (continue-as-new) and a sample of its jobs, from their histories. */
async function profileBatch(client: Client, batchId: string, jobIds: string[], label: string): Promise<void> {
  const runs: string[] = [];
  try {
    for await (const w of client.workflow.list({ query: `WorkflowId = '${batchId}'` })) runs.push(w.runId);
  } catch (e) {
    out(`batch ${label}: could not list the batch's runs: ${String(e)}`);
  }
  const batchProfiles = await mapPool(runs.length ? runs : [undefined], 4, async (runId) =>
    profileHistory(await client.workflow.getHandle(batchId, runId).fetchHistory()),
  );
  const events = batchProfiles.reduce((a, p) => a + p.events, 0);
  const tasks = batchProfiles.reduce((a, p) => a + p.workflowTasks, 0);
  const busy = batchProfiles.reduce((a, p) => a + p.taskBusy, 0);
  out(
    `batch ${label}: batch workflow: ${batchProfiles.length} run(s), ${events} events, ${tasks} workflow tasks, worker busy in them ${(busy / 1000).toFixed(1)} s`,
  );
  const merged: HistoryProfile = { ...batchProfiles[0], byType: new Map() };
  for (const p of batchProfiles) for (const [k, v] of p.byType) merged.byType.set(k, (merged.byType.get(k) ?? 0) + v);
  out(
    line(
      `batch ${label}: batch workflow task, started → completed`,
      summarize(batchProfiles.flatMap((p) => p.taskDurations)),
    ),
  );
  out(
    line(
      `batch ${label}: batch workflow task, scheduled → started`,
      summarize(batchProfiles.flatMap((p) => p.taskWaits)),
    ),
  );
  out(
    `batch ${label}: batch workflow tasks sent to the normal queue after the first (cache misses: full replays): ${batchProfiles.reduce((a, p) => a + p.nonStickyRepeats, 0)}`,
  );
  out(
    `batch ${label}: batch workflow events by type: ${[...merged.byType]
      .sort()
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  const step = Math.max(1, Math.floor(jobIds.length / 50));
  const sample = jobIds.filter((_, i) => i % step === 0);
  const jp = await mapPool(sample, 8, async (id) => profileHistory(await client.workflow.getHandle(id).fetchHistory()));
  out(line(`batch ${label}: job started → closed (sample)`, summarize(jp.map((p) => p.closed - p.started))));
  out(
    line(`batch ${label}: job 1st task scheduled → started`, summarize(jp.map((p) => p.firstTaskStarted - p.started))),
  );
  out(line(`batch ${label}: worker busy in a job's tasks`, summarize(jp.map((p) => p.taskBusy))));
  printEventCounts(`batch ${label}: job history (sample)`, jp);
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = performance.now();
  const cleanups = cleanupRegistry();
  const cleanup = cleanups.run;

  Runtime.install({ logger: new DefaultLogger('WARN') });
  const bin = temporalBinary();
  const version = spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim();
  out(`# docproc job benchmark — ${new Date().toISOString()}`);
  out(
    `load average at start: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  out(
    `node ${process.version}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB; ${version}`,
  );

  const rss = new RssSampler();
  cleanups.add(async () => rss.stop());
  try {
    const dbDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-bench-temporal-'));
    cleanups.add(async () => fs.rmSync(dbDir, { recursive: true, force: true }));
    const port = await freePort();
    const t0 = performance.now();
    const temporal = await startTemporalDev({
      bin,
      dbFile: path.join(dbDir, 'temporal.db'),
      port,
      uiPort: 0,
      headless: true,
    });
    cleanups.add(async () => {
      const t = performance.now();
      await temporal.stop(10_000);
      out(`temporal dev server stopped in ${(performance.now() - t).toFixed(0)} ms`);
    });
    rss.watch('temporal dev server', (temporal.child as { pid?: number }).pid);
    out(
      `temporal dev server on ` +
        `${temporal.address} (file DB ${path.join(dbDir, 'temporal.db')}, WAL, synchronous=normal), ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );

    const connection = await Connection.connect({ address: temporal.address });
    cleanups.add(() => connection.close());
    const client = new Client({ connection });

    const raw = await rawBaseline(temporal.address, client, (temporal.child as { pid?: number }).pid);

    const svc = await startService(temporal.address, 'a');
    rss.watch('api', svc.api.child.pid);
    rss.watch('worker', svc.worker.child.pid);
    let svcStopped = false;
    cleanups.add(async () => {
      if (!svcStopped) await stopService(svc, 'a');
    });
    const cpuA = new CpuMeter({
      temporal: (temporal.child as { pid?: number }).pid,
      worker: svc.worker.child.pid,
      api: svc.api.child.pid,
      bench: process.pid,
    });
    const service = await serviceLatency(svc, client, raw, cpuA);

    out('');
    out(`== BATCH: ${BATCH_JOBS} trivial transformer jobs in one POST /api/jobs/batch (BATCH_WINDOW default 100) ==`);
    const batch = await batchRun(svc, 'window-100', client, cpuA);

    out('');
    out('== peak memory ==');
    rss.sample();
    out(rss.report('api').text);
    out(rss.report('worker').text);
    out(rss.report('temporal dev server').text);
    out(
      `${'bench process (raw worker)'.padEnd(22)} peak RSS (VmHWM) ${((procMem(process.pid)?.hwm ?? NaN) / 1024).toFixed(0).padStart(4)} MB`,
    );
    await stopService(svc, 'a');
    svcStopped = true;

    let batch2: BatchResult | null = null;
    const elapsed = performance.now() - started;
    if (SECOND_WINDOW > 0 && elapsed < SECOND_PAIR_BUDGET_MS) {
      out('');
      out(`== BATCH again on a second api/worker pair with BATCH_WINDOW=${SECOND_WINDOW} ==`);
      const svc2 = await startService(temporal.address, 'b', { BATCH_WINDOW: String(SECOND_WINDOW) });
      rss.watch(`api (window ${SECOND_WINDOW})`, svc2.api.child.pid);
      rss.watch(`worker (window ${SECOND_WINDOW})`, svc2.worker.child.pid);
      try {
        const cpuB = new CpuMeter({
          temporal: (temporal.child as { pid?: number }).pid,
          worker: svc2.worker.child.pid,
          api: svc2.api.child.pid,
          bench: process.pid,
        });
        batch2 = await batchRun(svc2, `window-${SECOND_WINDOW}`, client, cpuB);
        rss.sample();
        out(rss.report(`api (window ${SECOND_WINDOW})`).text);
        out(rss.report(`worker (window ${SECOND_WINDOW})`).text);
      } finally {
        await stopService(svc2, 'b');
      }
    } else if (SECOND_WINDOW > 0) {
      out('');
      out(
        `(second batch pair with BATCH_WINDOW=${SECOND_WINDOW} skipped: ${(elapsed / 1000).toFixed(0)} s used so far)`,
      );
    }

    out('');
    out('== SUMMARY ==');
    out(
      `raw      p50 ${ms(raw.seq.p50)}  p95 ${ms(raw.seq.p95)}   throughput ${raw.perSecond.toFixed(1)} workflows/s (${RAW_PARALLEL} in parallel)`,
    );
    out(
      `service  p50 ${ms(service.async.p50)}  p95 ${ms(service.async.p95)}   (POST /api/jobs/ → GET ?wait=10 sees completed)`,
    );
    out(
      `ratio    service p50 / raw p50 = ` +
        `${ratio(service.async.p50, raw.seq.p50)}   (goal ≤ 2×: ${service.async.p50 <= 2 * raw.seq.p50 ? 'met' : 'not met'})`,
    );
    out(`sync     p50 ${ms(service.sync.p50)}  p95 ${ms(service.sync.p95)}   (POST /api/transformer/html-to-markdown)`);
    out(
      `ratio    sync p50 / raw p50 = ` +
        `${ratio(service.sync.p50, raw.seq.p50)}   (goal ≤ 2×: ${service.sync.p50 <= 2 * raw.seq.p50 ? 'met' : 'not met'})`,
    );
    out(
      `sync     the same requests again, answered from the result cache: p50 ` +
        `${ms(service.syncCached.p50)}  p95 ${ms(service.syncCached.p95)}`,
    );
    out(
      `batch    ${BATCH_JOBS} jobs in ${(batch.wallMs / 1000).toFixed(2)} s → ${batch.perSecond.toFixed(1)} jobs/s (goal ≥ 20: ${batch.perSecond >= 20 ? 'met' : 'not met'}); counts ${batch.exact ? 'exact' : 'NOT exact'}`,
    );
    if (batch2)
      out(
        `batch    BATCH_WINDOW=${SECOND_WINDOW}: ${(batch2.wallMs / 1000).toFixed(2)} s → ${batch2.perSecond.toFixed(1)} jobs/s; counts ${batch2.exact ? 'exact' : 'NOT exact'}`,
      );
    out(
      `total run ${((performance.now() - started) / 1000).toFixed(0)} s (before shutdown); load average at end: ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await cleanup();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`bench failed: ${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
