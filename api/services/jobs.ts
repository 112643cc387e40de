import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { AppError } from '../../core/errors';
import { removeJobBlobs } from '../../core/stores/job-removal';
import { jobSearchAttributes } from '../../core/runtime/search-attributes';
// Workflows are started by name (the worker registers each under its function's name): the API loads no workflow code.
import type { jobWorkflow } from '../../workflows/job.workflow';
import { failJobSignal, type JobInput, type JobState } from '../../workflows/definitions';
import { initialState, isTerminal, logsForRestart } from '../../workflows/job-state';
import { JobStarts } from './job-starts';
import { awaitEndedRecord, awaitRunClosed, awaitRunRecord } from './job-runs';

/**
 * Jobs on Temporal: one workflow per job (workflow id = job id). A finished job is read from its record in the
 * blob store; a live one from the workflow's query; a batch job that has not started from its pending record.
 * Split by operation: the reads (`JobReads`, job-reads.ts), the starts (`JobStarts`, job-starts.ts), and here the
 * operator's actions on a job: restart, cancel, delete (contract §15).
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

  /**
   * Fails a pending or processing job with `CANCELLED` (restartable, like any failed job): the job's `failJob`
   * signal, the path fail-all takes, which cancels the running work and writes the failed record in the run's own
   * wrap-up. Answers once the record shows the end (within moments; the state as it is after CANCEL_VISIBLE_MS).
   * 409 for a finished job, and for a batch job its batch has not started yet (it has no run to cancel: fail-all on
   * the batch fails it).
   */
  async cancel(jobId: string): Promise<JobState> {
    const s = await this.bareState(jobId, { results: false });
    if (!s) throw new AppError('JOB_NOT_FOUND', `No job with id ${jobId}.`, { job_id: jobId });
    if (isTerminal(s))
      throw new AppError(
        'INVALID_STATE',
        `Only a pending or processing job can be cancelled; this one is ${s.status}.`,
        {
          job_id: jobId,
          status: s.status,
        },
      );
    this.temporal.ensureReachable();
    try {
      await this.temporal.client.workflow
        .getHandle(jobId)
        .signal(failJobSignal, { reason: `Cancelled by request (POST /api/jobs/${jobId}/cancel).` });
    } catch (e) {
      if (!(e instanceof WorkflowNotFoundError)) throw e;
      throw new AppError(
        'INVALID_STATE',
        s.batch_id
          ? 'This job has not been started by its batch yet; fail-all on the batch fails the jobs it has not started.'
          : 'This job has no running workflow to cancel (its run is ending); read it again shortly.',
        { job_id: jobId, status: s.status, ...(s.batch_id ? { batch_id: s.batch_id } : {}) },
      );
    }
    return (await awaitEndedRecord((id) => this.readRecord(id, { results: false }), jobId, s.run ?? 1)) ?? s;
  }

  /**
   * Deletes a finished job (contract §15): Temporal is asked to delete every run of it (it does so in the background,
   * within a minute; until then a read finds a finished run without a record, which reads as no job: `bareState`),
   * then its blobs go (`removeJobBlobs`: cache entries, folder, upload, index entries, record last). 409 while it runs
   * (a restarted run too).
   */
  async remove(jobId: string): Promise<void> {
    const s = await this.bareState(jobId, { results: false });
    if (!s) throw new AppError('JOB_NOT_FOUND', `No job with id ${jobId}.`, { job_id: jobId });
    const running = (status: string) =>
      new AppError('INVALID_STATE', `A running job cannot be deleted; this one is ${status}. Cancel it first.`, {
        job_id: jobId,
        status,
      });
    if (!isTerminal(s)) throw running(s.status);
    this.temporal.ensureReachable();
    const { client, namespace } = this.temporal;
    const current = await client.workflow
      .getHandle(jobId)
      .describe()
      .catch((e: unknown) => {
        if (e instanceof WorkflowNotFoundError) return null;
        throw e;
      });
    // Its record says finished, its workflow runs: a restart has just started the next run.
    if (current?.status.name === 'RUNNING') throw running('pending');
    if (current) {
      // Every run of the job (a restarted job has several). The id matched the job-id pattern (bareState): the query
      // holds no text a client chose.
      const runs = new Set([current.runId]);
      for await (const w of client.workflow.list({ query: `WorkflowId = '${jobId}'` })) runs.add(w.runId);
      for (const runId of runs) {
        await client.workflowService
          .deleteWorkflowExecution({ namespace, workflowExecution: { workflowId: jobId, runId } })
          .catch((e: unknown) => {
            if ((e as { code?: number }).code !== 5) throw e; // NOT_FOUND: gone already
          });
      }
    }
    await removeJobBlobs(this.store, s);
  }
}
