import {
  CancellationScope,
  condition,
  setHandler,
  upsertSearchAttributes,
  allHandlersFinished,
  getExternalWorkflowHandle,
  patched,
  workflowInfo,
} from '@temporalio/workflow';
import { jobStatusAttribute } from '../core/runtime/search-attributes';
import {
  failJobSignal,
  jobFinishedSignal,
  jobRestartedSignal,
  jobStateQuery,
  type JobError,
  type JobInput,
  type JobState,
} from './definitions';
import { JobRun } from './job-state';
import { RUN_OWNS_RECORD, WEBHOOK_NOTIFIER } from './patches';
import { runPipeline, type PipelineContext } from './pipelines';
import { activitiesFor } from './routing';
import { WebhookForwarder } from './webhook-forwarder';
import { WebhookSender } from './webhook-sender';

const steps = activitiesFor();

const now = () => new Date().toISOString();

/**
 * One job, workflow id = job id. Holds status, progress, logs and error; answers `jobState`; runs the job type's
 * pipeline; writes the final record to the blob store before it reports a terminal status; hands its webhook events
 * to the job's notifier in order (progress throttled to one per second, never after the final event) and ends
 * without waiting for their delivery. A failed job fails the workflow run, so operators see it as Failed and
 * `restart` can start a new run under the same id at once; a restarted run writes its own record and reports itself
 * to its batch, so no other process writes a job's record while it runs. The state is `JobRun`'s (job-state.ts);
 * this function wires it to the handlers, the pipeline, the activities and the webhooks.
 */
export async function jobWorkflow(input: JobInput): Promise<{ status: string; error?: JobError }> {
  const job = new JobRun(input, now, resetTag());
  const scope = new CancellationScope();
  setHandler(jobStateQuery, () => job.state);
  setHandler(failJobSignal, ({ reason }) => {
    if (job.requestFail(reason)) scope.cancel();
  });
  const setStatusAttribute = () => upsertSearchAttributes([{ key: jobStatusAttribute, value: job.state.status }]);
  const webhooks = patched(WEBHOOK_NOTIFIER) ? new WebhookForwarder(input) : new WebhookSender(input, job.log);

  job.start();
  setStatusAttribute();
  if (input.run > 1 && patched(RUN_OWNS_RECORD)) {
    // The failed run's record is replaced by this run's, by this run: nothing else writes it after the start.
    await steps.writeJobRecord({ state: job.state });
    if (job.inBatch)
      await reportToBatch(input, {
        index: input.batchIndex!,
        status: 'processing',
        run: input.run,
        jobId: input.jobId,
      });
  }

  const ctx: PipelineContext = {
    input,
    progress: (step, percent, message) => webhooks.push(job.progress(step, percent, message)),
    log: job.log,
  };
  try {
    job.settle({ results: await scope.run(() => runPipeline(ctx)) });
  } catch (err) {
    job.settle({ error: err });
  }

  // The wrap-up runs whatever happened to the run: a cancel request must not leave the job `processing`.
  await CancellationScope.nonCancellable(async () => {
    const final = job.final();
    await steps.writeJobRecord({ state: final.state, finished: true });
    job.commit(final.state);
    setStatusAttribute();
    webhooks.push(final.event);
    // A first run its batch counts by its close reports nothing here (BATCH_COUNTS_COMPLETIONS).
    if (job.inBatch && !(input.reportsByCompletion && input.run === 1))
      await reportToBatch(input, { index: input.batchIndex!, status: job.state.status, run: input.run });
    // Delivery by the run itself (before the notifier) logs each attempt: those lines go into the record too.
    const logsBefore = job.state.logs.length;
    await webhooks.finish();
    if (job.state.logs.length !== logsBefore) await steps.writeJobRecord({ state: job.state });
    await condition(allHandlersFinished);
  });
  return job.result();
}

/**
 * A reset run (the Temporal UI's reset: a new run id under the run id its start event recorded) tags its events, whose
 * numbers repeat those the run it replaced sent. Only event payloads change with it, never a command.
 */
function resetTag(): string | undefined {
  const { runId, originalExecutionRunId } = workflowInfo();
  return originalExecutionRunId && runId !== originalExecutionRunId ? `reset-${runId.slice(0, 8)}` : undefined;
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
    await steps.notifyBatch({ batchId: input.batchId!, ...report });
  }
}
