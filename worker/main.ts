import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Runtime, Worker, bundleWorkflowCode, makeTelemetryFilterString } from '@temporalio/worker';
import { createActivities } from '../activities';
import { loadConfig } from '../core/config';
import { taskQueues } from '../core/ids';
import { createLogger } from '../core/logger';
import { temporalConnectionOptions } from '../core/temporal-connection';
import { createBlobStore } from '../providers/storage';
import { temporalLogger } from './temporal-logger';

/**
 * Composition root of the worker: providers → activities → two Workers. Workflow tasks and I/O activities run on
 * the `io` queue with high concurrency; CPU-bound activities on the `media` queue with about one slot per core.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('worker', config.LOG_LEVEL);
  Runtime.install({
    logger: temporalLogger(logger),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} } },
  });
  const store = await createBlobStore(config);
  const activities = createActivities({ config, logger, store });
  const queues = taskQueues(config.TASK_QUEUE_PREFIX);
  const connection = await connectWithRetry(config, logger);
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../workflows/index.ts', import.meta.url)),
    logger: temporalLogger(logger.child({ part: 'bundler' }, { level: 'warn' })),
  });
  const mediaSlots = config.MEDIA_CONCURRENCY || Math.max(1, os.availableParallelism());
  const io = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: queues.io,
    workflowBundle,
    activities,
    maxConcurrentActivityTaskExecutions: config.IO_CONCURRENCY,
    maxConcurrentWorkflowTaskExecutions: 40,
    maxCachedWorkflows: 1000,
  });
  const media = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: queues.media,
    activities,
    maxConcurrentActivityTaskExecutions: mediaSlots,
  });
  const stop = (signal: string) => {
    logger.info({ signal }, 'worker shutting down');
    io.shutdown();
    media.shutdown();
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  logger.info({ queues, mediaSlots, ioSlots: config.IO_CONCURRENCY, address: config.temporalAddress }, 'worker ready');
  await Promise.all([io.run(), media.run()]);
  await connection.close();
  logger.info('worker stopped');
}

async function connectWithRetry(config: ReturnType<typeof loadConfig>, logger: ReturnType<typeof createLogger>) {
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
