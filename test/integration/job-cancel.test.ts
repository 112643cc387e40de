import { expect } from 'chai';
import '../support/servers/stack';
import { Client, Connection } from '@temporalio/client';
import type { Stack } from '../support/servers/stack';
import { useLlmStack } from '../support/servers/llm-env';
import type { LlmServer } from '../support/servers/llm-server';
import { sharedDevServer } from '../support/servers/engines';
import { until } from '../support/jobs';
import { newJobId, taskQueues } from '../../core/jobs/ids';
import { jobSearchAttributes } from '../../core/runtime/search-attributes';
import type { JobInput } from '../../workflows/definitions';
import { jobWorkflow } from '../../workflows/job.workflow';
import { startWebhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver';

// An operator cancels, terminates or times out a job's workflow from the Temporal UI or CLI. Whatever ends the run,
// the job reads as failed with the code of how it ended, its failure webhook is sent, and restart runs it again.

describe('jobs ended from the Temporal UI', function () {
  this.timeout(120_000);
  let s: Stack;
  let llm: LlmServer;
  let hooks: WebhookReceiver;
  let client: Client;
  let connection: Connection;

  before(async () => {
    hooks = await startWebhookReceiver();
    connection = await Connection.connect({ address: (await sharedDevServer()).address });
    client = new Client({ connection });
  });
  after(async () => {
    await hooks?.close();
    await connection?.close();
  });
  // A model that thinks for a long time keeps the job running while the operator acts.
  useLlmStack(
    (stack, server) => {
      s = stack;
      llm = server;
    },
    { LLM_TIMEOUT_MS: '300000', CLOSEOUT_SWEEP_MS: '500' },
  );

  async function runningSummaryJob(tag: string): Promise<string> {
    llm.latency(600_000);
    const r = await s.call('POST', '/api/jobs/', {
      job_type: 'transformer',
      parameters: { operation: 'summarize', text: `Ein langer Text (${tag}).`, use_cache: false },
      webhook: { url: hooks.url, jobId: tag },
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const jobId: string = r.body.data.job_id;
    await until(async () => (llm.chatRequests().length > 0 ? true : undefined), 'the model call to start', 60_000);
    return jobId;
  }

  async function expectFailedAndRestartable(jobId: string, tag: string, code: string): Promise<void> {
    const job = await s.waitJob(jobId, 60_000);
    expect(job.status).to.equal('failed');
    expect(job.error.code).to.equal(code);
    await hooks.waitFor((reqs) => reqs.some((q) => q.json?.job?.id === tag && q.json?.phase === 'failed'), 60_000);
    const failed = hooks.requests.find((q) => q.json?.job?.id === tag && q.json?.phase === 'failed')!;
    expect(failed.json.error.code).to.equal(code);
    expect(failed.json.process.id).to.equal(jobId);

    llm.reset();
    const restart = await s.call('POST', `/api/event-job/${jobId}/restart`);
    expect(restart.status, JSON.stringify(restart.body)).to.equal(200);
    const again = await s.waitJob(jobId, 60_000);
    expect(again.status, JSON.stringify(again.error)).to.equal('completed');
    expect(again.results.summary ?? again.results.structured_data?.extracted_text).to.match(/^Echo: /);
  }

  it('a job cancelled with `temporal workflow cancel` reads as failed with CANCELLED, sends its webhook and restarts', async () => {
    const jobId = await runningSummaryJob('cancel-1');
    await client.workflow.getHandle(jobId).cancel();
    await expectFailedAndRestartable(jobId, 'cancel-1', 'CANCELLED');
  });

  it('a job terminated with `temporal workflow terminate` reads as failed with TERMINATED, sends its webhook and restarts', async () => {
    const jobId = await runningSummaryJob('terminate-1');
    await client.workflow.getHandle(jobId).terminate('operator test');
    await expectFailedAndRestartable(jobId, 'terminate-1', 'TERMINATED');
  });

  it('a job whose workflow run times out reads as failed with TIMED_OUT, sends its webhook and restarts', async () => {
    // Jobs get no run timeout from the API; an operator (or a client starting workflows itself) may set one.
    llm.latency(600_000);
    const jobId = newJobId();
    const input: JobInput = {
      jobId,
      jobType: 'transformer',
      parameters: { operation: 'summarize', text: 'Ein Text, der nie fertig wird.', use_cache: false },
      createdAt: new Date().toISOString(),
      run: 1,
      webhook: { url: hooks.url, jobId: 'timeout-1' },
    };
    await client.workflow.start(jobWorkflow, {
      workflowId: jobId,
      taskQueue: taskQueues(s.worker.config.TASK_QUEUE_PREFIX).io,
      args: [input],
      workflowRunTimeout: '3s',
      typedSearchAttributes: jobSearchAttributes({ jobType: 'transformer' }),
    });
    await expectFailedAndRestartable(jobId, 'timeout-1', 'TIMED_OUT');
  });

  it('a terminated job of a batch counts as failed, and the batch completes', async () => {
    llm.latency(600_000);
    const r = await s.call('POST', '/api/jobs/batch', {
      batch_name: 'terminated',
      jobs: [
        {
          job_type: 'transformer',
          parameters: { operation: 'summarize', text: 'Ein Text im Stapel.', use_cache: false },
        },
      ],
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const batchId: string = r.body.data.batch_id;
    await until(async () => (llm.chatRequests().length > 0 ? true : undefined), 'the model call to start', 60_000);
    const jobId: string = (await s.call('GET', `/api/jobs/batch/${batchId}`)).body.data.jobs[0].job_id;
    await client.workflow.getHandle(jobId).terminate('operator test');
    const batch = await until(
      async () => {
        const b = (await s.call('GET', `/api/jobs/batch/${batchId}`)).body.data;
        return b.status === 'completed' ? b : undefined;
      },
      'the batch to complete',
      60_000,
    );
    expect([batch.job_count, batch.failed_count, batch.completed_count]).to.deep.equal([1, 1, 0]);
    expect((await s.waitJob(jobId)).error.code).to.equal('TERMINATED');
  });
});
