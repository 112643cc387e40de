/**
 * The cluster of `npm run cluster` on both Temporal engines side by side (issues #16 and #27): the dev server
 * (`--temporal dev`: one process, SQLite) and the layout of docker-compose.yml (`--temporal server`: the Temporal
 * server 1.29.1 on PostgreSQL, 4 history shards). For 1, 2 and 4 media workers (1 io worker, 2 APIs), a fresh
 * cluster works through light jobs (BENCH_CLUSTER_LIGHT one-page native PDFs) then heavy ones (BENCH_CLUSTER_HEAVY
 * two-page scanned PDFs read by OCR), each POSTed with a webhook round-robin to both APIs four at a time; figure:
 * first POST → last completion webhook, and the CPU each part of the stack used meanwhile (from /proc, with the
 * engines a worker ran). Then, per engine, a light run with 2 media workers during which the Temporal server (or dev
 * server), PostgreSQL (server layout), a media worker and an API are SIGKILLed in turn (the launcher restarts each):
 * the time until the stack serves again after each kill, and the drain time against the run without kills.
 * Asserts nothing about time.
 *
 *   npx tsx bench/cluster.bench.ts        (or `npm run bench -- cluster`)
 *   BENCH_CLUSTER_WORKERS=1,2 BENCH_CLUSTER_ENGINES=server   (a subset)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { freePort } from '../scripts/services.mjs';
import { chaosBatch, type BatchCounts } from '../test/support/chaos/chaos-batch';
import { runMixed, type Victim } from '../test/support/servers/cluster-run';
import { npmCluster, untilBanner, type Launched } from '../test/support/servers/launcher';
import { pidsOf } from '../test/support/servers/stack-procs';
import { tempDir } from '../test/support/servers/engines';
import { startWebhookReceiver } from '../test/support/servers/webhook-receiver';
import { envInt, machineBusySeconds, out, ratio } from './support';

const LIGHT = envInt('BENCH_CLUSTER_LIGHT', 100);
const HEAVY = envInt('BENCH_CLUSTER_HEAVY', 8);
const WORKERS = (process.env.BENCH_CLUSTER_WORKERS ?? '1,2,4').split(',').map(Number);
const ENGINES = (process.env.BENCH_CLUSTER_ENGINES ?? 'dev,server').split(',') as ('dev' | 'server')[];
const NONE: BatchCounts = { native: 0, scan: 0, audio: 0, translate: 0, template: 0, session: 0 };

/** The part of the stack a process belongs to (its command line and WORKER_QUEUES). */
function role(pid: number): string | null {
  try {
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ');
    if (/temporal-server-|start-dev/.test(cmd)) return 'temporal';
    if (/postgres/.test(cmd)) return 'postgresql';
    if (/minio/.test(cmd)) return 'minio';
    if (/api\/main\.ts/.test(cmd)) return 'apis';
    if (/worker\/main\.ts/.test(cmd))
      return fs.readFileSync(`/proc/${pid}/environ`, 'latin1').includes('WORKER_QUEUES=media') ? 'media' : 'io';
    return null;
  } catch {
    return null;
  }
}

/** CPU seconds (with waited-for children) per pid of the stack. */
function cpuByPid(dataDir: string): Map<number, { role: string; cpu: number }> {
  const m = new Map<number, { role: string; cpu: number }>();
  const stack = pidsOf('', dataDir);
  // PostgreSQL's backends rewrite their process title over their environment: found as the postmaster's children.
  const postmasters = new Set(stack.filter((p) => role(p) === 'postgresql'));
  const backends = fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((p) => {
      try {
        const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
        return postmasters.has(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      } catch {
        return false;
      }
    });
  for (const pid of [...stack, ...backends]) {
    const r = backends.includes(pid) ? 'postgresql' : role(pid);
    if (!r) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      m.set(pid, { role: r, cpu: (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100 });
    } catch {
      // gone
    }
  }
  return m;
}

function cpuReport(before: Map<number, { role: string; cpu: number }>, dataDir: string, wall: number): string {
  const after = cpuByPid(dataDir);
  const byRole = new Map<string, number>();
  for (const [pid, a] of after) byRole.set(a.role, (byRole.get(a.role) ?? 0) + a.cpu - (before.get(pid)?.cpu ?? 0));
  const total = [...byRole.values()].reduce((x, y) => x + y, 0);
  return (
    ['temporal', 'postgresql', 'io', 'media', 'apis', 'minio']
      .filter((r) => byRole.has(r))
      .map((r) => `${r} ${((byRole.get(r)! / total) * 100).toFixed(0)} %`)
      .join(', ') + ` of ${total.toFixed(0)} core-s (${(total / wall).toFixed(2)} cores)`
  );
}

/** The events of a job's workflow history (each one a write to the persistence store, besides its tasks). */
async function historyEvents(address: string, jobId: string): Promise<number> {
  const connection = await Connection.connect({ address });
  try {
    const history = await new Client({ connection }).workflow.getHandle(jobId).fetchHistory();
    return history.events?.length ?? 0;
  } finally {
    await connection.close();
  }
}

async function cluster(engine: 'dev' | 'server', mediaWorkers: number, dataDir: string): Promise<Launched> {
  const s = await npmCluster(
    await freePort(),
    dataDir,
    ['--temporal', engine, '--apis', '2', '--io-workers', '1', '--media-workers', String(mediaWorkers)],
    { LLM_PROVIDER: 'none', LOG_LEVEL: 'warn' },
  );
  await untilBanner(s, 900_000);
  return s;
}

interface Figure {
  seconds: number;
  rate: number;
}

async function batch(
  s: Launched,
  dataDir: string,
  label: string,
  counts: BatchCounts,
  victims: Victim[] = [],
): Promise<Figure & { kills: string }> {
  const hook = await startWebhookReceiver();
  try {
    const jobs = await chaosBatch({ dir: path.join(dataDir, 'in', label), counts, hookUrl: hook.url });
    const before = cpuByPid(dataDir);
    const busy0 = machineBusySeconds();
    const run = await runMixed(s, jobs, hook, { victims, timeoutMs: 900_000 });
    const busy = machineBusySeconds() - busy0;
    const rate = jobs.length / run.seconds;
    const events = await historyEvents(s.temporalAddress, jobs[0].jobId!);
    const kills = run.kills
      .map(
        (k) =>
          `${k.victim} ${(((k.servingAt ?? NaN) - k.at) / 1000).toFixed(1)} s / ${(((k.acceptedAt ?? NaN) - k.at) / 1000).toFixed(1)} s`,
      )
      .join(', ');
    out(
      `  ${label.padEnd(40)} ${run.seconds.toFixed(1).padStart(6)} s ${rate.toFixed(2).padStart(6)} jobs/s` +
        `  machine ${((busy / run.seconds / os.availableParallelism()) * 100).toFixed(0)} % busy` +
        (victims.length
          ? `  healthy again / a job taken after: ${kills}; ${run.retriedPosts} POSTs retried`
          : `  ${events} history events/job  CPU: ${cpuReport(before, dataDir, run.seconds)}`),
    );
    return { seconds: run.seconds, rate, kills };
  } finally {
    await hook.close();
  }
}

async function withCluster<T>(
  engine: 'dev' | 'server',
  workers: number,
  fn: (s: Launched, dir: string) => Promise<T>,
): Promise<T> {
  const dataDir = tempDir(`docproc-bench-cluster-${engine}-`);
  const t0 = Date.now();
  const s = await cluster(engine, workers, dataDir).catch((err) => {
    pidsOf('', dataDir).forEach((p) => process.kill(p, 'SIGKILL'));
    throw err;
  });
  out(`  (${engine}, ${workers} media workers: cluster ready in ${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  try {
    return await fn(s, dataDir);
  } finally {
    await s.stop(120_000).catch(() => s.killAll());
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  out(
    `cluster: ${LIGHT} light (native PDF) and ${HEAVY} heavy (2-page OCR) jobs, 2 APIs, 1 io worker, ` +
      `${os.availableParallelism()} cores, load average ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
  );
  const light = new Map<string, Figure>();
  const heavy = new Map<string, Figure>();
  for (const workers of WORKERS)
    for (const engine of ENGINES)
      await withCluster(engine, workers, async (s, dir) => {
        light.set(
          `${engine}/${workers}`,
          await batch(s, dir, `${engine} ${workers} media: light`, { ...NONE, native: LIGHT }),
        );
        heavy.set(
          `${engine}/${workers}`,
          await batch(s, dir, `${engine} ${workers} media: heavy`, { ...NONE, scan: HEAVY }),
        );
      });
  const killed = new Map<string, Figure>();
  for (const engine of ENGINES)
    await withCluster(engine, 2, async (s, dir) => {
      const victims: Victim[] =
        engine === 'server' ? ['temporal', 'postgresql', 'worker', 'api'] : ['temporal', 'worker', 'api'];
      killed.set(engine, await batch(s, dir, `${engine} 2 media: light, kills`, { ...NONE, native: LIGHT }, victims));
    });

  out();
  out('server vs dev (jobs/s ratio):');
  for (const workers of WORKERS) {
    const k = (e: string) => `${e}/${workers}`;
    if (!light.has(k('dev')) || !light.has(k('server'))) continue;
    out(
      `  ${workers} media: light ${ratio(light.get(k('server'))!.rate, light.get(k('dev'))!.rate)}, heavy ${ratio(heavy.get(k('server'))!.rate, heavy.get(k('dev'))!.rate)}`,
    );
  }
  for (const engine of ENGINES) {
    const first = WORKERS[0];
    const rest = WORKERS.slice(1).map(
      (w) =>
        `${w} vs ${first}: light ${ratio(light.get(`${engine}/${w}`)!.rate, light.get(`${engine}/${first}`)!.rate)}, heavy ${ratio(heavy.get(`${engine}/${w}`)!.rate, heavy.get(`${engine}/${first}`)!.rate)}`,
    );
    out(`${engine}: ${rest.join('; ')}`);
    const base = light.get(`${engine}/2`);
    const k = killed.get(engine);
    if (base && k)
      out(
        `${engine}: kills cost +${(k.seconds - base.seconds).toFixed(1)} s of drain (${ratio(k.seconds, base.seconds)} the time without kills)`,
      );
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
