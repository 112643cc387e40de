/**
 * One big job never starves the others (issue 20, point 3): the latency of a one-page `local_ocr` job submitted a
 * few seconds behind a big `local_ocr` job, against the same one-page job alone, on the real api/worker pair.
 * Asserts nothing about timing.
 *
 *   npx tsx bench/fairness.bench.ts        (or `npm run bench -- fairness`, which provisions the engines first)
 *
 * Two dev servers one after the other: `fair` with the settings of scripts/services.mjs (task queue fairness on:
 * the job id is each page activity's fairness key) and `fifo` with fairness and the priority matcher off (the keys
 * are carried and ignored: first in, first out). Both run today's workflows, so page groups in flight are bounded
 * per job (2 × media slots) in both; the difference is the order the media queue's backlog is handed out in.
 * Per server: BENCH_ALONE_RUNS (3) small jobs alone, then BENCH_CONTENDED_RUNS (2) times: a big job of
 * BENCH_BIG_PAGES (120) pages, the small job BENCH_DELAY_MS (3000) later, then the big job is cancelled (so a run
 * takes seconds, not the big job's minute). The big job's history gives its peak of page groups in flight; the small
 * job's history how long each of its media steps waited in the queue (scheduled → started) and ran.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type proto from '@temporalio/proto';
import { DEV_SERVER_DYNAMIC_CONFIG, freePort, startTemporalDev } from '../scripts/services.mjs';
import { buildPdf, wrapText } from '../test/support/documents/pdf-factory';
import { startService, stopService, type Service } from './service';
import { cleanupRegistry, envInt, out, ratio, secs, sleep, temporalBinary, tsMs } from './support';

type Event = proto.temporal.api.history.v1.IHistoryEvent;

const BIG_PAGES = envInt('BENCH_BIG_PAGES', 120);
const DELAY_MS = envInt('BENCH_DELAY_MS', 3000);
const ALONE_RUNS = envInt('BENCH_ALONE_RUNS', 3);
const CONTENDED_RUNS = envInt('BENCH_CONTENDED_RUNS', 2);

const TEXT =
  'The committee reviewed the quarterly figures on Thursday afternoon and agreed that the new warehouse had reduced ' +
  'delivery times by almost a third. Several members asked whether the savings would last through the winter.';

/** Pages of printed text (each read by tesseract after rendering: local_ocr ignores the text layer). */
const pdfOf = (pages: number, tag: string) =>
  buildPdf({
    pages: Array.from({ length: pages }, (_, i) => ({
      kind: 'lines' as const,
      lines: [`${tag} page ${i + 1}`, ...wrapText(TEXT, 70)],
      size: 12,
      leading: 16,
    })),
  });

async function call(base: string, method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(base + p, {
    method,
    headers: body !== undefined ? { 'content-type': 'application/json' } : {},
    body: body !== undefined ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(60_000),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

async function submit(svc: Service, file: string): Promise<string> {
  const r = await call(svc.url, 'POST', '/api/jobs/', {
    job_type: 'pdf',
    parameters: { filename: file, extraction_method: 'local_ocr', use_cache: false },
  });
  if (r.status !== 200)
    throw new Error(`POST /api/jobs/ answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
  return r.body.data.job_id as string;
}

/** Waits (GET ?wait=10, as a client does) until the job is terminal; answers its status. */
async function settle(svc: Service, jobId: string): Promise<string> {
  for (;;) {
    const g = await call(svc.url, 'GET', `/api/jobs/${jobId}?wait=10`);
    const st = g.body?.data?.status;
    if (st === 'completed' || st === 'failed') return st;
  }
}

/** POST → completed, in ms. */
async function timedSmall(svc: Service, file: string): Promise<{ ms: number; jobId: string }> {
  const t0 = performance.now();
  const jobId = await submit(svc, file);
  const st = await settle(svc, jobId);
  if (st !== 'completed') throw new Error(`the small job ${jobId} ended ${st}`);
  return { ms: performance.now() - t0, jobId };
}

function peakInFlight(events: Event[], type: string): number {
  const open = new Set<string>();
  let peak = 0;
  for (const e of events) {
    if (e.activityTaskScheduledEventAttributes?.activityType?.name === type) open.add(String(e.eventId));
    const c =
      e.activityTaskCompletedEventAttributes ??
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes ??
      e.activityTaskCanceledEventAttributes;
    if (c) open.delete(String(c.scheduledEventId));
    peak = Math.max(peak, open.size);
  }
  return peak;
}

/** Each media activity of a job: how long it waited in the queue (scheduled → started) and ran (started → closed). */
function mediaSteps(events: Event[]): string {
  const scheduled = new Map<string, { name: string; at: number; startedAt?: number }>();
  const steps: string[] = [];
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s && s.taskQueue?.name?.endsWith('-media'))
      scheduled.set(String(e.eventId), { name: s.activityType?.name ?? '?', at: tsMs(e.eventTime) });
    const st = e.activityTaskStartedEventAttributes;
    const started = st ? scheduled.get(String(st.scheduledEventId)) : undefined;
    if (started) started.startedAt = tsMs(e.eventTime);
    const c = e.activityTaskCompletedEventAttributes;
    const done = c ? scheduled.get(String(c.scheduledEventId)) : undefined;
    if (done?.startedAt !== undefined)
      steps.push(
        `${done.name} waited ${secs(done.startedAt - done.at)}, ran ${secs(tsMs(e.eventTime) - done.startedAt)}`,
      );
  }
  return steps.join('; ');
}

/** `fn` at most once (a cleanup also run by the normal path). */
const once = (fn: () => Promise<unknown>) => {
  let p: Promise<unknown> | undefined;
  return () => (p ??= fn());
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? NaN;

interface ModeResult {
  alone: number;
  contended: number[];
}

async function runMode(
  name: string,
  dynamicConfig: Record<string, string>,
  cleanup: ReturnType<typeof cleanupRegistry>,
): Promise<ModeResult> {
  out(
    `\n## ${name}: dev server with ${Object.entries(dynamicConfig)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}`,
  );
  const dbDir = fs.mkdtempSync(path.join(os.tmpdir(), `docproc-bench-fair-${name}-`));
  const server = await startTemporalDev({
    bin: temporalBinary(),
    dbFile: path.join(dbDir, 'temporal.db'),
    port: await freePort(),
    uiPort: 0,
    headless: true,
    dynamicConfig: dynamicConfig as typeof DEV_SERVER_DYNAMIC_CONFIG,
  });
  const stopServer = once(async () => {
    await server.stop();
    fs.rmSync(dbDir, { recursive: true, force: true });
  });
  cleanup.add(stopServer);
  const svc = await startService(`fair-${name}`, server.address);
  const stopSvc = once(() => stopService(svc));
  cleanup.add(stopSvc);
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  try {
    const small = path.join(svc.dataDir, 'small.pdf');
    const big = path.join(svc.dataDir, 'big.pdf');
    fs.writeFileSync(small, pdfOf(1, 'Small'));
    fs.writeFileSync(big, pdfOf(BIG_PAGES, 'Big'));

    await timedSmall(svc, small); // warm-up: the first job pays for the worker's first workflow task and the engines' start
    const alone: number[] = [];
    let lastAlone = '';
    for (let i = 0; i < ALONE_RUNS; i++) {
      const r = await timedSmall(svc, small);
      alone.push(r.ms);
      lastAlone = r.jobId;
    }
    out(
      `${name}: one-page job alone: ${alone.map(secs).join(', ')} (median ${secs(median(alone))}); the last one's media steps: ${mediaSteps((await client.workflow.getHandle(lastAlone).fetchHistory()).events ?? [])}`,
    );

    const contended: number[] = [];
    for (let i = 0; i < CONTENDED_RUNS; i++) {
      const bigId = await submit(svc, big);
      await sleep(DELAY_MS);
      const r = await timedSmall(svc, small);
      contended.push(r.ms);
      const bigState = await call(svc.url, 'GET', `/api/jobs/${bigId}`);
      const progress = bigState.body?.data?.progress?.message ?? '?';
      const bigHandle = client.workflow.getHandle(bigId);
      await bigHandle.cancel();
      await bigHandle.result().catch(() => undefined);
      const bigEvents = (await bigHandle.fetchHistory()).events ?? [];
      const smallEvents = (await client.workflow.getHandle(r.jobId).fetchHistory()).events ?? [];
      out(
        `${name}: run ${i + 1}: one-page job ${DELAY_MS / 1000} s behind a ${BIG_PAGES}-page job: ${secs(r.ms)} (${ratio(r.ms, median(alone))} of alone); ` +
          `big job by then: ${progress}; its peak of page groups in flight ${peakInFlight(bigEvents, 'extractPdfPages')}; ` +
          `the small job's media steps: ${mediaSteps(smallEvents)}`,
      );
      await sleep(1000); // the cancelled big job's tesseract processes end
    }
    return { alone: median(alone), contended };
  } finally {
    await connection.close();
    await stopSvc();
    await stopServer();
  }
}

async function main() {
  const cleanup = cleanupRegistry();
  const t0 = performance.now();
  out(
    `# Fairness: a one-page local_ocr job behind a ` +
      `${BIG_PAGES}-page local_ocr job (${os.availableParallelism()} cores, MEDIA_CONCURRENCY unset)`,
  );
  try {
    const fair = await runMode('fair', DEV_SERVER_DYNAMIC_CONFIG, cleanup);
    const {
      'matching.useNewMatcher': _m,
      'matching.enableFairness': _f,
      'matching.enableMigration': _g,
      ...fifoConfig
    } = DEV_SERVER_DYNAMIC_CONFIG as Record<string, string>;
    const fifo = await runMode('fifo', fifoConfig, cleanup);
    out('\n## Summary (goal: contended ≤ 2× alone)');
    for (const [name, r] of [
      ['fair', fair],
      ['fifo', fifo],
    ] as const) {
      out(
        `${name}: alone ${secs(r.alone)}; behind the big job ${r.contended.map(secs).join(', ')} → ${r.contended.map((c) => ratio(c, r.alone)).join(', ')} of alone`,
      );
    }
    out(`fair vs fifo (median behind the big job): ${ratio(median(fair.contended), median(fifo.contended))}`);
    out(`total ${secs(performance.now() - t0)}`);
  } finally {
    await cleanup.run();
  }
}

main().catch((e: unknown) => {
  out(`failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(1);
});
