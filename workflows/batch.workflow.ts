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
  setHandler(toggleActiveSignal, () => {
    active = !active;
    touch();
  });
  setHandler(jobFinishedSignal, ({ index, status }) => {
    if (index < 0 || index >= n) return;
    statuses[index] = status === 'completed' ? STATUS_CODE.completed : STATUS_CODE.failed;
    running.delete(index);
    touch();
  });
  setHandler(jobRestartedSignal, ({ index }) => {
    if (index < 0 || index >= n) return;
    statuses[index] = STATUS_CODE.processing;
    touch();
  });
  setHandler(failAllUpdate, async ({ reason }) => {
    const neverStarted: number[] = [];
    for (let i = next; i < n; i++) if (statuses[i] === STATUS_CODE.pending) neverStarted.push(i);
    for (const i of neverStarted) statuses[i] = STATUS_CODE.failed;
    next = n;
    const toCancel = [...running.entries()];
    touch();
    if (neverStarted.length) await local.failPendingJobs({ manifestKey: input.manifestKey, indexes: neverStarted, reason });
    await Promise.all(
      toCancel.map(([, jobId]) => getExternalWorkflowHandle(jobId).signal(failJobSignal, { reason }).catch(() => undefined)),
    );
    if (!patched(FAIL_ALL_COUNTS_OUTCOMES)) return { failed_count: neverStarted.length + toCancel.length };
    // A running job may finish on its own before the signal reaches it: count only the jobs that really failed.
    await condition(() => toCancel.every(([i]) => statuses[i] !== STATUS_CODE.processing), '5 minutes');
    const cancelledFailed = toCancel.filter(([i]) => statuses[i] === STATUS_CODE.failed).length;
    return { failed_count: neverStarted.length + cancelledFailed };
  });

  const setAttributes = () => upsertSearchAttributes([{ key: jobStatusAttribute, value: state().status }]);
  setAttributes();

  for (;;) {
    await condition(
      () => allDone() || (active && next < n && running.size < input.window) || workflowInfo().historyLength > (input.historyLimit ?? HISTORY_LIMIT),
    );
    if (allDone()) break;
    if (workflowInfo().historyLength > (input.historyLimit ?? HISTORY_LIMIT) || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof batchWorkflow>({
        ...input,
        carry: { statuses: statuses.join(''), next, active, running: Object.fromEntries(running) },
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
        const jobInput: JobInput = {
          jobId: spec.job_id,
          jobType: spec.job_type,
          parameters: spec.parameters,
          batchId: input.batchId,
          batchIndex: index,
          createdAt: input.createdAt,
          run: 1,
          ...(input.userId ? { userId: input.userId } : {}),
          ...(spec.webhook ? { webhook: spec.webhook } : {}),
          ...(input.legacy ? { legacy: true } : {}),
          ...(input.webhookRetryScale !== undefined ? { webhookRetryScale: input.webhookRetryScale } : {}),
        };
        try {
          await startChild(jobWorkflow, {
            workflowId: spec.job_id,
            args: [jobInput],
            parentClosePolicy: ParentClosePolicy.ABANDON,
            workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
            typedSearchAttributes: jobSearchAttributes({ jobType: spec.job_type, batchId: input.batchId, userId: input.userId }),
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
  await remote.writeBatchRecord({ state: final, input: recordInput });
  setAttributes();
  await condition(allHandlersFinished);
  return final;
}
