import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { AppError } from '../../core/errors';
import { jobSearchAttributes } from '../../core/runtime/search-attributes';
// Workflows are started by name (the worker registers each under its function's name): the API loads no workflow code.
import type { jobWorkflow } from '../../workflows/job.workflow';
import type { JobInput, JobState } from '../../workflows/definitions';
import { initialState, logsForRestart } from '../../workflows/job-state';
import { JobStarts } from './job-starts';
import { awaitRunClosed, awaitRunRecord } from './job-runs';

/**
 * Jobs on Temporal: one workflow per job (workflow id = job id). A finished job is read from its record in the
 * blob store; a live one from the workflow's query; a batch job that has not started from its pending record.
 * Split by operation: the reads (`JobReads`, job-reads.ts), the starts (`JobStarts`, job-starts.ts), and here the
 * operator's action on a failed job.
 */
export class JobService extends JobStarts {
  /**
   * `failed` → `pending` under the same id; the new run reuses the steps already done. The API only starts the run:
   * the run writes its own record and reports itself to its batch (one writer per record), so no interleaving of a
   * fast-failing run with this request can leave a stale record or batch count behind. Answered once the run's
   * record shows it (normally within a workflow task; after {@link RESTART_VISIBLE_MS} without a worker), as the
   * job was accepted: `pending`.
   */
  async restart(jobId: string): Promise<JobState> {
    // The job's own logs (the webhook log stays apart, and is merged into reads of every run).
    const s = await this.bareState(jobId);
    if (!s) throw new AppError('JOB_NOT_FOUND', `No job with id ${jobId}.`, { job_id: jobId });
    if (s.status !== 'failed') {
      throw new AppError('INVALID_STATE', `Only a failed job can be restarted; this one is ${s.status}.`, {
        job_id: jobId,
        status: s.status,
      });
    }
    const prev = s.input;
    if (!prev)
      throw new AppError('INVALID_STATE', 'This job cannot be restarted: its input was not recorded.', {
        job_id: jobId,
      });
    const now = new Date().toISOString();
    const lastEvent = s.events.length ? s.events[s.events.length - 1].id : 0;
    const input: JobInput = {
      ...prev,
      run: (s.run ?? 1) + 1,
      priorLogs: logsForRestart(s.logs, now),
      priorEventId: lastEvent,
    };
    // A run closed out by the sweeper may still be handing its failure over; the failed run itself closes right
    // after its record (its webhooks are the notifier's): both are a matter of moments.
    const closedOutRun = typeof s.error?.details?.run_id === 'string' ? s.error.details.run_id : undefined;
    this.temporal.ensureReachable();
    await awaitRunClosed(this.temporal, jobId, s.run ?? 1, closedOutRun);
    try {
      await this.temporal.client.workflow.start<typeof jobWorkflow>('jobWorkflow', {
        workflowId: jobId,
        taskQueue: this.temporal.queues.io,
        args: [input],
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
        typedSearchAttributes: jobSearchAttributes({ jobType: s.job_type, batchId: s.batch_id, userId: s.user_id }),
        memo: { summary: `${s.job_type} job, run ${input.run}` },
      });
    } catch (e) {
      if (e instanceof WorkflowExecutionAlreadyStartedError) {
        throw new AppError('INVALID_STATE', 'The job is already running again.', { job_id: jobId });
      }
      throw e;
    }
    // The answer is the job as accepted (`pending`); reads after it see the new run's own record.
    await awaitRunRecord((id) => this.readRecord(id, { results: false }), jobId, input.run);
    return initialState(input, now, 'Restarted; waiting to be processed');
  }
}
