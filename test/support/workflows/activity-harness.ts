import fs from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure, type Info } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import pino from 'pino';
import { createActivities } from '../../../activities';
import { errorBoundary } from '../../../activities/error-boundary';
import type { BlobStore } from '../../../core/stores/blob-store';
import { loadConfig } from '../../../core/config/config';
import { taskQueues } from '../../../core/jobs/ids';
import type { SpeechProvider } from '../../../domain/engines/speech';
import { LocalBlobStore } from '../../../providers/storage';
import { InMemoryMediaEngine, InMemoryOcrEngine, InMemoryPdfEngine, InMemorySpeechEngine } from './in-memory-engines';
import { noLlmUnlessAsked } from '../servers/llm-default';
import { asNpmStart } from '../servers/launch-env';

/** The failure of an attempt, or throws when it succeeded. */
export async function failureOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('the activity succeeded');
}

/** Whether Temporal would try the step again after this failure (what the worker reports it as). */
export const retryable = (err: unknown): boolean => !(err instanceof ApplicationFailure && err.nonRetryable);

/** One scratch root for every harness of the process (a scratch root registers its clean-up once per process). */
let scratchRoot: string | undefined;
function sharedScratch(): string {
  if (!scratchRoot) {
    const root = mkdtempSync(path.join(os.tmpdir(), 'docproc-unit-scratch-'));
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
    scratchRoot = root;
  }
  return scratchRoot;
}

/**
 * The real activities (createActivities) with in-memory engines, over a real local blob store in a temp dir, run in
 * MockActivityEnvironment with the worker's error boundary (so failures are what Temporal sees).
 */
export async function activityHarness(opts: { env?: Record<string, string>; speech?: SpeechProvider | null } = {}) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'docproc-unit-act-'));
  const config = loadConfig(
    asNpmStart(noLlmUnlessAsked({ DATA_DIR: dataDir, SCRATCH_DIR: sharedScratch(), LOG_LEVEL: 'silent', ...opts.env })),
  );
  const store: BlobStore = await new LocalBlobStore(path.join(config.dataDir, 'blobs')).init();
  const logger = pino({ level: 'silent' });
  const pdf = new InMemoryPdfEngine();
  const ocr = new InMemoryOcrEngine();
  const media = new InMemoryMediaEngine();
  const speech = opts.speech === undefined ? new InMemorySpeechEngine() : opts.speech;
  const activities = createActivities({
    config,
    logger,
    store,
    queues: taskQueues('unit'),
    llm: null,
    speech,
    pdf,
    ocr,
    media,
  });

  /** A fresh environment for one attempt; `beats` collects the heartbeats' details as they come. */
  function environment(info: Partial<Info> = {}) {
    const env = new MockActivityEnvironment(
      // Scheduled now, as the server would (the mock's default, the epoch, reads as an outage waited out for decades).
      { attempt: 1, scheduledTimestampMs: Date.now(), currentAttemptScheduledTimestampMs: Date.now(), ...info },
      {
        logger: new DefaultLogger('ERROR'),
        interceptors: [errorBoundary({ outageMaxMs: config.PROVIDER_OUTAGE_MAX_MS, logger })],
      },
    );
    const beats: unknown[] = [];
    env.on('heartbeat', (d: unknown) => beats.push(d));
    /** Runs one activity in this environment. */
    const run = <A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A): Promise<R> =>
      env.run(fn, ...args) as Promise<R>;
    return { env, beats, run };
  }

  return {
    config,
    store,
    activities,
    pdf,
    ocr,
    media,
    speech,
    environment,
    /** Runs one attempt of an activity (attempt 1 unless given). */
    run<A extends unknown[], R>(fn: (...args: A) => Promise<R>, args: A, info: Partial<Info> = {}): Promise<R> {
      return environment(info).run(fn, ...args);
    },
    remove: () => fs.rm(dataDir, { recursive: true, force: true }),
  };
}
