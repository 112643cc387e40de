import { BlobNotFoundError, readBlobJson, writeBlobJson } from '../core/stores/blob-store';
import { batchRecordKey, jobRecordKey } from '../core/stores/records';
import { dropStaleJobEntries, indexState, putJobEntry } from '../core/stores/job-index';
import { storedResultsRef } from '../core/results/job-results';
import { countJobFinished } from '../core/runtime/metrics';
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import {
  jobFinishedSignal,
  jobRestartedSignal,
  jobStateQuery,
  type BatchInput,
  type BatchState,
  type JobInput,
  type JobState,
} from '../workflows/definitions';
import type { ActivityDeps, BatchReport } from './deps';

const notFoundAsNull = (e: unknown): null => {
  if (e instanceof BlobNotFoundError) return null;
  throw e;
};

export function createJobActivities(deps: ActivityDeps) {
  const { store } = deps;
  return {
    /**
     * Writes the job's record: the source of truth once a job is finished. It points at the results the pipeline
     * stored (`results_ref`) instead of embedding them.
     * `finished` marks the write that ends a run (not the later rewrite with webhook log lines): it counts the job
     * in `docproc_jobs_finished_total`. A write of an older run than the record's is dropped. The job's entry in the
     * job index (core/stores/job-index.ts) follows its status: written before the record, so a listing is never
     * behind a record a reader sees.
     */
    async writeJobRecord({ state, finished }: { state: JobState; finished?: boolean }): Promise<void> {
      // A run never overwrites a newer run's record (a late write of a replaced run is dropped).
      const current = await readBlobJson<JobState>(store, jobRecordKey(state.job_id)).catch(notFoundAsNull);
      if (current && (current.run ?? 1) > (state.run ?? 1)) return;
      if (finished && (state.status === 'completed' || state.status === 'failed'))
        countJobFinished(state.job_type, state.status);
      // A job's uploaded input stays as long as the job can be restarted: retention removes it with the job's outputs
      // (worker/retention-sweeper.ts), never the end of a run.
      const ref = state.status === 'completed' ? await storedResultsRef(store, state.job_id) : null;
      const reindex = !current || indexState(current.status) !== indexState(state.status);
      if (reindex) await putJobEntry(store, state);
      await Promise.all([
        writeBlobJson(store, jobRecordKey(state.job_id), ref ? { ...state, results: null, results_ref: ref } : state),
        reindex ? dropStaleJobEntries(store, state) : undefined,
      ]);
    },

    /**
     * The last state of a job's closed run (terminated or timed out: its own wrap-up never ran), read by a query
     * (a worker replays the run's history), or null when the job was wrapped up already or has run again since. A
     * run that closed before its first workflow task answers no query: then its input, from the start event.
     */
    async readJobRun({
      jobId,
      runId,
    }: {
      jobId: string;
      runId: string;
    }): Promise<JobState | { input: JobInput } | null> {
      const client = deps.temporalClient;
      if (!client) throw new Error('readJobRun needs a Temporal client');
      // A run replaced by a newer one under the job's id (a reset: the old run is terminated as the new one starts
      // from its history) is not closed out: the newer run owns the record and its webhooks.
      const latest = await client.workflow.getHandle(jobId).describe();
      if (latest.runId !== runId) return null;
      const rec = await readBlobJson<JobState>(store, jobRecordKey(jobId)).catch(notFoundAsNull);
      const handle = client.workflow.getHandle(jobId, runId);
      const last = await handle.query(jobStateQuery).catch(async () => {
        const history = await handle.fetchHistory();
        const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
        if (!payload) throw new Error(`job ${jobId} run ${runId}: no state and no input`);
        return { input: defaultPayloadConverter.fromPayload<JobInput>(payload) };
      });
      const run = 'input' in last && !('job_id' in last) ? last.input.run : (last as JobState).run;
      const done = (s: { status?: string }) => s.status === 'completed' || s.status === 'failed';
      if (
        done(last as JobState) ||
        (rec && ((rec.run ?? 1) > (run ?? 1) || ((rec.run ?? 1) === (run ?? 1) && done(rec))))
      )
        return null;
      return last;
    },

    /**
     * Waits until job `jobId` has ended and answers how: its record's terminal status (a run that closed without its
     * wrap-up, whose closeout has not written it yet: `completed` if the run completed, else `failed`), or
     * `never-started` when no workflow of the job exists (its start never happened). Used by a batch for jobs it did not
     * start in this run (a closeout's running jobs, the already started jobs of a reset batch). Polls every second and
     * heartbeats, so a cancel or a lost worker ends the wait.
     */
    async awaitJobEnd({ jobId }: { jobId: string }): Promise<'completed' | 'failed' | 'never-started'> {
      const client = deps.temporalClient;
      if (!client) throw new Error('awaitJobEnd needs a Temporal client');
      const handle = client.workflow.getHandle(jobId);
      for (let missing = 0; ;) {
        const d = await handle.describe().catch((e: unknown) => {
          if (e instanceof WorkflowNotFoundError) return null;
          throw e;
        });
        const rec = await readBlobJson<JobState>(store, jobRecordKey(jobId)).catch(notFoundAsNull);
        const ended = rec?.status === 'completed' || rec?.status === 'failed' ? rec.status : undefined;
        if (!d) {
          // A start in flight when its batch closed shows within moments, or never.
          if (ended) return ended;
          if (++missing >= 5) return 'never-started';
        } else if (d.status.name !== 'RUNNING') {
          return ended ?? (d.status.name === 'COMPLETED' ? 'completed' : 'failed');
        }
        Context.current().heartbeat();
        await Context.current().sleep(1000);
      }
    },

    /**
     * Tells a batch that one of its jobs finished when the batch workflow is closed (a job restarted after its
     * batch completed): the batch is started again from its record, with the signal.
     */
    async notifyBatch({ batchId, ...report }: { batchId: string } & BatchReport): Promise<void> {
      const client = deps.temporalClient;
      if (!client) throw new Error('notifyBatch needs a Temporal client');
      const handle = client.workflow.getHandle(batchId);
      try {
        if (report.status === 'processing')
          await handle.signal(jobRestartedSignal, { index: report.index, run: report.run, jobId: report.jobId });
        else await handle.signal(jobFinishedSignal, { index: report.index, status: report.status, run: report.run });
        return;
      } catch (e) {
        if ((e as Error).name !== 'WorkflowNotFoundError') throw e;
      }
      const rec = await readBlobJson<BatchState & { input: Omit<BatchInput, 'carry'>; runs?: Record<number, number> }>(
        store,
        batchRecordKey(batchId),
      );
      if (!deps.reopenBatch) throw new Error('notifyBatch needs reopenBatch');
      const carry = {
        statuses: rec.statuses,
        next: rec.job_count,
        active: rec.active,
        ...(rec.runs ? { runs: rec.runs } : {}),
      };
      await deps.reopenBatch({ ...rec.input, carry }, report);
    },
  };
}
