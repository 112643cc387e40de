import type { Client } from '@temporalio/client';
import type { BlobStore } from '../core/blob-store';
import type { Config } from '../core/config';
import type { TaskQueues } from '../core/ids';
import type { Logger } from '../core/logger';
import type { LlmProvider } from '../providers/llm';
import { createBatchActivities } from './batch.activities';
import { createJobActivities } from './jobs.activities';
import { createExternalOcrActivities } from './external-ocr.activities';
import { createImageActivities } from './image.activities';
import { createPdfActivities } from './pdf.activities';
import { createPingActivities } from './ping.activities';
import { createTransformerActivities } from './transformer.activities';
import { createWebhookActivities } from './webhook.activities';

export interface ActivityDeps {
  config: Config;
  logger: Logger;
  store: BlobStore;
  queues: TaskQueues;
  /** For activities that signal or start workflows (a batch reopened by a restarted job). */
  temporalClient?: Client;
  /** The language model, or null when none is configured (operations that need one fail with 503). */
  llm?: LlmProvider | null;
}

/** Every activity, built from injected dependencies. Workflows import only its type, `Activities`. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createPingActivities(),
    ...createJobActivities(deps),
    ...createBatchActivities(deps),
    ...createTransformerActivities(deps),
    ...createWebhookActivities(deps),
    ...createPdfActivities(deps),
    ...createImageActivities(deps),
    ...createExternalOcrActivities(deps),
  };
}

/** The activities' type: the one declaration workflows proxy. */
export type Activities = ReturnType<typeof createActivities>;
