import { expect } from 'chai';
import '../support/servers/stack';
import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import type { Stack } from '../support/servers/stack';
import { useLlmStack } from '../support/servers/llm-env';
import type { LlmServer } from '../support/servers/llm-server';
import { until } from '../support/jobs';
import { BatchService } from '../../api/services/batches';

// A batch run that ends without writing its record by its own end, not an operator's action: its
// workflowExecutionTimeout passes (worker/batch-closeout.ts). The sweeper closes it
// out like a terminated or cancelled one (operator-actions.test.ts): never-started jobs failed, running ones
// cancelled, every job restartable, the batch `completed` with its true counts. The batches are created by the API's
// own BatchService; its Temporal client starts them with the SDK's client interceptor adding what the case needs.

const summarize = (tag: string) => ({
  jobType: 'transformer' as const,
  parameters: { operation: 'summarize' as const, text: `Ein Text im Stapel (${tag}).`, use_cache: false },
});

describe('a batch run that times out ends in a true record', function () {
  this.timeout(180_000);
  let s: Stack;
  let llm: LlmServer;
  useLlmStack(
    (stack, server) => {
      s = stack;
      llm = server;
    },
    { LLM_TIMEOUT_MS: '300000', CLOSEOUT_SWEEP_MS: '500', BATCH_WINDOW: '2' },
  );

  const get = async (path: string) => {
    const r = await s.call('GET', path);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body.data;
  };

  /** The API's BatchService, its batches started through a client with `start` intercepted. */
  function batchesWith(start: NonNullable<WorkflowClientInterceptor['start']>): BatchService {
    const gateway = s.api.temporal;
    const client = new Client({
      connection: gateway.connection,
      namespace: gateway.namespace,
      interceptors: { workflow: [{ start }] },
    });
    return new BatchService({ ...gateway, client }, s.worker.store, 2);
  }

  async function settledBatch(batchId: string, ids: string[], within = 60_000): Promise<any> {
    return until(
      async () => {
        const batch = await get(`/api/jobs/batch/${batchId}`);
        if (batch.status !== 'completed') return undefined;
        const jobs = await Promise.all(ids.map((id) => get(`/api/jobs/${id}`)));
        return jobs.every((j) => j.status === 'completed' || j.status === 'failed') ? batch : undefined;
      },
      `batch ${batchId} and its jobs to end`,
      within,
      200,
    );
  }

  async function restartAndComplete(ids: string[]): Promise<void> {
    llm.reset();
    for (const id of ids) {
      const r = await s.call('POST', `/api/event-job/${id}/restart`);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
    }
    for (const id of ids) {
      const job = await s.waitJob(id, 60_000);
      expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    }
  }

  it('a batch whose workflowExecutionTimeout passes while its jobs run ends completed with every job failed, and they restart', async () => {
    llm.latency(600_000, 3);
    const batches = batchesWith((input, next) =>
      next({ ...input, options: { ...input.options, workflowExecutionTimeout: msToTs('8s') } }),
    );
    const { state, jobs } = await batches.create({
      batchName: 'timed-out batch',
      jobs: [0, 1, 2].map((i) => summarize(`timed out ${i}`)),
    });
    const ids = jobs.map((j) => j.job_id);
    await until(async () => (llm.chatRequests().length >= 2 ? true : undefined), 'two model calls to start', 60_000);
    const batch = await settledBatch(state.batch_id, ids);
    expect(batch).to.include({ status: 'completed', job_count: 3, completed_count: 0, failed_count: 3 });
    // The first run is the one that timed out; the record was written by the closeout run after it.
    const runs: string[] = [];
    for await (const wf of s.api.temporal.client.workflow.list({ query: `WorkflowId = '${state.batch_id}'` }))
      runs.push(wf.status.name);
    expect(runs).to.include('TIMED_OUT');
    for (const id of ids) {
      const j = await get(`/api/jobs/${id}`);
      expect(j.status, id).to.equal('failed');
      expect(j.error.code, id).to.equal('CANCELLED');
      expect(j.error.message, id).to.match(/past its workflow timeout/);
    }
    // A running one and the one that never started: each runs alone, and the closed batch's counts follow.
    await restartAndComplete([ids[0], ids[2]]);
    const after = await until(
      async () => {
        const b = await get(`/api/jobs/batch/${state.batch_id}`);
        return b.status === 'completed' && b.completed_count === 2 ? b : undefined;
      },
      'the batch to count the restarted jobs',
      60_000,
    );
    expect(after).to.include({ job_count: 3, completed_count: 2, failed_count: 1 });
  });
});
