import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { mapPool } from '../../../core/runtime/pool';
import { choosePort, freePort, startMinio } from '../../../scripts/services.mjs';
import { healthOk, spawnService, type Proc } from './processes';
import { waitFor } from '../wait';
import { textPdf } from '../results';
import { enginePaths, startDevServer, tempDir, type DevServer } from './engines';
import type { WebhookReceiver } from './webhook-receiver';

/**
 * The service scaled out as `npm run cluster` runs it: a Temporal dev server, a MinIO of its own (STORAGE=s3), API
 * processes on their own ports and workers that poll only the io or only the media queue (WORKER_QUEUES), each a
 * separate process. Every process is tracked so that `stop()` ends all of them, also after a failed test, and removes
 * the data.
 */
export interface Cluster {
  temporal: DevServer;
  minio: Awaited<ReturnType<typeof startMinio>>;
  env: Record<string, string>;
  dataDir: string;
  apis: { url: string; port: number; proc: Proc }[];
  io: Proc[];
  media: Proc[];
  /** Every process ever started (restarts too). */
  all: Proc[];
  startApi(port: number): Promise<Proc>;
  startWorker(queues: 'io,llm' | 'media'): Promise<Proc>;
  /** Output of every process, for a failed test. */
  dump(): string;
  stop(): Promise<void>;
}

export function workerReady(p: Proc): Promise<true> {
  return waitFor(
    async () => (p.output().includes('"msg":"worker ready"') ? true : undefined),
    'the worker to be ready',
    120_000,
    100,
  );
}

async function killHard(p: Proc): Promise<void> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await p.ended;
}

export async function startCluster(opts: {
  apis: number;
  ioWorkers: number;
  mediaWorkers: number;
  env?: Record<string, string>;
}): Promise<Cluster> {
  const all: Proc[] = [];
  let temporal: DevServer | undefined;
  let minio: Cluster['minio'] | undefined;
  const dataDir = tempDir('docproc-cluster-');
  const stop = async () => {
    await Promise.all(all.map(killHard));
    await Promise.all([temporal?.stop(), minio?.stop()]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    temporal = await startDevServer();
    const s3Port = await freePort();
    const { port: consolePort } = await choosePort(await freePort(), new Set([s3Port]));
    minio = await startMinio({ bin: enginePaths().minio, dir: path.join(dataDir, 'minio'), port: s3Port, consolePort });
    const env: Record<string, string> = {
      TEMPORAL_ADDRESS: temporal.address,
      DATA_DIR: path.join(dataDir, 'data'),
      HOST: '127.0.0.1',
      STORAGE: 's3',
      S3_ENDPOINT: minio.endpoint,
      S3_ACCESS_KEY: minio.accessKey,
      S3_SECRET_KEY: minio.secretKey,
      S3_BUCKET: 'docproc-cluster',
      // The cluster layout allows no private target and no temp-dir input by itself: the test's receivers are on
      // loopback and its inputs beside the data directory.
      ALLOW_PRIVATE_URLS: 'true',
      INPUT_ROOTS: dataDir,
      ...opts.env,
    };
    fs.mkdirSync(env.DATA_DIR, { recursive: true });
    const startApi = async (port: number) => {
      const proc = spawnService('api', { ...env, PORT: String(port) });
      all.push(proc);
      await waitFor(() => healthOk(`http://127.0.0.1:${port}`), `the API on ${port} to be healthy`, 120_000, 200);
      return proc;
    };
    const startWorker = async (queues: 'io,llm' | 'media') => {
      const proc = spawnService('worker', { ...env, WORKER_QUEUES: queues });
      all.push(proc);
      await workerReady(proc);
      return proc;
    };
    // Workers one after the other (the io worker bundles the workflows: CPU-heavy on 2 cores), then the APIs.
    const io: Proc[] = [];
    const media: Proc[] = [];
    for (let i = 0; i < opts.ioWorkers; i++) io.push(await startWorker('io,llm'));
    for (let i = 0; i < opts.mediaWorkers; i++) media.push(await startWorker('media'));
    const ports: number[] = [];
    for (let i = 0; i < opts.apis; i++) {
      const { port } = await choosePort(await freePort(), new Set(ports));
      ports.push(port);
    }
    const apis = await Promise.all(
      ports.map(async (port) => ({ url: `http://127.0.0.1:${port}`, port, proc: await startApi(port) })),
    );
    return {
      temporal,
      minio,
      env,
      dataDir,
      apis,
      io,
      media,
      all,
      startApi,
      startWorker,
      dump: () =>
        all
          .map((p) => `--- ${p.child.spawnargs.at(-1)} (pid ${p.child.pid}) ---\n${p.output().slice(-3000)}`)
          .join('\n'),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Writes `n` one-page text PDFs, each with its own marker line, into `dir`; answers their paths and markers. */
export function writeLightPdfs(dir: string, n: number): { file: string; marker: string }[] {
  fs.mkdirSync(dir, { recursive: true });
  return Array.from({ length: n }, (_, i) => {
    const marker = `Cluster document ${i} marker ${i * 7919}`;
    const file = path.join(dir, `doc-${i}.pdf`);
    fs.writeFileSync(file, textPdf([marker, 'A light page for the scale-out test.']));
    return { file, marker };
  });
}

/** True when a fetch failed because nothing listens there (the request never reached a server). */
function refused(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string } })?.cause;
  return cause?.code === 'ECONNREFUSED';
}

/**
 * POST /api/jobs/ for a PDF job with a webhook to `url`, on `urls[0]`; on a refused connection (that API is down:
 * the request reached nothing) on the next one, as a load balancer would. Answers the job id and the API used.
 */
async function submitPdfJob(
  urls: string[],
  file: string,
  hook: WebhookReceiver,
): Promise<{ jobId: string; via: string }> {
  let lastErr: unknown;
  for (const url of urls) {
    try {
      const res = await fetch(`${url}/api/jobs/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          job_type: 'pdf',
          parameters: { filename: file, use_cache: false, webhook: { url: hook.url } },
        }),
        signal: AbortSignal.timeout(60_000),
      });
      const body = (await res.json()) as { data?: { job_id?: string } };
      if (res.status !== 200 || !body.data?.job_id)
        throw new Error(`POST /api/jobs/ on ${url}: ${res.status} ${JSON.stringify(body)}`);
      return { jobId: body.data.job_id, via: url };
    } catch (err) {
      if (!refused(err)) throw err;
      lastErr = err;
    }
  }
  throw new Error(`no API took the job: ${String(lastErr)}`);
}

/** Job ids with a `completed` webhook, each with the distinct webhook ids (X-Webhook-Id) it was completed under. */
export function completedWebhooks(hook: WebhookReceiver): Map<string, Set<string>> {
  const byJob = new Map<string, Set<string>>();
  for (const r of hook.requests) {
    if (r.json?.phase !== 'completed') continue;
    const jobId = String(r.json.process?.id);
    const ids = byJob.get(jobId) ?? new Set<string>();
    ids.add(String(r.headers['x-webhook-id']));
    byJob.set(jobId, ids);
  }
  return byJob;
}

interface Submitted {
  jobId: string;
  via: string;
  marker: string;
  file: string;
}

export interface RunResult {
  jobs: Submitted[];
  /** From the first POST to the last job's completion webhook. */
  seconds: number;
  /** When the kills happened (seconds after the first POST), if they did. */
  killedAt?: number;
  /** Jobs posted to the other API because the chosen one refused the connection (it was down). */
  failedOver: number;
}

/**
 * Submits one PDF job per document, alternating between the cluster's APIs (job i to API i mod N), a webhook each,
 * and waits for every job's completion webhook. With `kill`, the first half is submitted, then once `kill.after`
 * jobs completed the second API and the first media worker are SIGKILLed (no request in flight to that API; the worker
 * while
 * Temporal shows it running a step) and
 * started again: the third quarter is submitted while they are down (the killed API's share to the other one, as
 * its connections are refused), the last quarter once both are back.
 */
export async function runRoundRobin(
  c: Cluster,
  docs: { file: string; marker: string }[],
  hook: WebhookReceiver,
  opts: { kill?: { after: number }; timeoutMs: number },
): Promise<RunResult> {
  const jobs: Submitted[] = new Array(docs.length);
  let failedOver = 0;
  const t0 = Date.now();
  const submit = (from: number, to: number) =>
    mapPool(docs.slice(from, to), 4, async (doc, k) => {
      const i = from + k;
      const order = c.apis.map((_, j) => c.apis[(i + j) % c.apis.length].url);
      const r = await submitPdfJob(order, doc.file, hook);
      if (r.via !== order[0]) failedOver++;
      jobs[i] = { ...r, ...doc };
    });
  const half = Math.floor(docs.length / 2);
  let killedAt: number | undefined;
  if (opts.kill) {
    await submit(0, half);
    await hook.waitFor(() => completedWebhooks(hook).size >= opts.kill!.after, opts.timeoutMs);
    const api = c.apis[1];
    const media = c.media[0];
    const open = jobs.filter((j) => j && !completedWebhooks(hook).has(j.jobId)).map((j) => j.jobId);
    await mediaWorkerBusy(c, media, open);
    killedAt = (Date.now() - t0) / 1000;
    await Promise.all([killHard(api.proc), killHard(media)]);
    const mediaBack = c.startWorker('media');
    mediaBack.catch(() => undefined); // awaited below
    // A quarter while the API is down (its share refused, taken by the other), the last quarter once it is back.
    const quarter = half + Math.floor((docs.length - half) / 2);
    await submit(half, quarter);
    c.apis[1] = { ...api, proc: await c.startApi(api.port) };
    c.media[0] = await mediaBack;
    await submit(quarter, docs.length);
  } else {
    await submit(0, docs.length);
  }
  const ids = new Set(jobs.map((j) => j.jobId));
  await hook.waitFor(() => [...ids].every((id) => completedWebhooks(hook).has(id)), opts.timeoutMs);
  const last = Math.max(...hook.requests.filter((r) => r.json?.phase === 'completed').map((r) => r.receivedAt));
  return { jobs, seconds: (last - t0) / 1000, killedAt, failedOver };
}

/**
 * Activities that needed more than one attempt, from the jobs' workflow histories (a retry of a step whose worker
 * was killed under it; Temporal records only the last attempt's start, with its number).
 */
export async function retriedActivities(c: Cluster, jobIds: string[]): Promise<number> {
  const connection = await Connection.connect({ address: c.temporal.address });
  try {
    const client = new Client({ connection });
    let retried = 0;
    for (const id of jobIds) {
      const history = await client.workflow.getHandle(id).fetchHistory();
      for (const e of history.events ?? []) if ((e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1) retried++;
    }
    return retried;
  } finally {
    await connection.close();
  }
}

/**
 * Waits (up to 30 s) until Temporal shows a step of one of `jobIds` started by `worker` (its default identity is
 * `<pid>@<host>`), so that a kill right after cuts a step short; answers whether it saw one (a step can still end
 * between that look and the kill).
 */
async function mediaWorkerBusy(c: Cluster, worker: Proc, jobIds: string[]): Promise<boolean> {
  const connection = await Connection.connect({ address: c.temporal.address });
  try {
    const client = new Client({ connection });
    const identity = `${worker.child.pid}@`;
    const STARTED = proto.temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
    const busy = async () => {
      for (const id of jobIds) {
        const d = await client.workflow.getHandle(id).describe();
        const started = d.raw.pendingActivities?.some(
          (a) => a.state === STARTED && (a.lastWorkerIdentity ?? '').startsWith(identity),
        );
        if (started) return true;
      }
      return undefined;
    };
    return await waitFor(busy, 'the media worker to run a step', 30_000, 20).catch(() => false);
  } finally {
    await connection.close();
  }
}
