import {
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  allHandlersFinished,
  getExternalWorkflowHandle,
  patched,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { jobStatusAttribute } from '../core/search-attributes';
import { bookkeeping, bookkeepingRemote } from './activity-options';
import {
  failJobSignal,
  jobFinishedSignal,
  jobRestartedSignal,
  jobStateQuery,
  waitForChangeUpdate,
  type JobError,
  type JobEvent,
  type JobInput,
  type JobState,
  type LogLevel,
} from './definitions';
import * as js from './job-state';
import { RUN_OWNS_RECORD, WEBHOOK_NOTIFIER } from './patches';
import { runPipeline, type PipelineContext } from './pipelines';
import { WebhookForwarder } from './webhook-forwarder';
import { WebhookSender } from './webhook-sender';

const local = proxyLocalActivities<Activities>(bookkeeping);
const remote = proxyActivities<Activities>(bookkeepingRemote);

const now = () => new Date().toISOString();

/**
 * One job, workflow id = job id. Holds status, progress, logs and error; answers `jobState` and `waitForChange`;
 * runs the job type's pipeline; writes the final record to the blob store before it reports a terminal status;
 * hands its webhook events to the job's notifier in order (progress throttled to one per second, never after the
 * final event) and ends without waiting for their delivery. A failed job fails the workflow run, so operators see it
 * as Failed and `restart` can start a new run under the same id at once; a restarted run writes its own record and
 * reports itself to its batch, so no other process writes a job's record while it runs.
 */
export async function jobWorkflow(input: JobInput): Promise<{ status: string; error?: JobError }> {
  const state = js.initialState(input, now());
  const baseEventId = input.priorEventId ?? 0;
  let failReason: string | undefined;
  let finished = false;

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
  const setStatusAttribute = () => upsertSearchAttributes([{ key: jobStatusAttribute, value: state.status }]);
  const webhooks = patched(WEBHOOK_NOTIFIER) ? new WebhookForwarder(input) : new WebhookSender(input, log);
  const inBatch = input.batchId !== undefined && input.batchIndex !== undefined;

  if (input.run > 1) log('info', `Run ${input.run} started`);
  js.startProcessing(state, now());
  setStatusAttribute();
  log('info', `Processing ${input.jobType} job`);
  if (input.run > 1 && patched(RUN_OWNS_RECORD)) {
    // The failed run's record is replaced by this run's, by this run: nothing else writes it after the start.
    await local.writeJobRecord({ state });
    if (inBatch)
      await reportToBatch(input, {
        index: input.batchIndex!,
        status: 'processing',
        run: input.run,
        jobId: input.jobId,
      });
  }

  const ctx: PipelineContext = {
    input,
    progress: (step, percent, message) =>
      webhooks.push(js.reportProgress(state, step, percent, message, now(), baseEventId)),
    log,
  };
  let error: JobError | undefined;
  let results: Record<string, unknown> | undefined;
  let cancelled: unknown;
  try {
    results = await scope.run(() => runPipeline(ctx));
  } catch (err) {
    error = toJobError(err, failReason);
    // Cancelled from outside (the Temporal UI, `temporal workflow cancel`), not by `failJob`: the run ends as
    // cancelled once the job has been wrapped up as failed.
    if (!failReason && isCancellation(err)) cancelled = err;
  }
  if (failReason && !error) error = { code: 'CANCELLED', message: failReason, details: {} };

  // The wrap-up runs whatever happened to the run: a cancel request must not leave the job `processing`.
  await CancellationScope.nonCancellable(async () => {
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
    await local.writeJobRecord({ state: finalState, finished: true });
    Object.assign(state, finalState);
    setStatusAttribute();
    webhooks.push(event);

    if (inBatch) await reportToBatch(input, { index: input.batchIndex!, status: state.status, run: input.run });
    finished = true;
    const logsBefore = state.logs.length;
    await webhooks.finish();
    if (state.logs.length !== logsBefore) await local.writeJobRecord({ state });
    await condition(allHandlersFinished);
  });
  if (cancelled) throw cancelled;
  if (error) throw ApplicationFailure.nonRetryable(error.message, error.code, error.details);
  return { status: state.status };
}

/**
 * Tells the job's batch that this run started again (`processing`) or ended; a closed batch (the job was restarted
 * after its batch finished) is reopened with the report.
 */
async function reportToBatch(
  input: JobInput,
  report: { index: number; status: JobState['status']; run: number; jobId?: string },
): Promise<void> {
  try {
    const batch = getExternalWorkflowHandle(input.batchId!);
    if (report.status === 'processing')
      await batch.signal(jobRestartedSignal, { index: report.index, run: report.run, jobId: report.jobId });
    else await batch.signal(jobFinishedSignal, { index: report.index, status: report.status, run: report.run });
  } catch {
    await remote.notifyBatch({ batchId: input.batchId!, ...report });
  }
}

function toJobError(err: unknown, failReason: string | undefined): JobError {
  if (failReason && isCancellation(err)) return { code: 'CANCELLED', message: failReason, details: {} };
  if (isCancellation(err))
    return {
      code: 'CANCELLED',
      message: 'The job was cancelled while it ran (a cancel request from an operator).',
      details: {},
    };
  let e = err as { cause?: unknown; type?: string; message?: string; details?: unknown[] };
  // Activity and child failures wrap the application failure that carries the code.
  while (e && !(e instanceof ApplicationFailure) && e.cause) e = e.cause as typeof e;
  if (e instanceof ApplicationFailure) {
    const details = (
      Array.isArray(e.details) && e.details[0] && typeof e.details[0] === 'object' ? e.details[0] : {}
    ) as Record<string, unknown>;
    if (e.type && /^[A-Z][A-Z0-9_]*$/.test(e.type)) return { code: e.type, message: e.message, details };
    // Not a code of ours (the class name of an unexpected error, e.g. `Error`): an internal error, without its
    // message, which can name server paths (the worker's log keeps it).
    return {
      code: 'INTERNAL_ERROR',
      message: 'The job failed on an unexpected internal error.',
      details: { error_type: e.type ?? 'unknown' },
    };
  }
  return {
    code: 'INTERNAL_ERROR',
    message: 'The job failed on an unexpected internal error.',
    details: { error_type: (err as Error)?.name ?? 'unknown' },
  };
}
