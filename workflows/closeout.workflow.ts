import { patched } from '@temporalio/workflow';
import type { JobError, JobState, LogLevel } from './definitions';
import * as js from './job-state';
import { WEBHOOK_NOTIFIER } from './patches';
import { activitiesFor } from './routing';
import { WebhookForwarder } from './webhook-forwarder';
import { WebhookSender } from './webhook-sender';

const steps = activitiesFor();

/** How a job's run ended without running its own wrap-up. */
export type ClosedRunStatus = 'TERMINATED' | 'TIMED_OUT' | 'CANCELLED';

export interface JobCloseoutInput {
  jobId: string;
  runId: string;
  status: ClosedRunStatus;
}

const MESSAGES: Record<ClosedRunStatus, string> = {
  TERMINATED: 'The job was terminated while it ran (by an operator or a deployment); restart it to run it again.',
  TIMED_OUT: 'The job ran past its workflow timeout; restart it to run it again.',
  CANCELLED: 'The job was cancelled while it ran; restart it to run it again.',
};

const now = () => new Date().toISOString();

/**
 * The wrap-up of a job whose run closed without one (terminated or timed out: no workflow code runs then). Started
 * by the worker's sweeper, one per closed run (workflow id `closeout-<job id>-<run id>`): it reads the run's last
 * state, writes it as `failed` with the code of how the run ended, tells the job's batch (unless the batch counted the
 * run by its close), and sends the failure webhook, so the job reads as failed and can be restarted.
 */
export async function jobCloseoutWorkflow(input: JobCloseoutInput): Promise<{ closed: boolean }> {
  const last = await steps.readJobRun({ jobId: input.jobId, runId: input.runId });
  if (!last) return { closed: false };
  // A run that closed before its first workflow task has no state to read: the job as it was accepted.
  const state: JobState = 'job_id' in last ? last : js.initialState(last.input, now());
  const log = (level: LogLevel, message: string) => js.addLog(state, level, message, now());
  const error: JobError = { code: input.status, message: MESSAGES[input.status], details: { run_id: input.runId } };
  const event = js.fail(state, error, now(), state.input?.priorEventId ?? 0);
  // Its number may be one a run that replaced the closed one (a reset) sends too: its webhook id is its own.
  event.tag = 'closeout';
  log('error', `Job failed: ${error.code}: ${error.message}`);
  await steps.writeJobRecord({ state, finished: true });
  const batch = state.input;
  // A first run its batch counts by its close (BATCH_COUNTS_COMPLETIONS): the batch has seen it end already.
  const countedByClose = batch?.reportsByCompletion === true && (state.run ?? 1) === 1;
  if (batch?.batchId !== undefined && batch.batchIndex !== undefined && !countedByClose) {
    await steps.notifyBatch({ batchId: batch.batchId, index: batch.batchIndex, status: 'failed', run: state.run });
  }
  const hookInput = {
    jobId: input.jobId,
    webhook: state.input?.webhook,
    webhookRetryScale: state.input?.webhookRetryScale,
  };
  // The failure event goes to the job's notifier like any run's (see WEBHOOK_NOTIFIER).
  const webhooks = patched(WEBHOOK_NOTIFIER) ? new WebhookForwarder(hookInput) : new WebhookSender(hookInput, log);
  webhooks.push(event);
  const logsBefore = state.logs.length;
  await webhooks.finish();
  if (state.logs.length !== logsBefore) await steps.writeJobRecord({ state });
  return { closed: true };
}
