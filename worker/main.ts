import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { loadConfig, type Config } from '../core/config/config';
import { createLogger, type Logger } from '../core/runtime/logger';
import { watchParent } from '../core/runtime/parent-watch';
import { temporalConnectionOptions } from '../core/runtime/temporal-connection';
import { createBlobStore } from '../providers/storage';
import { warmWorker } from './warm-up';
import { createWorkers } from './create-workers';
import { startRetentionSweeper } from './retention-sweeper';
import { installSdkRuntime, startWorkerMetrics } from './metrics-listener';
import { temporalLogger } from './temporal-logger';

/**
 * Composition root of the worker process. SIGINT/SIGTERM drain it: the Workers stop polling, running activities get
 * `WORKER_SHUTDOWN_GRACE_MS` to finish, then are cancelled (their attempt fails and Temporal retries it on another
 * worker; heartbeating steps resume from their last heartbeat there), and the process exits.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('worker', config.LOG_LEVEL);
  const sdkMetricsAddress = await installSdkRuntime(config, (telemetry) =>
    Runtime.install({
      logger: temporalLogger(logger),
      telemetryOptions: {
        logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
        ...telemetry,
      },
    }),
  );
  const store = await createBlobStore(config);
  const connection = await connectWithRetry(config, logger);
  const clientConnection = await Connection.connect(temporalConnectionOptions(config));
  const temporalClient = new Client({ connection: clientConnection, namespace: config.TEMPORAL_NAMESPACE });
  const workers = await createWorkers({
    config,
    logger,
    store,
    connection,
    temporalClient,
    shutdownGraceMs: config.WORKER_SHUTDOWN_GRACE_MS,
  });
  const retention = startRetentionSweeper({
    store,
    retentionDays: config.RETENTION_DAYS,
    client: temporalClient,
    logger,
  });
  const metrics = await startWorkerMetrics(config, logger, sdkMetricsAddress);
  const stop = (signal: string) => {
    logger.info({ signal, graceMs: config.WORKER_SHUTDOWN_GRACE_MS }, 'worker shutting down');
    workers.shutdown();
    // Whatever still hangs once the grace and the cancellations had their time: exit anyway.
    setTimeout(() => {
      logger.warn('worker did not stop in time, exiting');
      process.exit(1);
    }, config.WORKER_SHUTDOWN_GRACE_MS + 15_000).unref();
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  watchParent(config.DOCPROC_PARENT_PID, () => stop('parent exited'));
  // Ready means warm: the engines the first jobs need have done one unit of work before the worker polls.
  if (config.WARM_UP) await warmWorker({ speech: workers.speech, media: workers.media !== undefined }, logger);
  await workers.run();
  await retention.stop();
  await metrics?.close();
  await connection.close();
  await clientConnection.close();
  logger.info('worker stopped');
}

async function connectWithRetry(config: Config, logger: Logger): Promise<NativeConnection> {
  const deadline = Date.now() + 60_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await NativeConnection.connect(temporalConnectionOptions(config));
    } catch (err) {
      if (Date.now() > deadline) throw err;
      if (attempt === 1 || attempt % 10 === 0) logger.warn({ address: config.temporalAddress }, 'waiting for Temporal');
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

main().catch((err) => {
  createLogger('worker').fatal({ err }, 'worker failed');
  process.exit(1);
});
