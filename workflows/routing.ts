import { patched, workflowInfo, type ActivityOptions } from '@temporalio/workflow';

/**
 * Where a job's activities run, and how they share a queue with other jobs' work. The queue names follow
 * core/ids.ts `taskQueues(prefix)`: the workflow runs on `<prefix>-io`, and its siblings are `<prefix>-media` and
 * `<prefix>-llm` (core/ids.ts imports node:crypto, which a workflow bundle may not, so the suffixes are derived here).
 */
export type QueueKind = 'media' | 'llm';

export const siblingQueue = (kind: QueueKind): string => workflowInfo().taskQueue.replace(/-io$/, `-${kind}`);

/**
 * Fairness on the shared queues: every page, chunk and model activity of a job carries the job id as its fairness
 * key, so the server hands out a queue's backlog round-robin across jobs (a one-page job's step goes next instead of
 * behind a big job's backlog). The server needs `matching.enableFairness` (scripts/services.mjs sets it for the dev
 * server); without it the key is carried and ignored (first in, first out).
 */
export const fairFor = (jobId: string, priorityKey?: number): Pick<ActivityOptions, 'priority'> => ({
  priority: { fairnessKey: jobId.slice(0, 64), ...(priorityKey ? { priorityKey } : {}) },
});

/**
 * Priority keys (1 first; the server's default is 3). A job's first media step (prepare: one per job, short) and
 * the steps of a job small enough to run in one wave (no more page groups or chunks than its fan-out bound) go ahead
 * of a big job's backlog, so a one-page job waits only for a running step to end, not for the steps queued before
 * it. A big job's own steps keep the default, fair among big jobs by their fairness keys.
 */
export const PRIORITY = { first: 2, small: 2, big: 3 } as const;

/**
 * Options of a job's model-calling steps: on the `llm` queue (sized to model capacity, so model calls never hold
 * the io slots of bookkeeping and webhooks), keyed by job for fairness. Runs recorded before the llm queue existed
 * scheduled these on the io queue: they keep doing so on replay (`patched('llm-queue')`).
 */
export function onLlmQueue(options: ActivityOptions, jobId: string): ActivityOptions {
  return patched('llm-queue') ? { ...options, taskQueue: siblingQueue('llm'), ...fairFor(jobId) } : options;
}

/**
 * Options of a job's media steps: on the `media` queue, keyed by job for fairness, at `priorityKey` when given
 * (`fair`: `patched('bounded-fanout')`; runs recorded before it scheduled these without a priority).
 */
export function onMediaQueue(
  options: ActivityOptions,
  jobId: string,
  fair: boolean,
  priorityKey?: number,
): ActivityOptions {
  return { ...options, taskQueue: siblingQueue('media'), ...(fair ? fairFor(jobId, priorityKey) : {}) };
}
