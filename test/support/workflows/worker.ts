import path from 'node:path';
import { Client } from '@temporalio/client';
import {
  DefaultLogger,
  makeTelemetryFilterString,
  NativeConnection,
  Runtime,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import pino from 'pino';
import { loadConfig, type Config } from '../../../core/config/config';
import type { BlobStore } from '../../../core/stores/blob-store';
import { LocalBlobStore } from '../../../providers/storage';
import { bundleWorkflows, createWorkers, type Workers } from '../../../worker/create-workers';
import { connectTracked } from './temporal-calls';
import { noLlmUnlessAsked } from '../servers/llm-default';
import { asNpmStart } from '../servers/launch-env';

let runtimeInstalled = false;

/**
 * The SDK runtime (and its core, through the same logger) logs errors only, so test output stays readable: tests
 * fail workflows on purpose, and each would print a warning. `TEST_LOG_LEVEL` shows everything from INFO up.
 */
export function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level = process.env.TEST_LOG_LEVEL ? 'INFO' : 'ERROR';
  try {
    Runtime.install({
      logger: new DefaultLogger(level),
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: level }), forward: {} } },
    });
  } catch (err) {
    // An earlier test of this process already used the SDK, which installs the default runtime on first use: keep it.
    if (!/already been installed/.test(String((err as Error).message))) throw err;
  }
}

let bundle: Promise<WorkflowBundleWithSourceMap> | null = null;

/** The workflow bundle, built once per test process. */
export function sharedBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflows(pino({ level: 'silent' }));
  return bundle;
}

export interface TestWorker {
  workers: Workers;
  config: Config;
  store: BlobStore;
  /** The client the activities use (on a connection of the worker's own). */
  client: Client;
  running: Promise<void>;
  stop(): Promise<void>;
}

/** The real workers, in this process, against a running Temporal at `address`. */
export async function startTestWorker(
  address: string,
  env: Record<string, string> = {},
  store?: BlobStore,
): Promise<TestWorker> {
  quietRuntime();
  const config = loadConfig(asNpmStart(noLlmUnlessAsked({ LOG_LEVEL: 'silent', ...env, TEMPORAL_ADDRESS: address })));
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const blobStore = store ?? (await new LocalBlobStore(path.join(config.dataDir, 'blobs')).init());
  const connection = await NativeConnection.connect({ address });
  const clientConnection = await connectTracked(address);
  const temporalClient = new Client({ connection: clientConnection.connection, namespace: config.TEMPORAL_NAMESPACE });
  const workers = await createWorkers({
    config,
    logger,
    store: blobStore,
    connection,
    temporalClient,
    workflowBundle: await sharedBundle(),
  });
  const running = workers.run();
  return {
    workers,
    config,
    store: blobStore,
    client: temporalClient,
    running,
    stop: async () => {
      workers.shutdown();
      await running.catch(() => undefined);
      await connection.close();
      await clientConnection.closeWhenIdle();
    },
  };
}
