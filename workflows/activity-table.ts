/**
 * Which worker runs each activity, and with which options: the one declaration both sides read. Workflows get their
 * activity proxies from it (workflows/routing.ts `activitiesFor`), and each worker registers the activities of its
 * queue from it (worker/create-workers.ts `registeredOn`), so a step cannot be sent to a queue whose worker does not
 * run it, and a new activity cannot be added without saying where it runs (the table is exhaustive over
 * `Activities`). Plain data and pure functions: no node module and no workflow runtime call, so the workflow bundle
 * and the worker both import it.
 *
 * Queues (core/jobs/ids.ts `taskQueues`): `io` runs the workflows, bookkeeping, webhooks and the store-heavy steps;
 * `media` the CPU-bound engines (about one slot per core); `llm` the steps that ask the language model (slots sized
 * to the model), so a burst of model work never holds the io slots of bookkeeping; `download` the downloads into a
 * job (slots of their own on the io worker's process), so hour-long downloads never hold them either.
 */
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  awaitingJob,
  bookkeeping,
  bookkeepingRemote,
  cpuBound,
  longProviderCall,
  modelCall,
  probe,
  quickTransform,
  quickTransformInTask,
  remoteMediaCall,
  storeHeavy,
  webhookDelivery,
} from './activity-options';

export type QueueKind = 'io' | 'media' | 'llm' | 'download';
export type ActivityName = keyof Activities;

/** Where one activity runs, and its options there. */
export interface ActivityRoute {
  /** The queue whose worker runs it; `every`: each worker registers it (the health probe crosses every queue). */
  queue: QueueKind | 'every';
  /** Its options by default. */
  options: ActivityOptions;
  /**
   * A local activity by default: in-process on the workflow's io worker, no round trip through a queue, under
   * `bookkeeping` (the local activities' one preset: `bookkeepingRemote`'s values).
   */
  local?: boolean;
  /**
   * `llm` steps only: the options of the same step when it asks no model (no template, no translation). It then
   * runs on the io queue, as does a model step of a run recorded before the llm queue existed: every `llm` step is
   * registered on the io worker as well.
   */
  withoutModel?: ActivityOptions;
  /** `llm` steps only: the options of the step asking no model when a route runs it in-process (`Route.local`). */
  inTaskWithoutModel?: LocalActivityOptions;
}

const io = (options: ActivityOptions): ActivityRoute => ({ queue: 'io', options });
/** Short bookkeeping in-process on the io worker (a local activity). */
const inProcess: ActivityRoute = { queue: 'io', options: bookkeepingRemote, local: true };
/**
 * A download into the job, on the download queue (slots of their own: an hour-long download never holds an io slot);
 * in runs recorded before that queue, on the io queue (`Route.download`), so the io worker registers it as well.
 */
const download: ActivityRoute = { queue: 'download', options: longProviderCall };
/** A CPU-bound engine on the media queue. */
const media: ActivityRoute = { queue: 'media', options: cpuBound };
/** A step that may ask the language model; `withoutModel`: its options when it asks none. */
const model = (withoutModel?: ActivityOptions, inTaskWithoutModel?: LocalActivityOptions): ActivityRoute => ({
  queue: 'llm',
  options: modelCall,
  ...(withoutModel ? { withoutModel } : {}),
  ...(inTaskWithoutModel ? { inTaskWithoutModel } : {}),
});

/** Every activity: its queue and its options preset (workflows/activity-options.ts). */
export const ACTIVITY_TABLE = {
  pingActivity: { queue: 'every', options: probe },

  // Job and batch bookkeeping (records, manifests, batch signals).
  writeJobRecord: inProcess,
  loadManifestSlice: inProcess,
  appendWebhookLog: inProcess,
  readJobRun: io(bookkeepingRemote),
  notifyBatch: io(bookkeepingRemote),
  awaitJobEnd: io(awaitingJob),
  writeBatchRecord: io(bookkeepingRemote),
  // Heartbeats in chunks when the batch's main loop runs it; runs recorded before ran it in-process from the
  // fail-all update (`activitiesFor({ local: true })`).
  failPendingJobs: io(bookkeepingRemote),
  startNotifier: io(bookkeepingRemote),
  deliverWebhook: io(webhookDelivery),

  // CPU-bound engines: poppler, tesseract, ffmpeg, the speech engine, LibreOffice and the document readers.
  preparePdf: media,
  readPdfText: media,
  extractPdfPages: media,
  renderPdfImages: media,
  readDocumentFile: media,
  ocrImageBlob: media,
  prepareAudio: media,
  transcribeChunk: media,
  detectAudioLanguage: media,
  extractVideoFrames: media,
  renderSessionPages: media,

  // Downloads into the job (URL inputs, hosted video, session pages and attachments): minutes to an hour each.
  fetchImage: download,
  fetchVideoInput: download,
  fetchSessionPage: download,
  fetchSessionAttachments: download,

  // A provider call that runs long (the external OCR service).
  externalOcrPdf: io(longProviderCall),

  // Store-heavy steps on the io worker: many or large blobs, heartbeating.
  finishExternalOcr: io(storeHeavy),
  writeSessionOutput: io(storeHeavy),
  planSessionSummary: io(storeHeavy),
  finishSessionSummary: io(storeHeavy),

  // A session's bookkeeping steps.
  planSession: io(bookkeepingRemote),
  collectSessionTranscript: io(bookkeepingRemote),
  collectSessionAttachments: io(bookkeepingRemote),
  recordSession: io(bookkeepingRemote),

  // Steps that may ask the model: the results of a job with a template or a translation, the session template,
  // the summaries' calls, the transformer's model operations (the HTML ones convert in a thread, `quickTransform`).
  finishPdf: model(storeHeavy),
  finishDocument: model(storeHeavy),
  finishAudio: model(storeHeavy),
  finishVideo: model(storeHeavy),
  finishImageOcr: model(storeHeavy),
  runTransformerStep: model(quickTransform, quickTransformInTask),
  fillSessionTemplate: model(),
  summaryCall: model(),
} as const satisfies Record<ActivityName, ActivityRoute>;

/**
 * How a workflow calls a group of activities; each activity's own options come from the table, this picks among
 * the variants the table allows. Patch outcomes are inputs (`fair`, `model`): `patched()` is called where the step
 * is decided, never here, so the markers stay where the recorded histories have them.
 */
export interface Route {
  /** The job whose steps these are: its id is the fairness key on the shared queues. */
  jobId?: string;
  /**
   * Media steps carry the job's fairness key and `priority` (`patched('bounded-fanout')`; runs recorded before it
   * scheduled them without).
   */
  fair?: boolean;
  /** The priority key of the media steps, with `fair` (routing.ts PRIORITY). */
  priority?: number;
  /**
   * Media steps whose engine is a remote provider (a vision model, a hosted speech endpoint): `remoteMediaCall`, so
   * a provider outage is waited out; a local engine keeps `cpuBound`'s attempt limit.
   */
  remoteEngine?: boolean;
  /**
   * Model steps: `llm` asks on the llm queue, keyed by job (`patched('llm-queue')`); `io` asks on the io queue (the
   * runs recorded before the llm queue); absent: the step asks no model and runs under its `withoutModel` options
   * (a step without them always asks, so it needs a `model`).
   */
  model?: 'llm' | 'io';
  /**
   * Runs the io steps in-process (local activities, `bookkeeping`), or through a queue when false; an `llm` step that
   * asks no model in-process under its `inTaskWithoutModel` options.
   */
  local?: boolean;
  /**
   * Downloads on the download queue (`patched('download-queue')`, routing.ts `downloadRoute`); absent or false: on
   * the io queue, as runs recorded before that queue scheduled them.
   */
  download?: boolean;
  /**
   * A task queue by name, for a step every worker registers (the health probe names the queues it crosses); any
   * other step refuses one, so it cannot be sent where its worker is not.
   */
  taskQueue?: string;
}

/** What a step is scheduled with. */
export interface Scheduled {
  /** A local activity, under `options` (then `LocalActivityOptions`). */
  local: boolean;
  options: ActivityOptions;
}

/**
 * The queue of `kind` beside the workflow's own: the workflow runs on `<prefix>-io` (core/jobs/ids.ts `taskQueues`, which
 * imports node:crypto, which a workflow bundle may not, so the suffixes are derived here). Without the `-io` suffix
 * (a test's own queue) every kind is the workflow's queue.
 */
export const siblingQueue = (workflowQueue: string, kind: QueueKind): string =>
  workflowQueue.replace(/-io$/, `-${kind}`);

/**
 * Fairness on the shared queues: every page, chunk and model activity of a job carries the job id as its fairness
 * key, so the server hands out a queue's backlog round-robin across jobs (a one-page job's step goes next instead of
 * behind a big job's backlog). The server needs `matching.enableFairness` (scripts/services.mjs sets it for the dev
 * server); without it the key is carried and ignored (first in, first out).
 */
export const fairFor = (jobId: string, priorityKey?: number): Pick<ActivityOptions, 'priority'> => ({
  priority: { fairnessKey: jobId.slice(0, 64), ...(priorityKey ? { priorityKey } : {}) },
});

function jobOf(name: string, route: Route): string {
  if (route.jobId === undefined) throw new Error(`${name}: a fair or model route needs the job id`);
  return route.jobId;
}

/** The options `name` is scheduled with on `route`, from a workflow running on `workflowQueue`. */
export function scheduledWith(name: ActivityName, route: Route, workflowQueue: string): Scheduled {
  const entry: ActivityRoute = ACTIVITY_TABLE[name];
  let local = false;
  let options: ActivityOptions;
  switch (entry.queue) {
    case 'media':
      options = {
        ...(route.remoteEngine ? remoteMediaCall : entry.options),
        taskQueue: siblingQueue(workflowQueue, 'media'),
        ...(route.fair ? fairFor(jobOf(name, route), route.priority) : {}),
      };
      break;
    case 'llm':
      if (route.model === 'llm')
        options = { ...entry.options, taskQueue: siblingQueue(workflowQueue, 'llm'), ...fairFor(jobOf(name, route)) };
      else if (route.model === 'io') options = entry.options;
      else if (route.local && entry.inTaskWithoutModel) {
        local = true;
        options = entry.inTaskWithoutModel;
      } else if (entry.withoutModel) options = entry.withoutModel;
      else throw new Error(`${name} always asks the model: its route needs a model queue (routing.ts modelRoute)`);
      break;
    case 'download':
      options = route.download
        ? { ...entry.options, taskQueue: siblingQueue(workflowQueue, 'download') }
        : entry.options;
      break;
    case 'io':
      local = route.local ?? entry.local ?? false;
      options = local ? bookkeeping : entry.options;
      break;
    default:
      options = entry.options;
  }
  if (route.taskQueue === undefined) return { local, options };
  if (entry.queue !== 'every') throw new Error(`${name} runs on its own task queue, not on ${route.taskQueue}`);
  return { local, options: { ...options, taskQueue: route.taskQueue } };
}

/** The queues whose workers register `name`. */
export function queuesOf(name: ActivityName): QueueKind[] {
  const entry: ActivityRoute = ACTIVITY_TABLE[name];
  if (entry.queue === 'every') return ['io', 'media', 'llm'];
  // A download runs on the download queue; in a run recorded before that queue, on io.
  if (entry.queue === 'download') return ['download', 'io'];
  // A model step asks on the llm queue; without a model, or in a run recorded before the llm queue, it runs on io.
  if (entry.queue === 'llm') return ['llm', 'io'];
  return [entry.queue];
}

/** The activities the worker of `queue` registers, so a worker never runs another queue's work. */
export function registeredOn<T extends Record<ActivityName, unknown>>(queue: QueueKind, all: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(all).filter(([name]) => name in ACTIVITY_TABLE && queuesOf(name as ActivityName).includes(queue)),
  ) as Partial<T>;
}
