import type { Client } from '@temporalio/client';
import { NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { BatchReport } from '../activities/deps';
import { errorBoundary } from '../activities/error-boundary';
import { activityTimer } from '../activities/timing';
import { createLlmProvider } from '../providers/llm';
import { configureEngineWatchdog } from '../providers/process/run-tool';
import { createLocalSpeechProvider } from '../providers/speech/local';
import { createOpenAiSpeechProvider } from '../providers/speech/openai';
import type { SpeechProvider } from '../domain/engines/speech';
import type { BlobStore } from '../core/stores/blob-store';
import type { Config, WorkerQueueKind } from '../core/config/config';
import { taskQueues } from '../core/jobs/ids';
import type { Logger } from '../core/runtime/logger';
import { startCloseoutSweeper, type CloseoutSweeper } from './closeout-sweeper';
import { createEngines } from './engines';
import { llmSlots, mediaSlots, memoryLimitBytes, queueTuning } from './worker-tuning';
import { bundleWorkflowsApart } from './workflow-bundle';
import { batchWorkflow } from '../workflows/batch.workflow';
import { registeredOn } from '../workflows/activity-table';
import { jobFinishedSignal, jobRestartedSignal, type BatchInput } from '../workflows/definitions';

export { bundleWorkflows, WORKFLOWS_PATH } from './workflow-bundle';

export interface WorkerDeps {
  config: Config;
  logger: Logger;
  store: BlobStore;
  connection: NativeConnection;
  /** Used by activities that signal or start workflows. */
  temporalClient?: Client;
  /** A prebuilt bundle (tests build it once per file); built in a child process when absent (`bundleWorkflowsApart`). */
  workflowBundle?: WorkflowBundle;
  /**
   * After shutdown(), how long running activities may finish before they are cancelled (worker/main.ts:
   * WORKER_SHUTDOWN_GRACE_MS); default 0.
   */
  shutdownGraceMs?: number;
}

export interface Workers {
  /** The io Worker (workflows, I/O activities), absent unless `WORKER_QUEUES` lists `io`. */
  io?: Worker;
  /** The media Worker (CPU-bound activities), absent unless `WORKER_QUEUES` lists `media`. */
  media?: Worker;
  /** The llm Worker (model-calling activities), absent unless `WORKER_QUEUES` lists `llm`. */
  llm?: Worker;
  /**
   * The download Worker (downloads into jobs, `WORKER_DOWNLOAD_SLOTS` slots of their own), beside the io Worker: it
   * runs where `io` runs, so every layout that runs io serves downloads.
   */
  download?: Worker;
  /** The speech provider the activities transcribe with (closed when the workers stop). */
  speech: SpeechProvider | null;
  run(): Promise<void>;
  shutdown(): void;
}

/**
 * Providers → activities → three Workers (those `WORKER_QUEUES` lists). Workflow tasks and I/O activities run on the
 * `io` queue with high concurrency; CPU-bound activities on the `media` queue with about one slot per core; model
 * calls on the `llm` queue with slots sized to the model (`llmSlots`), so they never hold io slots. Each Worker
 * registers the activities workflows/activity-table.ts puts on its queue.
 */
export async function createWorkers(deps: WorkerDeps): Promise<Workers> {
  const { config, logger, store, connection } = deps;
  const queues = taskQueues(config.TASK_QUEUE_PREFIX);
  const llm = createLlmProvider(config);
  const client = deps.temporalClient;
  const reopenBatch = client
    ? async (input: BatchInput, { index, status, run, jobId }: BatchReport) => {
        const common = { workflowId: input.batchId, taskQueue: queues.io, args: [input] as [BatchInput] };
        if (status === 'processing')
          await client.workflow.signalWithStart(batchWorkflow, {
            ...common,
            signal: jobRestartedSignal,
            signalArgs: [{ index, run, jobId }],
          });
        else
          await client.workflow.signalWithStart(batchWorkflow, {
            ...common,
            signal: jobFinishedSignal,
            signalArgs: [{ index, status, run }],
          });
      }
    : undefined;
  // Every engine process this worker spawns is killed when it makes no progress for ENGINE_STALL_TIMEOUT_MS.
  configureEngineWatchdog({
    stallTimeoutMs: config.ENGINE_STALL_TIMEOUT_MS,
    logger: logger.child({ part: 'engine-watchdog' }),
  });
  // Local engine processes start lazily, on the first transcription.
  const speech: SpeechProvider | null =
    config.SPEECH_PROVIDER === 'openai' ? createOpenAiSpeechProvider(config) : createLocalSpeechProvider(config);
  const engines = createEngines(config);
  const activities = createActivities({
    config,
    logger,
    store,
    queues,
    temporalClient: client,
    llm,
    speech,
    ...engines,
    reopenBatch,
  });
  const limitBytes = memoryLimitBytes();
  const boundary = errorBoundary({
    outageMaxMs: config.PROVIDER_OUTAGE_MAX_MS,
    logger: logger.child({ part: 'error-boundary' }),
  });
  const common = {
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    interceptors: { activity: [activityTimer, boundary] },
    shutdownGraceTime: deps.shutdownGraceMs ?? 0,
  };
  const runs = (q: WorkerQueueKind) => config.WORKER_QUEUES.includes(q);
  const io = runs('io')
    ? await Worker.create({
        ...common,
        taskQueue: queues.io,
        workflowBundle: deps.workflowBundle ?? (await bundleWorkflowsApart(logger)),
        activities: registeredOn('io', activities),
        ...queueTuning(config, 'io', limitBytes),
      })
    : undefined;
  const media = runs('media')
    ? await Worker.create({
        ...common,
        taskQueue: queues.media,
        activities: registeredOn('media', activities),
        ...queueTuning(config, 'media', limitBytes),
      })
    : undefined;
  // Downloads take minutes to an hour each, heartbeating, streamed to scratch (a few buffers each): their own slots,
  // so they never hold the io slots of records, webhooks and batch reports.
  const downloadWorker = io
    ? await Worker.create({
        ...common,
        taskQueue: queues.download,
        activities: registeredOn('download', activities),
        maxConcurrentActivityTaskExecutions: config.WORKER_DOWNLOAD_SLOTS,
      })
    : undefined;
  const llmWorker = runs('llm')
    ? await Worker.create({
        ...common,
        taskQueue: queues.llm,
        activities: registeredOn('llm', activities),
        ...queueTuning(config, 'llm', limitBytes),
      })
    : undefined;
  logger.info(
    {
      llm: llm?.describe() ?? null,
      speech: speech?.describe() ?? null,
      queues: {
        io: io ? queues.io : null,
        media: media ? queues.media : null,
        llm: llmWorker ? queues.llm : null,
        download: downloadWorker ? queues.download : null,
      },
      mediaSlots: mediaSlots(config),
      llmSlots: llmSlots(config),
      ioSlots: config.IO_CONCURRENCY,
      downloadSlots: downloadWorker ? config.WORKER_DOWNLOAD_SLOTS : null,
      memoryBudgetMb: config.WORKER_MAX_MEMORY_MB || null,
      address: config.temporalAddress,
    },
    'worker ready',
  );
  // Jobs terminated or timed out from outside run no wrap-up of their own: the sweeper closes them out.
  let sweeper: CloseoutSweeper | undefined;
  return {
    io,
    media,
    llm: llmWorker,
    download: downloadWorker,
    speech,
    run: async () => {
      if (deps.temporalClient && io)
        sweeper = startCloseoutSweeper({
          client: deps.temporalClient,
          queues,
          logger,
          intervalMs: config.CLOSEOUT_SWEEP_MS,
        });
      try {
        await Promise.all([io?.run(), media?.run(), llmWorker?.run(), downloadWorker?.run()]);
      } finally {
        await Promise.all([sweeper?.stop(), speech?.close(), engines.office?.close()]);
      }
    },
    shutdown: () => {
      void sweeper?.stop();
      io?.shutdown();
      media?.shutdown();
      llmWorker?.shutdown();
      downloadWorker?.shutdown();
    },
  };
}
