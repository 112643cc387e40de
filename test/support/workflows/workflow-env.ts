import path from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { NativeConnection } from '@temporalio/worker';
import pino from 'pino';
import { BatchService, type CreateBatch } from '../../../api/services/batches';
import { JobService } from '../../../api/services/jobs';
import type { TemporalGateway } from '../../../api/temporal';
import { writeBlobJson, type BlobStore } from '../../../core/stores/blob-store';
import { loadConfig, type Config } from '../../../core/config/config';
import { newBatchId, newJobId, taskQueues } from '../../../core/jobs/ids';
import { batchManifestKey, jobRecordKey } from '../../../core/stores/records';
import { SEARCH_ATTRIBUTE_KEYS } from '../../../core/runtime/search-attributes';
import { LocalBlobStore } from '../../../providers/storage';
import { createWorkers, type Workers } from '../../../worker/create-workers';
import { jobInput, type BatchInput, type BatchManifest } from '../../../workflows/definitions';
import { initialState } from '../../../workflows/job-state';
import { enginePaths, tempDir } from '../servers/engines';
import { quietRuntime, sharedBundle } from './worker';
import { noLlmUnlessAsked } from '../servers/llm-default';
import { asNpmStart } from '../servers/launch-env';

/**
 * The local dev server through the SDK's test environment, from the provisioned Temporal CLI binary (the SDK's
 * download cannot run here), with the project's search attributes registered.
 */
export async function createLocalEnv(): Promise<TestWorkflowEnvironment> {
  quietRuntime();
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: enginePaths().temporal },
      searchAttributes: SEARCH_ATTRIBUTE_KEYS,
    },
  });
}

interface TemporalLinks {
  address: string;
  client: Client;
  connection: Connection;
  nativeConnection: NativeConnection;
}

/** Real workers (createWorkers) on a fresh task-queue prefix and data dir, with the API's services beside them. */
export interface Harness {
  prefix: string;
  config: Config;
  store: BlobStore;
  gateway: TemporalGateway;
  workers: Workers;
  jobs: JobService;
  client: Client;
  batches(window: number, webhookRetryScale?: number): BatchService;
  /** Starts a batch as BatchService.create does, with input fields the API does not set (historyLimit). */
  startBatch(
    req: CreateBatch,
    opts: { window: number; historyLimit?: number; webhookRetryScale?: number },
  ): Promise<{ batchId: string; jobIds: string[]; firstRunId: string }>;
  stop(): Promise<void>;
}

/** `env`: further configuration of the workers (e.g. `EXTERNAL_OCR_URL`). */
export async function startHarness(
  t: TemporalLinks,
  opts: { webhookRetryScale?: number; env?: Record<string, string> } = {},
): Promise<Harness> {
  const prefix = `wf${Math.random().toString(36).slice(2, 8)}`;
  const dataDir = tempDir('docproc-wf-');
  const config = loadConfig(
    asNpmStart(
      noLlmUnlessAsked({
        ...opts.env,
        TASK_QUEUE_PREFIX: prefix,
        DATA_DIR: dataDir,
        LOG_LEVEL: 'silent',
        TEMPORAL_ADDRESS: t.address,
        MEDIA_CONCURRENCY: '1',
      }),
    ),
  );
  const store = await new LocalBlobStore(path.join(config.dataDir, 'blobs')).init();
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const workers = await createWorkers({
    config,
    logger,
    store,
    connection: t.nativeConnection,
    temporalClient: t.client,
    workflowBundle: await sharedBundle(),
  });
  const running = workers.run();
  const gateway: TemporalGateway = {
    client: t.client,
    connection: t.connection,
    namespace: config.TEMPORAL_NAMESPACE,
    queues: taskQueues(prefix),
    // The harness's own dev server: no reachability watch (the API's gateway has one).
    ensureReachable: () => undefined,
    isReachable: () => true,
    whileReachable: (fn) => fn(),
    whenUnreachable: () => new Promise<void>(() => undefined),
    close: async () => undefined,
  };
  return {
    prefix,
    config,
    store,
    gateway,
    workers,
    client: t.client,
    jobs: new JobService(gateway, store, opts.webhookRetryScale ?? 1),
    batches: (window, scale = opts.webhookRetryScale ?? 1) => new BatchService(gateway, store, window, scale),
    async startBatch(req, o) {
      const batchId = newBatchId();
      const createdAt = new Date().toISOString();
      const manifest: BatchManifest = {
        batch_id: batchId,
        batch_name: req.batchName,
        created_at: createdAt,
        jobs: req.jobs.map((j) => ({
          job_id: newJobId(),
          job_type: j.jobType,
          parameters: j.parameters,
          ...(j.webhook ? { webhook: j.webhook } : {}),
        })),
      };
      const manifestKey = batchManifestKey(batchId);
      await writeBlobJson(store, manifestKey, manifest);
      await Promise.all(
        manifest.jobs.map((j, batchIndex) =>
          writeBlobJson(
            store,
            jobRecordKey(j.job_id),
            initialState(
              jobInput(j.job_type, j.parameters, { jobId: j.job_id, batchId, batchIndex, createdAt, run: 1 }),
              createdAt,
            ),
          ),
        ),
      );
      const input: BatchInput = {
        batchId,
        batchName: req.batchName,
        createdAt,
        jobCount: manifest.jobs.length,
        manifestKey,
        window: o.window,
        ...(o.historyLimit !== undefined ? { historyLimit: o.historyLimit } : {}),
        ...(o.webhookRetryScale !== undefined ? { webhookRetryScale: o.webhookRetryScale } : {}),
      };
      const handle = await t.client.workflow.start('batchWorkflow', {
        workflowId: batchId,
        taskQueue: gateway.queues.io,
        args: [input],
        searchAttributes: { BatchId: [batchId], JobStatus: ['pending'] },
      });
      return { batchId, jobIds: manifest.jobs.map((j) => j.job_id), firstRunId: handle.firstExecutionRunId };
    },
    async stop() {
      workers.shutdown();
      await running.catch(() => undefined);
    },
  };
}

/** A page of `count` numbered sections; about 110 characters of HTML per section. */
export function sectionsHtml(count: number, tag = 'doc'): string {
  const parts: string[] = [];
  for (let i = 0; i < count; i++)
    parts.push(
      `<h2>${tag} section ${i}</h2><p>Paragraph ${i} with <b>bold</b> text and <a href="https://example.com/${i}">a link</a>.</p>`,
    );
  return `<html><body>${parts.join('\n')}</body></html>`;
}

/** A page of about `bytes` characters. */
export function htmlOfSize(bytes: number, tag = 'doc'): string {
  return sectionsHtml(Math.ceil(bytes / 110), tag);
}
