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
import { jobSearchAttributes, jobStatusAttribute } from '../core/runtime/search-attributes';
import {
  batchCarryQuery,
  batchStateQuery,
  failAllUpdate,
  failJobSignal,
  jobFinishedSignal,
  jobRestartedSignal,
  toggleActiveSignal,
  type BatchInput,
  type BatchState,
} from './definitions';
import { BatchLedger, checkFailAllReason, childJobInput, closingReason, recordInput } from './batch-state';
import { jobWorkflow } from './job.workflow';
import { BATCH_ADOPTS_STARTED, BATCH_COUNTS_COMPLETIONS, FAIL_ALL_AWAITS_STARTS } from './patches';
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
 * close. Each child's close (its completion event in this run's history) counts it; the run continues as new only
 * once every child it started has closed, so no close is lost, and a restarted job (a run the batch did not start)
 * reports with `jobRestarted`/`jobFinished`, also after the batch finished (which reopens it). Runs recorded before
 * `patched('batch-counts-completions')` counted every child by its `jobFinished` signal. `toggleActive` pauses and resumes starting; `failAll`
 * fails every unfinished job and returns how many. The counting is `BatchLedger`'s (batch-state.ts); this function
 * wires it to the handlers, the activities and the children.
 */
export async function batchWorkflow(input: BatchInput): Promise<BatchState> {
  const batch = new BatchLedger(input, now);
  const setAttributes = () => upsertSearchAttributes([{ key: jobStatusAttribute, value: batch.state().status }]);
  const tooLong = () => workflowInfo().historyLength > (input.historyLimit ?? HISTORY_LIMIT);

  setHandler(batchStateQuery, () => batch.state());
  setHandler(batchCarryQuery, () => batch.carry());
  // The starts of children in flight (markStarted done, the child's start not yet seen), by manifest index.
  const starting = new Map<number, Promise<void>>();
  setHandler(toggleActiveSignal, (arg) => batch.toggle(arg?.active));
  setHandler(jobFinishedSignal, (report) => batch.jobFinished(report));
  setHandler(jobRestartedSignal, (report) => batch.jobRestarted(report));
  setHandler(
    failAllUpdate,
    async ({ reason }) => {
      const closesGaps = patched(FAIL_ALL_CLOSES_GAPS);
      const awaitsStarts = patched(FAIL_ALL_AWAITS_STARTS);
      const { neverStarted, toCancel } = batch.failAll(reason, closesGaps);
      if (!closesGaps && neverStarted.length)
        await inProcess.failPendingJobs({ manifestKey: input.manifestKey, indexes: neverStarted, reason });
      const cancel = (jobId: string) =>
        getExternalWorkflowHandle(jobId)
          .signal(failJobSignal, { reason })
          .catch(() => undefined);
      // A job whose start is in flight exists once its start is seen: a signal sent before could miss it.
      if (awaitsStarts)
        await Promise.all(
          toCancel.map(async ([i, jobId]) => {
            await starting.get(i);
            await cancel(jobId);
          }),
        );
      else await Promise.all(toCancel.map(([, jobId]) => cancel(jobId)));
      if (!patched(FAIL_ALL_COUNTS_OUTCOMES)) return { failed_count: neverStarted.length + toCancel.length };
      // A running job may finish on its own before the signal reaches it: count only the jobs that really failed
      // (past the wait, one still running counts as failing: it has its failJob signal).
      await condition(() => batch.ended(toCancel), closesGaps ? FAIL_ALL_ANSWER_WITHIN : '5 minutes');
      return { failed_count: neverStarted.length + batch.notCompleted(toCancel) };
    },
    { validator: ({ reason }) => checkFailAllReason(reason) },
  );

  // Children of this run not yet closed: their close is their report (BATCH_COUNTS_COMPLETIONS).
  const byCompletion = patched(BATCH_COUNTS_COMPLETIONS);
  let open = 0;
  /**
   * Counts job `index`, which this run did not start, by how it ends (`awaitJobEnd`); `cancelWith`: first sends it
   * `failJob` with that reason.
   */
  const follow = (index: number, jobId: string, cancelWith?: string) => {
    open++;
    void (async () => {
      if (cancelWith)
        await getExternalWorkflowHandle(jobId)
          .signal(failJobSignal, { reason: cancelWith })
          .catch(() => undefined);
      const end = await steps.awaitJobEnd({ jobId }).catch(() => 'failed' as const);
      if (end === 'never-started') batch.neverStarted(index, cancelWith ?? 'The job never started.');
      else batch.jobFinished({ index, status: end });
    })().finally(() => open--);
  };
  if (input.closing) {
    // The closeout of a run that ended without its record (terminated, cancelled, timed out, failed: the worker's
    // sweeper starts this run with that run's last state): the jobs that never started fail, the running ones (left
    // running by the closed run: children are abandoned) are cancelled and counted by how they end, none starts.
    const reason = closingReason(input.closing.status);
    for (const [index, jobId] of batch.failAll(reason, true).toCancel) follow(index, jobId, reason);
  }
  setAttributes();
  for (;;) {
    await condition(() => batch.allDone() || batch.hasRecordsToFail() || batch.canStart() || tooLong());
    if (batch.hasRecordsToFail()) {
      // The records of jobs fail-all failed before they started: written here, in chunks with heartbeats, not in
      // the update (whose caller is answered meanwhile).
      await steps.failPendingJobs({ manifestKey: input.manifestKey, ...batch.takeRecordsToFail() });
      batch.recordsWritten();
      continue;
    }
    if (batch.allDone()) break;
    if (tooLong() || workflowInfo().continueAsNewSuggested) {
      if (open > 0) {
        // The next run would not see these children close: wait for them (records to fail first, if any come).
        await condition(() => open === 0 || batch.hasRecordsToFail());
        continue;
      }
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
          const start = startChild(jobWorkflow, {
            workflowId: spec.job_id,
            args: [childJobInput(input, spec, index, byCompletion)],
            parentClosePolicy: ParentClosePolicy.ABANDON,
            workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
            typedSearchAttributes: jobSearchAttributes({
              jobType: spec.job_type,
              batchId: input.batchId,
              userId: input.userId,
            }),
            memo: { summary: `${spec.job_type} job ${index + 1}/${batch.size} of batch ${input.batchName}` },
          });
          starting.set(
            index,
            start.then(
              () => undefined,
              () => undefined,
            ),
          );
          const child = await start.finally(() => starting.delete(index));
          if (byCompletion) {
            open++;
            // Completed: the job completed. Failed, cancelled, terminated or timed out: it failed (as its wrap-up or
            // its closeout also reports it).
            void child
              .result()
              .then(
                (r) => batch.jobFinished({ index, status: r.status === 'completed' ? 'completed' : 'failed', run: 1 }),
                () => batch.jobFinished({ index, status: 'failed', run: 1 }),
              )
              .finally(() => open--);
          }
        } catch (err) {
          // Already started (a reset replays the batch from before its starts; a continue-as-new raced a start).
          if ((err as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw err;
          // Its close never comes to this run: it is counted by its end (it reported nothing before the patch).
          if (byCompletion && patched(BATCH_ADOPTS_STARTED)) follow(index, spec.job_id);
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
