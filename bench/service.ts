/**
 * The real api/worker pair as a benchmark runs it (a temp DATA_DIR, warnings only, a task-queue prefix of its own,
 * MEDIA_CONCURRENCY unset unless asked), its stop with the time each process took, and a timed engine run. Shared
 * by the PDF and audio benchmarks.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, stopChild } from '../scripts/services.mjs';
import type { Proc } from '../test/support/servers/processes';
import { codeState, out, spawnServicePair } from './support';

export interface Service {
  url: string;
  worker: Proc;
  api: Proc;
  dataDir: string;
}

/** Starts a pair named `name` (temp dirs and task queues carry it) with `extraEnv` on top of the bench defaults. */
export async function startService(
  name: string,
  address: string,
  extraEnv: Record<string, string> = {},
): Promise<Service> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `docproc-bench-${name}-`));
  const port = await freePort();
  const common = {
    TEMPORAL_ADDRESS: address,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    TASK_QUEUE_PREFIX: `bench-${name}-${randomUUID().slice(0, 8)}`,
    HOST: '127.0.0.1',
    SERVICE_API_KEY: '',
    // Unset: one media slot per core (the default the tracker asks to measure).
    MEDIA_CONCURRENCY: '',
    DOCPROC_PARENT_PID: String(process.pid),
    ...extraEnv,
  };
  out(
    `service: code: ${codeState()}${
      Object.keys(extraEnv).length
        ? `; ${Object.entries(extraEnv)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ')}`
        : ''
    }`,
  );
  const { url, worker, api, startMs } = await spawnServicePair(common, port);
  const env: Record<string, string> = common;
  out(
    `service: api ${url}, ${env.MEDIA_CONCURRENCY ? `MEDIA_CONCURRENCY=${env.MEDIA_CONCURRENCY}` : `MEDIA_CONCURRENCY unset (${os.availableParallelism()} media slots)`}, healthy ${(startMs / 1000).toFixed(1)} s after spawn`,
  );
  return { url, worker, api, dataDir };
}

export async function stopService(s: Service): Promise<void> {
  for (const [name, p] of [
    ['api', s.api],
    ['worker', s.worker],
  ] as const) {
    const t0 = performance.now();
    await stopChild(p.child, 15_000);
    out(
      `service: ${name} stopped with ${p.child.exitCode ?? p.child.signalCode} after SIGTERM in ${(performance.now() - t0).toFixed(0)} ms`,
    );
    const warn = p
      .output()
      .split('\n')
      .filter((l) => /"level":(40|50|60)/.test(l) && !/No SERVICE_API_KEY/.test(l));
    if (warn.length)
      out(`service: ${name} logged ${warn.length} warning/error line(s); first: ${warn[0].slice(0, 300)}`);
  }
  fs.rmSync(s.dataDir, { recursive: true, force: true });
}

/** Runs a command to completion; resolves with the wall time and stdout, rejects on a non-zero exit. */
export function runTimed(
  cmd: string,
  args: string[],
  env?: NodeJS.ProcessEnv,
): Promise<{ ms: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { env: env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => chunks.push(d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.once('error', reject);
    child.once('close', (code) => {
      const took = performance.now() - t0;
      if (code !== 0) reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}: ${err.slice(-500)}`));
      else resolve({ ms: took, stdout: Buffer.concat(chunks).toString('utf8') });
    });
  });
}
