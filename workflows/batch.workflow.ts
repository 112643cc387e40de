import {
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { bookkeeping, bookkeepingRemote } from './activity-options';
import {
  batchStateQuery,
  failAllUpdate,
  failJobSignal,
  jobFinishedSignal,
  jobInput as jobInputOf,
  jobRestartedSignal,
  jobSearchAttributes,
  jobStatusAttribute,
  STATUS_CODE,
  toggleActiveSignal,
  type BatchInput,
  type BatchState,
  type JobInput,
} from './definitions';
import { jobWorkflow } from './job.workflow';

const local = proxyLocalActivities<Activities>(bookkeeping);
const remote = proxyActivities<Activities>(bookkeepingRemote);

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
const MAX_REASON = 1000;
const HISTORY_LIMIT = 8000;

/**
 * A batch: starts its jobs as children, at most `window` at a time, in manifest order. Children are abandoned on
 * close and report their end with `jobFinished`, so counts stay exact across continue-as-new and for jobs
 * restarted after the batch finished (which reopen it). `toggleActive` pauses and resumes starting; `failAll`
 * fails every unfinished job and returns how many.
 */
export async function batchWorkflow(input: BatchInput): Promise<BatchState> {
  const n = input.jobCount;
  const statuses = (input.carry?.statuses ?? STATUS_CODE.pending.repeat(n)).split('');
  const running = new Map<number, string>(Object.entries(input.carry?.running ?? {}).map(([k, v]) => [Number(k), v]));
  const runs = new Map<number, number>(Object.entries(input.carry?.runs ?? {}).map(([k, v]) => [Number(k), v]));
  /** A report of run `run` of job `index` is stale when the batch already knows a newer run of that job. */
  const stale = (index: number, run: number | undefined) => run !== undefined && run < (runs.get(index) ?? 1);
  /** Never-started jobs failed by fail-all whose records still say pending. */
  const recordsToFail: number[] = [];
  let failReason = '';
  let next = input.carry?.next ?? 0;
  let active = input.carry?.active ?? true;
  let updatedAt = new Date().toISOString();
  const touch = () => {
    updatedAt = new Date().toISOString();
  };
  const count = (c: string) => statuses.reduce((a, s) => a + (s === c ? 1 : 0), 0);
  const allDone = () => count(STATUS_CODE.pending) === 0 && count(STATUS_CODE.processing) === 0;
  const state = (): BatchState => {
    const completed = count(STATUS_CODE.completed);
    const failed = count(STATUS_CODE.failed);
    const processing = count(STATUS_CODE.processing);
    const pending = count(STATUS_CODE.pending);
    return {
      batch_id: input.batchId,
      batch_name: input.batchName,
      status: completed + failed === n ? 'completed' : pending === n ? 'pending' : 'processing',
      active,
      created_at: input.createdAt,
      updated_at: updatedAt,
      job_count: n,
      completed_count: completed,
      failed_count: failed,
      processing_count: processing,
      pending_count: pending,
      statuses: statuses.join(''),
      ...(input.legacy ? { legacy: true } : {}),
    };
  };

  setHandler(batchStateQuery, state);
  setHandler(toggleActiveSignal, (arg) => {
    active = typeof arg?.active === 'boolean' ? arg.active : !active;
    touch();
  });
  setHandler(jobFinishedSignal, ({ index, status, run }) => {
    if (index < 0 || index >= n || stale(index, run)) return;
    statuses[index] = status === 'completed' ? STATUS_CODE.completed : STATUS_CODE.failed;
    running.delete(index);
    touch();
  });
  setHandler(jobRestartedSignal, ({ index, run, jobId }) => {
    if (index < 0 || index >= n || stale(index, run)) return;
    if (run !== undefined) {
      // The same run reported twice (a retried hand-over) changes nothing once it has finished.
      if (run === (runs.get(index) ?? 1) && statuses[index] !== STATUS_CODE.processing) return;
      runs.set(index, run);
    }
    statuses[index] = STATUS_CODE.processing;
    if (jobId) running.set(index, jobId);
    touch();
  });
  setHandler(
    failAllUpdate,
    async ({ reason }) => {
      const closesGaps = patched(FAIL_ALL_CLOSES_GAPS);
      const neverStarted: number[] = [];
      for (let i = closesGaps ? 0 : next; i < n; i++) if (statuses[i] === STATUS_CODE.pending) neverStarted.push(i);
      for (const i of neverStarted) statuses[i] = STATUS_CODE.failed;
      next = n;
      const toCancel = [...running.entries()];
      touch();
      if (closesGaps) {
        recordsToFail.push(...neverStarted);
        failReason = reason;
      } else if (neverStarted.length)
        await local.failPendingJobs({ manifestKey: input.manifestKey, indexes: neverStarted, reason });
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
      await condition(
        () => toCancel.every(([i]) => statuses[i] !== STATUS_CODE.processing),
        closesGaps ? FAIL_ALL_ANSWER_WITHIN : '5 minutes',
      );
      const cancelledFailed = toCancel.filter(([i]) => statuses[i] !== STATUS_CODE.completed).length;
      return { failed_count: neverStarted.length + cancelledFailed };
    },
    {
      validator: ({ reason }) => {
        if (typeof reason !== 'string' || reason.length === 0 || reason.length > MAX_REASON) {
          throw new Error(`fail-all needs a reason of 1 to ${MAX_REASON} characters`);
        }
      },
    },
  );

  const setAttributes = () => upsertSearchAttributes([{ key: jobStatusAttribute, value: state().status }]);
  setAttributes();

  for (;;) {
    await condition(
      () =>
        allDone() ||
        recordsToFail.length > 0 ||
        (active && next < n && running.size < input.window) ||
        workflowInfo().historyLength > (input.historyLimit ?? HISTORY_LIMIT),
    );
    if (recordsToFail.length) {
      // The records of jobs fail-all failed before they started: written here, in chunks with heartbeats, not in
      // the update (whose caller is answered meanwhile).
      await remote.failPendingJobs({
        manifestKey: input.manifestKey,
        indexes: recordsToFail.splice(0),
        reason: failReason,
      });
      continue;
    }
    if (allDone()) break;
    if (workflowInfo().historyLength > (input.historyLimit ?? HISTORY_LIMIT) || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof batchWorkflow>({
        ...input,
        carry: {
          statuses: statuses.join(''),
          next,
          active,
          running: Object.fromEntries(running),
          ...(runs.size ? { runs: Object.fromEntries(runs) } : {}),
        },
      });
    }
    if (!(active && next < n && running.size < input.window)) continue;
    const take = Math.min(input.window - running.size, n - next, SLICE);
    const offset = next;
    next += take;
    const specs = await local.loadManifestSlice({ manifestKey: input.manifestKey, offset, limit: take });
    const wasPending = statuses[0] !== undefined && offset === 0;
    await Promise.all(
      specs.map(async (spec, k) => {
        const index = offset + k;
        if (statuses[index] !== STATUS_CODE.pending) return; // failed by fail-all meanwhile
        statuses[index] = STATUS_CODE.processing;
        running.set(index, spec.job_id);
        const jobInput: JobInput = jobInputOf(spec.job_type, spec.parameters, {
          jobId: spec.job_id,
          batchId: input.batchId,
          batchIndex: index,
          createdAt: input.createdAt,
          run: 1,
          ...(input.userId ? { userId: input.userId } : {}),
          ...(spec.webhook ? { webhook: spec.webhook } : {}),
          ...(input.legacy ? { legacy: true } : {}),
          ...(input.webhookRetryScale !== undefined ? { webhookRetryScale: input.webhookRetryScale } : {}),
        });
        try {
          await startChild(jobWorkflow, {
            workflowId: spec.job_id,
            args: [jobInput],
            parentClosePolicy: ParentClosePolicy.ABANDON,
            workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
            typedSearchAttributes: jobSearchAttributes({
              jobType: spec.job_type,
              batchId: input.batchId,
              userId: input.userId,
            }),
            memo: { summary: `${spec.job_type} job ${index + 1}/${n} of batch ${input.batchName}` },
          });
        } catch (err) {
          // Already started (a replay after continue-as-new raced a start): it will report as usual.
          if ((err as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw err;
        }
      }),
    );
    touch();
    if (wasPending) setAttributes();
  }
  touch();
  const final = state();
  const { carry: _carry, ...recordInput } = input;
  void _carry;
  await remote.writeBatchRecord({
    state: final,
    input: recordInput,
    ...(runs.size ? { runs: Object.fromEntries(runs) } : {}),
  });
  setAttributes();
  await condition(allHandlersFinished);
  return final;
}
