import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { closeoutWorkflowId, type TaskQueues } from '../core/jobs/ids';
import type { Logger } from '../core/runtime/logger';
import { jobCloseoutWorkflow, type ClosedRunStatus } from '../workflows/closeout.workflow';
import { closedBatchQuery, closeOutBatchRun } from './batch-closeout';

const CLOSED: Record<string, ClosedRunStatus> = {
  TERMINATED: 'TERMINATED',
  TIMED_OUT: 'TIMED_OUT',
  CANCELLED: 'CANCELLED',
};
/** How far back the first sweep looks (a worker that was down misses nothing closed since). */
const FIRST_LOOKBACK_MS = 7 * 24 * 3600_000;
/** Later sweeps overlap the previous one by this much (visibility is eventually consistent). */
const OVERLAP_MS = 5 * 60_000;

export interface CloseoutSweeper {
  /** One sweep now; resolves with the number of closeouts started. */
  sweep(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Finds jobs of this worker's queue whose run closed without its own wrap-up (terminated or timed out from the
 * Temporal UI or CLI, where no workflow code runs; cancelled by older code) while their status still read
 * pending or processing, and starts one `jobCloseoutWorkflow` per such run. Several workers may sweep: the
 * closeout's workflow id (`closeout-<job>-<run>`) makes each run's closeout happen once. A run replaced by a newer
 * one under its id (a reset terminates the run it resets) is left alone: the newer run owns the job. Batches whose
 * run closed without writing their record are closed out too (worker/batch-closeout.ts).
 */
export function startCloseoutSweeper(opts: {
  client: Client;
  queues: TaskQueues;
  logger: Logger;
  intervalMs?: number;
}): CloseoutSweeper {
  const { client, queues, logger } = opts;
  let since = Date.now() - FIRST_LOOKBACK_MS;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> = Promise.resolve(0);

  async function sweepOnce(): Promise<number> {
    const started = Date.now();
    const query =
      `WorkflowType = 'jobWorkflow' AND TaskQueue = '${queues.io}' AND ExecutionStatus IN ('Terminated', 'TimedOut', 'Canceled') ` +
      `AND JobStatus IN ('pending', 'processing') AND CloseTime > '${new Date(since).toISOString()}'`;
    let count = 0;
    for await (const wf of client.workflow.list({ query })) {
      const status = CLOSED[wf.status.name];
      if (!status) continue;
      const latest = await client.workflow
        .getHandle(wf.workflowId)
        .describe()
        .catch(() => null);
      if (latest?.runId !== wf.runId) continue;
      try {
        await client.workflow.start(jobCloseoutWorkflow, {
          workflowId: closeoutWorkflowId(wf.workflowId, wf.runId),
          taskQueue: queues.io,
          args: [{ jobId: wf.workflowId, runId: wf.runId, status }],
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
        });
        count += 1;
        logger.info(
          { jobId: wf.workflowId, runId: wf.runId, status },
          'job run closed without its wrap-up: closing it out',
        );
      } catch (e) {
        if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
      }
    }
    let retry = false;
    for await (const wf of client.workflow.list({ query: closedBatchQuery(queues.io, since) })) {
      // One batch that cannot be closed out now (no worker answers its query yet) holds up none of the others.
      const closing = await closeOutBatchRun(client, queues, wf).catch((err: unknown) => {
        logger.warn({ err, batchId: wf.workflowId, runId: wf.runId }, 'batch closeout failed; trying again');
        retry = true;
        return false;
      });
      if (!closing) continue;
      count += 1;
      logger.info(
        { batchId: wf.workflowId, runId: wf.runId, status: wf.status.name },
        'batch run closed without its record: closing it out',
      );
    }
    // A batch to try again keeps the window where it was, so the next sweeps see it too.
    if (!retry) since = started - OVERLAP_MS;
    return count;
  }

  const sweep = (): Promise<number> => {
    running = running.catch(() => 0).then(sweepOnce);
    return running;
  };

  const loop = () => {
    if (stopped) return;
    sweep()
      .catch((err: unknown) => logger.warn({ err }, 'closeout sweep failed; trying again'))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, opts.intervalMs ?? 3000);
      });
  };
  loop();
  return {
    sweep,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running.catch(() => undefined);
    },
  };
}
