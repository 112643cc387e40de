import {
  patched,
  proxyActivities,
  proxyLocalActivities,
  workflowInfo,
  type ActivityInterfaceFor,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ACTIVITY_TABLE, scheduledWith, type ActivityName, type Route } from './activity-table';
import { DOWNLOAD_QUEUE } from './patches';

/** Typed activity functions, each on its queue with its options (workflows/activity-table.ts). */
export type Steps = ActivityInterfaceFor<Activities>;

/**
 * The activities as workflow code calls them: each one scheduled on the queue the table gives it, with the options
 * the table gives it, for `route` (the job's fairness key and priority, a remote engine, where its model steps ask).
 * The only place workflow code builds activity proxies. Options are resolved when a step is called, inside the
 * workflow, so a module may hold the result.
 */
export function activitiesFor(route: Route = {}): Steps {
  return new Proxy({} as Steps, {
    get(_target, key) {
      if (typeof key !== 'string' || !(key in ACTIVITY_TABLE)) return undefined;
      const name = key as ActivityName;
      const { local, options } = scheduledWith(name, route, workflowInfo().taskQueue);
      return local ? proxyLocalActivities<Activities>(options)[name] : proxyActivities<Activities>(options)[name];
    },
  });
}

/**
 * Where a job's model step asks (`Route.model`), decided where the step is: when it asks the model (a template, a
 * translation), on the `llm` queue; runs recorded before the llm queue existed asked on the io queue and keep doing
 * so on replay (`patched('llm-queue')`, called only for a step that asks, as it always was).
 */
export function modelRoute(asks: boolean): Route['model'] {
  if (!asks) return undefined;
  return patched('llm-queue') ? 'llm' : 'io';
}

/**
 * Whether a job's download (URL input, hosted video, session page or attachments) goes to the download queue, decided
 * where the step is: runs recorded before that queue scheduled it on the io queue and keep doing so on replay
 * (`patched('download-queue')`, called only right before a download, as the step always was).
 */
export function downloadRoute(): boolean {
  return patched(DOWNLOAD_QUEUE);
}

/**
 * Priority keys (1 first; the server's default is 3). A job's first media step (prepare: one per job, short) and
 * the steps of a job small enough to run in one wave (no more page groups or chunks than its fan-out bound) go ahead
 * of a big job's backlog, so a one-page job waits only for a running step to end, not for the steps queued before
 * it. A big job's own steps keep the default, fair among big jobs by their fairness keys.
 */
export const PRIORITY = { first: 2, small: 2, big: 3 } as const;
