import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';

/** Retry presets by intent. Non-retryable failures are `ApplicationFailure.nonRetryable` from the activity. */

/** Short bookkeeping (records, manifests, batch signals): retried quickly and for a long time. */
const bookkeepingOptions = {
  startToCloseTimeout: '30s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 50 },
} as const;
/** In-process on the io worker (local activity). */
export const bookkeeping: LocalActivityOptions = bookkeepingOptions;
/** Through the server (a regular activity). */
export const bookkeepingRemote: ActivityOptions = bookkeepingOptions;

/**
 * A wait for a job the batch did not start in this run to end (`awaitJobEnd`): as long as a job may run, the attempt
 * polling and heartbeating, so a lost worker's wait is taken up again within 30 s.
 */
export const awaitingJob: ActivityOptions = {
  startToCloseTimeout: '24h',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
};

/**
 * In-process transformations on the io worker (HTML conversion: about a second per MB, in a thread). A regular
 * activity, not a local one: a local activity holds its workflow task open, so queries and `failJob` would wait
 * for it. Heartbeats every second; a dead worker's attempt is retried after 10 s.
 */
export const quickTransform: ActivityOptions = {
  startToCloseTimeout: '5m',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumAttempts: 3 },
};

/**
 * A small HTML conversion (a few KB: milliseconds) in-process in the job's workflow task, as a local activity
 * (transformer.pipeline.ts SMALL_TRANSFORM_CHARS): one attempt of at most 5 s, so the task (and the queries waiting
 * for it) is never held by retries; the pipeline retries a failure as the regular `quickTransform` activity.
 */
export const quickTransformInTask: LocalActivityOptions = {
  startToCloseTimeout: '5s',
  retry: { maximumAttempts: 1 },
};

/**
 * CPU-bound work on the media queue: heartbeats every second from the attempt's start (scratch copies included) and
 * per page, so a dead worker is noticed within 20 s. A hung engine is killed by the engine watchdog
 * (`ENGINE_STALL_TIMEOUT_MS`) long before the 2 h start-to-close, and the attempt retried.
 */
export const cpuBound: ActivityOptions = {
  startToCloseTimeout: '2h',
  heartbeatTimeout: '20s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 5 },
};

/**
 * A media step whose engine is a remote provider (a hosted speech endpoint, a vision model): `cpuBound`'s timeouts
 * and backoff without an attempt limit, so a provider outage is waited out for `PROVIDER_OUTAGE_MAX_MS` like a model
 * call's; the error boundary still stops other failures after 5 attempts, and refuses a late attempt past the window.
 */
export const remoteMediaCall: ActivityOptions = {
  startToCloseTimeout: '2h',
  heartbeatTimeout: '20s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m' },
};

/**
 * Steps that ask a language model. A model may think for minutes (a local CPU model longer), so liveness comes from
 * heartbeats sent every second while each call waits, not from a short start-to-close; each request is bounded by
 * the provider's own `LLM_TIMEOUT_MS`, and the step's answered calls are kept under the job, so a retry repeats none
 * of them. Permanent errors (a 401, a template that does not exist) are non-retryable at the error boundary.
 *
 * No attempt limit (no `maximumAttempts`): a provider outage (429, 5xx, timeouts, a full local model queue) is waited
 * out, and how many
 * attempts that takes depends on the provider's `Retry-After`. The error boundary (activities/error-boundary.ts)
 * bounds it: outage retries stop once the next attempt would start past `PROVIDER_OUTAGE_MAX_MS` from the first,
 * each waiting `nextRetryDelay` = max(Retry-After, this policy's backoff); an unexpected error (a crashed engine)
 * fails on its 5th attempt, and a 6th or later attempt that starts after the window (earlier ones timed out) is
 * refused, so those stop after a handful of attempts as they did with `maximumAttempts: 5`.
 */
export const modelCall: ActivityOptions = {
  startToCloseTimeout: '4h',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '2m' },
};

/**
 * Calls to providers over the network (downloads, external OCR, hosted video). No attempt limit, bounded by the
 * error boundary exactly as `modelCall` is: outages are waited out within `PROVIDER_OUTAGE_MAX_MS`, unexpected
 * errors stop at the 5th attempt.
 */
export const providerCall: ActivityOptions = {
  startToCloseTimeout: '10m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
};

/**
 * Provider calls that run long: downloads into the job (an image, a session page and its attachments, a video) and
 * the external OCR service (a document in page ranges, each request bounded by `EXTERNAL_OCR_TIMEOUT_MS`). Each
 * request is bounded by its own timeout; the activity heartbeats every second while it waits (`heartbeating`), so a
 * dead worker's attempt is retried within 30 s rather than at the start-to-close. Retried as provider calls are.
 */
export const longProviderCall: ActivityOptions = {
  ...providerCall,
  startToCloseTimeout: '1h',
  heartbeatTimeout: '30s',
};

/**
 * Steps on the io worker that read and write many or large blobs: a job's last step without a model (a document's
 * pages assembled, a transcript's chunks stitched, the results, `result.md`, an archive read back as base64, cache
 * entries) and a summary's plan and results over the session store. Seconds usually, minutes for a 2000-page
 * document, so liveness comes from a heartbeat every second (`heartbeating`) and a dead worker's step is retried
 * within 20 s, instead of after its start-to-close (30 min) as under the bookkeeping policy. Idempotent (the same
 * keys rewritten from kept inputs), so retried as long as bookkeeping is. A step that may ask the model runs
 * under `modelCall` instead, and heartbeats the same way.
 */
export const storeHeavy: ActivityOptions = {
  startToCloseTimeout: '30m',
  heartbeatTimeout: '20s',
  retry: bookkeepingOptions.retry,
};

/** One webhook attempt: the workflow itself schedules retries so every attempt is a log line. */
export const webhookDelivery: ActivityOptions = {
  startToCloseTimeout: '45s',
  retry: { maximumAttempts: 1 },
};

/** The health probe's round trip (`pingWorkflow`): it must answer within seconds or report the queue dead. */
export const probe: ActivityOptions = {
  startToCloseTimeout: '10s',
  scheduleToCloseTimeout: '20s',
  retry: { maximumAttempts: 2 },
};
