/**
 * Where an idle io worker's memory goes (issue 33 item 5, companion of download-memory.bench.ts): this process does
 * what worker/main.ts does for `WORKER_QUEUES=io` (its download Worker beside), one phase at a time, against a
 * Temporal dev server (temp SQLite file, headless), and prints its RSS, V8 heap and external memory after each phase
 * (after a full GC when run with `--expose-gc`), then again after the Workers have polled idle for BENCH_PHASE_IDLE_S
 * seconds. Asserts nothing.
 *
 *   node --expose-gc --import tsx bench/download-memory-phases.bench.ts
 *
 * Knobs (env): BENCH_PHASE_IDLE_S (5); BENCH_PHASE_BUNDLE (`child`, as worker/main.ts does; `in-process`: webpack in
 * this process, as before); WORKER_QUEUES (io) and any other setting of the worker.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { freePort, startTemporalDev } from '../scripts/services.mjs';
import { envInt, out, sleep, temporalBinary } from './support';

const IDLE_S = envInt('BENCH_PHASE_IDLE_S', 5);
const IN_PROCESS = process.env.BENCH_PHASE_BUNDLE === 'in-process';
const mb = (n: number) => `${(n / 2 ** 20).toFixed(0)} MB`.padStart(7);
let last = process.memoryUsage().rss;

function phase(label: string): void {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  out(
    `${label.padEnd(44)} rss ${mb(m.rss)} (${m.rss >= last ? '+' : '-'}${mb(Math.abs(m.rss - last)).trim()})  heap ${mb(m.heapUsed)}  external ${mb(m.external)}`,
  );
  last = m.rss;
}

async function main(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-bench-phases-'));
  const temporal = await startTemporalDev({
    bin: temporalBinary(),
    dbFile: path.join(tmp, 'temporal', 'temporal.db'),
    port: await freePort(),
    uiPort: 0,
    headless: true,
  });
  try {
    process.env.TEMPORAL_ADDRESS = temporal.address;
    process.env.DATA_DIR = path.join(tmp, 'data');
    process.env.WORKER_QUEUES ??= 'io';
    process.env.TASK_QUEUE_PREFIX = `bench-phases-${randomUUID().slice(0, 8)}`;
    out(
      `# docproc idle worker memory by phase — ${new Date().toISOString()}; WORKER_QUEUES=${process.env.WORKER_QUEUES}`,
    );
    phase('node + tsx');
    const { Client, Connection } = await import('@temporalio/client');
    const { DefaultLogger, NativeConnection, Runtime } = await import('@temporalio/worker');
    phase('@temporalio/client + worker imported');
    const { loadConfig } = await import('../core/config/config');
    const { createLogger } = await import('../core/runtime/logger');
    const { createBlobStore } = await import('../providers/storage');
    const { temporalConnectionOptions } = await import('../core/runtime/temporal-connection');
    phase('config, logger, storage imported');
    const { createWorkers } = await import('../worker/create-workers');
    const { bundleWorkflows, bundleWorkflowsApart } = await import('../worker/workflow-bundle');
    phase('worker/create-workers imported (activities...)');
    const config = loadConfig();
    const logger = createLogger('worker', 'warn');
    Runtime.install({ logger: new DefaultLogger('WARN') });
    const store = await createBlobStore(config);
    const connection = await NativeConnection.connect(temporalConnectionOptions(config));
    const clientConnection = await Connection.connect(temporalConnectionOptions(config));
    const temporalClient = new Client({ connection: clientConnection, namespace: config.TEMPORAL_NAMESPACE });
    phase('runtime, store, connections');
    const io = config.WORKER_QUEUES.includes('io');
    const workflowBundle = !io
      ? undefined
      : IN_PROCESS
        ? await bundleWorkflows(logger)
        : await bundleWorkflowsApart(logger);
    phase(
      `workflow bundle, ${IN_PROCESS ? 'in process' : 'in a child'} (${workflowBundle ? mb(workflowBundle.code.length).trim() : 'none'})`,
    );
    const workers = await createWorkers({ config, logger, store, connection, temporalClient, workflowBundle });
    phase('Workers created');
    const running = workers.run();
    await sleep(IDLE_S * 1000);
    phase(`polling idle ${IDLE_S} s`);
    workers.shutdown();
    await running;
    await connection.close();
    await clientConnection.close();
  } finally {
    await temporal.stop(10_000);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
