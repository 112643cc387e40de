/**
 * The cluster of `npm run cluster` (issue #16) on this machine: jobs/s with 1 and 2 media workers, and what killing
 * an API and a media worker midway costs. Each run is a fresh cluster (Temporal dev server, MinIO with STORAGE=s3,
 * 2 API processes, 1 io worker, the media workers) and BENCH_CLUSTER_JOBS (200) one-page PDF jobs with a webhook
 * each, POSTed round-robin to both APIs four at a time (test/support/cluster.ts, as test/slow/cluster.test.ts does).
 * Figures: from the first POST to the last completion webhook. Asserts nothing about time.
 *
 *   npx tsx bench/cluster.bench.ts        (or `npm run bench -- cluster`)
 */
import os from 'node:os';
import path from 'node:path';
import {
  retriedActivities,
  runRoundRobin,
  startCluster,
  writeLightPdfs,
  type RunResult,
} from '../test/support/cluster';
import { startWebhookReceiver } from '../test/support/webhook-receiver';
import { envInt, machineBusySeconds, out, ratio } from './support';

const JOBS = envInt('BENCH_CLUSTER_JOBS', 200);

async function scenario(label: string, mediaWorkers: number, kill: boolean): Promise<RunResult & { retried: number }> {
  const cluster = await startCluster({ apis: 2, ioWorkers: 1, mediaWorkers });
  const hook = await startWebhookReceiver();
  try {
    const docs = writeLightPdfs(path.join(cluster.dataDir, 'in'), JOBS);
    const busy0 = machineBusySeconds();
    const run = await runRoundRobin(cluster, docs, hook, {
      kill: kill ? { after: Math.floor(JOBS / 5) } : undefined,
      timeoutMs: 600_000,
    });
    const busy = machineBusySeconds() - busy0;
    const retried = await retriedActivities(
      cluster,
      run.jobs.map((j) => j.jobId),
    );
    out(
      `${label.padEnd(34)} ${run.seconds.toFixed(1).padStart(6)} s  ${(JOBS / run.seconds).toFixed(2).padStart(6)} jobs/s` +
        `  machine ${((busy / run.seconds / os.availableParallelism()) * 100).toFixed(0)} % busy` +
        (kill
          ? `  (killed at ${run.killedAt?.toFixed(1)} s, ${run.failedOver} POSTs failed over, ${retried} activities retried)`
          : ''),
    );
    return { ...run, retried };
  } finally {
    await cluster.stop();
    await hook.close();
  }
}

async function main(): Promise<void> {
  out(`cluster: ${JOBS} one-page PDF jobs, 2 APIs, 1 io worker, ${os.availableParallelism()} cores`);
  const one = await scenario('1 media worker', 1, false);
  const two = await scenario('2 media workers', 2, false);
  const killed = await scenario('2 media workers, kills midway', 2, true);
  out();
  out(`2 vs 1 media workers: ${ratio(JOBS / two.seconds, JOBS / one.seconds)} the jobs/s`);
  out(
    `kills: drain ${killed.seconds.toFixed(1)} s vs ${two.seconds.toFixed(1)} s without (${ratio(killed.seconds, two.seconds)}, +${(killed.seconds - two.seconds).toFixed(1)} s)`,
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
