import {
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  allHandlersFinished,
  getExternalWorkflowHandle,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { bookkeeping, bookkeepingRemote, webhookDelivery } from './activity-options';
import {
  failJobSignal,
  jobFinishedSignal,
  jobStateQuery,
  waitForChangeUpdate,
  type JobError,
  type JobEvent,
  type JobInput,
  type JobState,
  type LogLevel,
} from './definitions';
import * as js from './job-state';
import { runPipeline, type PipelineContext } from './pipelines';
import { DEFAULT_WEBHOOK_ATTEMPTS, retryDelayMs } from '../core/webhooks';

const local = proxyLocalActivities<Activities>(bookkeeping);
const remote = proxyActivities<Activities>(bookkeepingRemote);
const hooks = proxyActivities<Activities>(webhookDelivery);

const now = () => new Date().toISOString();

/**
 * One job, workflow id = job id. Holds status, progress, logs and error; answers `jobState` and `waitForChange`;
 * runs the job type's pipeline; writes the final record to the blob store before it reports a terminal status;
 * delivers webhooks in order (progress throttled to one per second, never after the final event). A failed job
 * fails the workflow run, so operators see it as Failed and `restart` can start a new run under the same id.
 */
export async function jobWorkflow(input: JobInput): Promise<{ status: string; error?: JobError }> {
  const state = js.initialState(input, now());
  const baseEventId = input.priorEventId ?? 0;
  let failReason: string | undefined;
  let finished = false;
  const outbox: JobEvent[] = [];

  setHandler(jobStateQuery, () => state);
  setHandler(waitForChangeUpdate, async ({ version }) => {
    await condition(() => state.version > version || finished);
    return state;
  });
  const scope = new CancellationScope();
  setHandler(failJobSignal, ({ reason }) => {
    if (js.isTerminal(state) || failReason) return;
    failReason = reason;
    scope.cancel();
  });

  const log = (level: LogLevel, message: string) => js.addLog(state, level, message, now());
  const emit = (ev: JobEvent | null) => {
    if (ev && input.webhook) outbox.push(ev);
  };
  const setStatusAttribute = () => upsertSearchAttributes({ JobStatus: [state.status] });

  const sender = input.webhook ? runWebhookSender() : Promise.resolve();

  if (input.run > 1) log('info', `Run ${input.run} started`);
  js.startProcessing(state, now());
  setStatusAttribute();
  log('info', `Processing ${input.jobType} job`);

  const ctx: PipelineContext = {
    input,
    progress: (step, percent, message) => emit(js.reportProgress(state, step, percent, message, now(), baseEventId)),
    log,
  };
  let error: JobError | undefined;
  let results: Record<string, unknown> | undefined;
  try {
    results = await scope.run(() => runPipeline(ctx));
  } catch (err) {
    error = toJobError(err, failReason);
  }
  if (failReason && !error) error = { code: 'CANCELLED', message: failReason, details: {} };

  // The record is written before the terminal status becomes visible, so a reader never sees a finished job
  // whose record is missing.
  const finalState: JobState = JSON.parse(JSON.stringify(state));
  let event: JobEvent;
  if (error) {
    event = js.fail(finalState, error, now(), baseEventId);
    js.addLog(finalState, 'error', `Job failed: ${error.code}: ${error.message}`, now());
  } else {
    event = js.complete(finalState, results ?? {}, now(), baseEventId);
    js.addLog(finalState, 'info', 'Job completed', now());
  }
  await local.writeJobRecord({ state: finalState });
  Object.assign(state, finalState);
  setStatusAttribute();
  emit(event);

  if (input.batchId !== undefined && input.batchIndex !== undefined) {
    const finishedSignal = { index: input.batchIndex, status: state.status };
    try {
      await getExternalWorkflowHandle(input.batchId).signal(jobFinishedSignal, finishedSignal);
    } catch {
      // The batch is closed (this job was restarted after it finished): reopen it with the signal.
      await remote.notifyBatch({ batchId: input.batchId, ...finishedSignal });
    }
  }
  finished = true;
  const logsBefore = state.logs.length;
  await sender;
  if (state.logs.length !== logsBefore) await local.writeJobRecord({ state });
  await condition(allHandlersFinished);
  if (error) throw ApplicationFailure.nonRetryable(error.message, error.code, error.details);
  return { status: state.status };

  /** Delivers queued events one at a time, in order; progress events are coalesced and throttled. */
  async function runWebhookSender(): Promise<void> {
    let lastProgressAt = 0;
    for (;;) {
      await condition(() => outbox.length > 0 || finished);
      if (outbox.length === 0) return;
      let ev = outbox.shift()!;
      if (ev.phase === 'processing') {
        const wait = lastProgressAt + 1000 - Date.now();
        if (wait > 0) await sleep(wait);
        // Newer progress supersedes older; a final event drops any progress still queued.
        while (outbox.length && ev.phase === 'processing') ev = outbox.shift()!;
      }
      if (ev.phase === 'processing') lastProgressAt = Date.now();
      await deliver(ev);
    }
  }

  async function deliver(ev: JobEvent): Promise<void> {
    const webhook = input.webhook!;
    const maxAttempts = ev.phase === 'processing' ? 2 : DEFAULT_WEBHOOK_ATTEMPTS;
    const webhookId = `evt_${input.jobId}_${ev.id}`;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      // The activity signs with a timestamp of its own, fresh per attempt (receivers reject stale ones).
      const r = await hooks
        .deliverWebhook({ jobId: input.jobId, webhook, event: ev, webhookId })
        .catch((e: unknown) => ({ outcome: 'retry' as const, status: undefined, error: String((e as Error)?.message ?? e), retryAfter: null, durationMs: 0 }));
      const what = r.status ? `HTTP ${r.status}` : (r.error ?? 'no answer');
      if (r.outcome === 'delivered') {
        log('info', `Webhook ${ev.phase} delivered (attempt ${attempt}, ${what}, ${r.durationMs} ms)`);
        return;
      }
      if (r.outcome === 'give-up') {
        log('warning', `Webhook ${ev.phase} not delivered: ${what} (attempt ${attempt}, not retried)`);
        return;
      }
      const superseded = ev.phase === 'processing' && outbox.length > 0;
      if (attempt === maxAttempts || superseded) {
        log('warning', `Webhook ${ev.phase} failed: ${what} (attempt ${attempt}, giving up)`);
        return;
      }
      const delay = Math.max(1, Math.round(retryDelayMs(attempt, r.retryAfter, Date.now()) * (input.webhookRetryScale ?? 1)));
      log('warning', `Webhook ${ev.phase} failed: ${what} (attempt ${attempt}); retrying in ${Math.round(delay / 1000)} s`);
      await sleep(delay);
    }
  }
}

function toJobError(err: unknown, failReason: string | undefined): JobError {
  if (failReason && isCancellation(err)) return { code: 'CANCELLED', message: failReason, details: {} };
  let e = err as { cause?: unknown; type?: string; message?: string; details?: unknown[] };
  // Activity and child failures wrap the application failure that carries the code.
  while (e && !(e instanceof ApplicationFailure) && e.cause) e = e.cause as typeof e;
  if (e instanceof ApplicationFailure) {
    const details = (Array.isArray(e.details) && e.details[0] && typeof e.details[0] === 'object' ? e.details[0] : {}) as Record<string, unknown>;
    if (e.type && /^[A-Z][A-Z0-9_]*$/.test(e.type)) return { code: e.type, message: e.message, details };
    // Not a code of ours (the class name of an unexpected error, e.g. `Error`): an internal error, without its
    // message, which can name server paths (the worker's log keeps it).
    return { code: 'INTERNAL_ERROR', message: 'The job failed on an unexpected internal error.', details: { error_type: e.type ?? 'unknown' } };
  }
  return { code: 'INTERNAL_ERROR', message: 'The job failed on an unexpected internal error.', details: { error_type: (err as Error)?.name ?? 'unknown' } };
}

