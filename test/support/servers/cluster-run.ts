/**
 * A mixed batch worked through by a stack `npm run cluster` started (either engine: `--temporal dev` or `server`),
 * the jobs POSTed one by one round-robin to its APIs (on a refused connection to the next API, as a load balancer
 * would), with processes of the stack SIGKILLed between the stretches of the submission while its jobs run; the
 * launcher's supervisor restarts each. Shared by the cluster test (test/slow/cluster-server.test.ts) and the
 * benchmark (bench/cluster.bench.ts).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { mapPool } from '../../../core/runtime/pool';
import type { ChaosJob } from '../chaos/chaos-batch';
import { completedWebhooks } from './cluster';
import type { Launched } from './launcher';
import { healthOk } from './processes';
import { waitFor } from '../wait';
import { alive, killPid } from './stack-procs';
import type { WebhookReceiver } from './webhook-receiver';

/** What can be killed: the Temporal server (or dev server), PostgreSQL, a media worker, the second API. */
export type Victim = 'temporal' | 'postgresql' | 'worker' | 'api';

export interface Kill {
  victim: Victim;
  pid: number;
  /** ms since the epoch: the kill, the replacement process seen, the stack serving again (health ok, a job taken). */
  at: number;
  replacedAt?: number;
  servingAt?: number;
  /** The first job POSTed after the kill that an API took (after retries). */
  acceptedAt?: number;
  /** Jobs completed (completion webhook) at the kill. */
  completedBefore: number;
}

/** The base URLs of the cluster's APIs, from its banner. */
export function apiUrls(s: Launched): string[] {
  const line = /APIs: +(.+)/.exec(s.output())?.[1] ?? '';
  return [...line.matchAll(/(http:\/\/\S+)\/api/g)].map((m) => m[1]);
}

function environ(pid: number): Record<string, string> {
  try {
    return Object.fromEntries(
      fs
        .readFileSync(`/proc/${pid}/environ`, 'latin1')
        .split('\0')
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    );
  } catch {
    return {};
  }
}

/** The pids of the stack's processes of one kind (`env`: variables their environment must hold). */
export function stackPids(s: Launched, marker: string, env: Record<string, string> = {}): number[] {
  return s.pids(marker).filter((pid) => Object.entries(env).every(([k, v]) => environ(pid)[k] === v));
}

/** The environment of one live process of the stack (for a check against docker-compose.yml). */
export function environOf(pid: number): Record<string, string> {
  return environ(pid);
}

/** How each victim is found: the marker of its command line and what its environment holds. */
function victimPids(s: Launched, victim: Victim, secondApiPort: string): number[] {
  switch (victim) {
    case 'temporal':
      // The server's binary, or the dev server (`temporal server start-dev`).
      return [...s.pids('temporal-server-'), ...s.pids('start-dev')];
    case 'postgresql':
      // The postmaster (its backends carry no -D on their command lines).
      return s.pids(`-D ${s.dataDir}/postgresql`);
    case 'worker':
      return stackPids(s, 'worker/main.ts', { WORKER_QUEUES: 'media' }).slice(0, 1);
    case 'api':
      return stackPids(s, 'api/main.ts', { PORT: secondApiPort });
  }
}

/**
 * POST /api/jobs/ as a careful client does: with an Idempotency-Key (the job's client id), so that a retry never
 * makes a second job; on `urls[0]`, and on a refused connection or a 503 (Temporal unreachable, an API draining) on
 * the next, round and round for up to `timeoutMs`. Answers the job id and the URL that took it.
 */
async function submit(
  urls: string[],
  spec: ChaosJob['spec'],
  key: string,
  timeoutMs = 300_000,
): Promise<{ jobId: string; via: string; retried: number }> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  let retried = 0;
  for (;;) {
    for (const url of urls) {
      try {
        const res = await fetch(`${url}/api/jobs/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify(spec),
          signal: AbortSignal.timeout(120_000),
        });
        const body = (await res.json()) as { data?: { job_id?: string } };
        if (res.status === 200 && body.data?.job_id) return { jobId: body.data.job_id, via: url, retried };
        last = `${res.status} ${JSON.stringify(body).slice(0, 300)}`;
        if (res.status !== 503) throw new Error(`POST /api/jobs/ on ${url}: ${last}`);
      } catch (err) {
        const code = (err as { cause?: { code?: string } })?.cause?.code;
        if (code !== 'ECONNREFUSED' && code !== 'ECONNRESET' && code !== 'UND_ERR_SOCKET' && !last.startsWith('503'))
          throw err;
        if (code) last = String(code);
      }
      retried++;
    }
    if (Date.now() > deadline) throw new Error(`no API took the job within ${timeoutMs / 1000} s: ${last}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

export interface MixedRun {
  kills: Kill[];
  /** From the first POST to the last completion webhook, seconds. */
  seconds: number;
  /** POSTs that went to another API because theirs refused the connection or answered 503. */
  failedOver: number;
  /** POSTs that needed more than one try (each retry with the same Idempotency-Key). */
  retriedPosts: number;
  perApi: Record<string, number>;
}

/**
 * POSTs `jobs` in `victims.length + 1` equal stretches, round-robin over the APIs; after each stretch but the last,
 * once a few more jobs have completed, SIGKILLs the next victim and waits for the supervisor's replacement and the
 * stack to serve again (a job POSTed and taken). Then waits for every job's completion webhook.
 */
export async function runMixed(
  s: Launched,
  jobs: ChaosJob[],
  hook: WebhookReceiver,
  opts: { victims: Victim[]; timeoutMs: number; log?: (line: string) => void },
): Promise<MixedRun> {
  const urls = apiUrls(s);
  const secondApiPort = new URL(urls[urls.length - 1]).port;
  const stretches = opts.victims.length + 1;
  const per = Math.ceil(jobs.length / stretches);
  const kills: Kill[] = [];
  const perApi: Record<string, number> = Object.fromEntries(urls.map((u) => [u, 0]));
  let failedOver = 0;
  let retriedPosts = 0;
  // Idempotency keys of this run's own (the same client ids come again in another batch on the same cluster).
  const run = randomUUID().slice(0, 8);
  const t0 = Date.now();
  const completed = () => completedWebhooks(hook).size;
  for (let k = 0; k < stretches; k++) {
    const from = k * per;
    const to = Math.min(jobs.length, from + per);
    await mapPool(jobs.slice(from, to), 4, async (job, j) => {
      const i = from + j;
      const order = urls.map((_, n) => urls[(i + n) % urls.length]);
      const r = await submit(order, job.spec, `${run}-${job.clientId}`);
      job.jobId = r.jobId;
      perApi[r.via]++;
      if (r.via !== order[0]) failedOver++;
      if (r.retried) retriedPosts++;
      const lastKill = kills.at(-1);
      if (lastKill && lastKill.acceptedAt === undefined) lastKill.acceptedAt = Date.now();
    });
    const victim = opts.victims[k];
    if (!victim) break;
    // Mid-batch: some jobs of this stretch done, others running.
    const target = Math.min(to - 1, completed() + Math.max(2, Math.floor((to - completed()) / 4)));
    await hook.waitFor(() => completed() >= target, opts.timeoutMs);
    const pids = victimPids(s, victim, secondApiPort);
    if (pids.length !== 1) throw new Error(`${pids.length} processes to kill as ${victim}: ${pids.join(', ')}`);
    const kill: Kill = { victim, pid: pids[0], at: Date.now(), completedBefore: completed() };
    killPid(pids[0]);
    kills.push(kill);
    await waitFor(
      async () =>
        !alive(kill.pid) && victimPids(s, victim, secondApiPort).some((p) => p !== kill.pid) ? true : undefined,
      `a new ${victim} process`,
      180_000,
      100,
    );
    kill.replacedAt = Date.now();
    // Serving again: every API healthy (its readiness asks Temporal) .
    await waitFor(
      async () => ((await Promise.all(urls.map((u) => healthOk(u)))).every(Boolean) ? true : undefined),
      `the cluster serving again after the ${victim} kill`,
      180_000,
      100,
    );
    kill.servingAt = Date.now();
    opts.log?.(
      `      killed ${victim} (pid ${kill.pid}) at ${((kill.at - t0) / 1000).toFixed(1)} s with ${kill.completedBefore} jobs done: ` +
        `replaced after ${((kill.replacedAt - kill.at) / 1000).toFixed(1)} s, serving after ${((kill.servingAt - kill.at) / 1000).toFixed(1)} s`,
    );
  }
  const ids = new Set(jobs.map((j) => j.jobId!));
  await hook.waitFor(() => [...ids].every((id) => completedWebhooks(hook).has(id)), opts.timeoutMs);
  const last = Math.max(...hook.requests.filter((r) => r.json?.phase === 'completed').map((r) => r.receivedAt));
  return { kills, seconds: (last - t0) / 1000, failedOver, retriedPosts, perApi };
}
