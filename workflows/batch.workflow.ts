import {
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  patched,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import { jobSearchAttributes, jobStatusAttribute } from '../core/search-attributes';
import {
  batchStateQuery,
  failAllUpdate,
  failJobSignal,
  jobFinishedSignal,
  jobRestartedSignal,
  toggleActiveSignal,
  type BatchInput,
  type BatchState,
} from './definitions';
import { BatchLedger, checkFailAllReason, childJobInput, recordInput } from './batch-state';
import { jobWorkflow } from './job.workflow';
import { activitiesFor } from './routing';

const steps = activitiesFor();
/** Runs recorded before fail-all left the records to the main loop wrote them in-process from the update. */
const inProcess = activitiesFor({ local: true });

const SLICE = 50;
/** Patch id: fail-all answers after the cancelled jobs report, with the number that really failed. */
const FAIL_ALL_COUNTS_OUTCOMES = 'fail-all-counts-outcomes';
/**
 * Patch id: fail-all also fails the jobs of a manifest slice being loaded when it arrives (every job still pending,
 * not only those past `next`), answers within {@link FAIL_ALL_ANSWER_WITHIN}, and leaves the rewrite of the
 * never-started jobs' records to the main loop (a heartbeating activity), so the caller is not held by it.
 */
const FAIL_ALL_CLOSES_GAPS = 'fail-all-closes-gaps';
const FAIL_ALL_ANSWER_WITHIN = '10 seconds';
const HISTORY_LIMIT = 8000;

const now = () => new Date().toISOString();

/**
 * A batch: starts its jobs as children, at most `window` at a time, in manifest order. Children are abandoned on
 * close and report their end with `jobFinished`, so counts stay exact across continue-as-new and for jobs
 * restarted after the batch finished (which reopen it). `toggleActive` pauses and resumes starting; `failAll`
 * fails every unfinished job and returns how many. The counting is `BatchLedger`'s (batch-state.ts); this function
 * wires it to the handlers, the activities and the children.
 */
export async function batchWorkflow(input: BatchInput): Promise<BatchState> {
  const batch = new BatchLedger(input, now);
  const setAttributes = () => upsertSearchAttributes([{ key: jobStatusAttribute, value: batch.state().status }]);
  const tooLong = () => workflowInfo().historyLength > (input.historyLimit ?? HISTORY_LIMIT);

  setHandler(batchStateQuery, () => batch.state());
  setHandler(toggleActiveSignal, (arg) => batch.toggle(arg?.active));
  setHandler(jobFinishedSignal, (report) => batch.jobFinished(report));
  setHandler(jobRestartedSignal, (report) => batch.jobRestarted(report));
  setHandler(
    failAllUpdate,
    async ({ reason }) => {
      const closesGaps = patched(FAIL_ALL_CLOSES_GAPS);
      const { neverStarted, toCancel } = batch.failAll(reason, closesGaps);
      if (!closesGaps && neverStarted.length)
        await inProcess.failPendingJobs({ manifestKey: input.manifestKey, indexes: neverStarted, reason });
      await Promise.all(
        toCancel.map(([, jobId]) =>
          getExternalWorkflowHandle(jobId)
            .signal(failJobSignal, { reason })
            .catch(() => undefined),
        ),
      );
      if (!patched(FAIL_ALL_COUNTS_OUTCOMES)) return { failed_count: neverStarted.length + toCancel.length };
      // A running job may finish on its own before the signal reaches it: count only the jobs that really failed
      // (past the wait, one still running counts as failing: it has its failJob signal).
      await condition(() => batch.ended(toCancel), closesGaps ? FAIL_ALL_ANSWER_WITHIN : '5 minutes');
      return { failed_count: neverStarted.length + batch.notCompleted(toCancel) };
    },
    { validator: ({ reason }) => checkFailAllReason(reason) },
  );

  setAttributes();
  for (;;) {
    await condition(() => batch.allDone() || batch.hasRecordsToFail() || batch.canStart() || tooLong());
    if (batch.hasRecordsToFail()) {
      // The records of jobs fail-all failed before they started: written here, in chunks with heartbeats, not in
      // the update (whose caller is answered meanwhile).
      await steps.failPendingJobs({ manifestKey: input.manifestKey, ...batch.takeRecordsToFail() });
      continue;
    }
    if (batch.allDone()) break;
    if (tooLong() || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof batchWorkflow>({ ...input, carry: batch.carry() });
    }
    if (!batch.canStart()) continue;
    const { offset, take } = batch.nextSlice(SLICE);
    const specs = await steps.loadManifestSlice({ manifestKey: input.manifestKey, offset, limit: take });
    await Promise.all(
      specs.map(async (spec, k) => {
        const index = offset + k;
        if (!batch.markStarted(index, spec.job_id)) return; // failed by fail-all meanwhile
        try {
          await startChild(jobWorkflow, {
            workflowId: spec.job_id,
            args: [childJobInput(input, spec, index)],
            parentClosePolicy: ParentClosePolicy.ABANDON,
            workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
            typedSearchAttributes: jobSearchAttributes({
              jobType: spec.job_type,
              batchId: input.batchId,
              userId: input.userId,
            }),
            memo: { summary: `${spec.job_type} job ${index + 1}/${batch.size} of batch ${input.batchName}` },
          });
        } catch (err) {
          // Already started (a replay after continue-as-new raced a start): it will report as usual.
          if ((err as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw err;
        }
      }),
    );
    batch.touch();
    // The first slice started: the batch is no longer pending.
    if (offset === 0 && batch.size > 0) setAttributes();
  }
  batch.touch();
  const final = batch.state();
  await steps.writeBatchRecord({ state: final, input: recordInput(input), ...batch.restartedRuns() });
  setAttributes();
  await condition(allHandlersFinished);
  return final;
}
