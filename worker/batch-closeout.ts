import { WorkflowExecutionAlreadyStartedError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { TaskQueues } from '../core/jobs/ids';
import { batchSearchAttributes } from '../core/runtime/search-attributes';
import { batchWorkflow } from '../workflows/batch.workflow';
import { batchCarryQuery, type BatchClosedStatus, type BatchInput } from '../workflows/definitions';

const CLOSED: Record<string, BatchClosedStatus> = {
  TERMINATED: 'TERMINATED',
  CANCELLED: 'CANCELLED',
  TIMED_OUT: 'TIMED_OUT',
  FAILED: 'FAILED',
};

/** Batch runs of `io` that closed without their own end (no record written), since `since`. */
export const closedBatchQuery = (io: string, since: number): string =>
  `WorkflowType = 'batchWorkflow' AND TaskQueue = '${io}' AND ExecutionStatus IN ('Terminated', 'TimedOut', 'Canceled', 'Failed') ` +
  `AND JobStatus IN ('pending', 'processing') AND CloseTime > '${new Date(since).toISOString()}'`;

/**
 * The closeout of a batch run that closed without writing its record (terminated or cancelled from the Temporal UI,
 * timed out, failed on its own error): unless a newer run of the batch exists (a reset's, a closeout's, a reopened
 * batch's: it owns the batch), a new run of the batch starts from the closed run's last state with `closing` set. It
 * fails the jobs that never started, cancels the running ones (`failJob`: the closed run abandoned them, and an
 * operator who stops a batch stops its work) and counts each by how it really ended, then writes the record: the
 * batch reads `completed` with its true counts and every job is failed or completed, so each can be restarted.
 * Answers whether it started one. Idempotent: a second sweep finds the newer run and does nothing.
 */
export async function closeOutBatchRun(
  client: Client,
  queues: TaskQueues,
  wf: WorkflowExecutionInfo,
): Promise<boolean> {
  const status = CLOSED[wf.status.name];
  if (!status) return false;
  const latest = await client.workflow.getHandle(wf.workflowId).describe();
  if (latest.runId !== wf.runId) return false;
  const closed = client.workflow.getHandle(wf.workflowId, wf.runId);
  const history = await closed.fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) throw new Error(`batch ${wf.workflowId} run ${wf.runId}: no input`);
  const input = defaultPayloadConverter.fromPayload<BatchInput>(payload);
  // A closeout run that failed on its own error is not started again and again (each would fail the same way).
  if (input.closing && status === 'FAILED') return false;
  // The last state, replayed by a worker (the closed run answers queries from its history).
  const carry = await closed.query(batchCarryQuery);
  try {
    await client.workflow.start(batchWorkflow, {
      workflowId: wf.workflowId,
      taskQueue: queues.io,
      args: [{ ...input, carry, closing: { status, runId: wf.runId } }],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      typedSearchAttributes: batchSearchAttributes({ batchId: input.batchId, userId: input.userId }),
      memo: { summary: `closeout of batch ${input.batchName} (run ${wf.runId} ${status.toLowerCase()})` },
    });
    return true;
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw e;
  }
}
