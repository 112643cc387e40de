import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import '../support/servers/stack';
import type { Client } from '@temporalio/client';
import type { Stack } from '../support/servers/stack';
import { useLlmStack } from '../support/servers/llm-env';
import type { LlmServer } from '../support/servers/llm-server';
import { sleep, transformerJob, until } from '../support/jobs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver';
import { closeoutWorkflowId } from '../../core/jobs/ids';
import { failAllUpdate } from '../../workflows/definitions';
import { resetToFirstTask } from '../support/workflows/operator';

// What an operator does to a job or a batch in the Temporal UI (terminate, cancel, reset: the client's own calls),
// on the real dev server: each ends in a record that tells the truth, one webhook per real outcome with distinct ids,
// and jobs that restart and complete.

const summarize = (tag: string) => ({
  job_type: 'transformer',
  parameters: { operation: 'summarize', text: `Ein Text im Stapel (${tag}).`, use_cache: false },
});

describe('operator actions from the Temporal UI end in a true record', function () {
  this.timeout(180_000);
  let s: Stack;
  let llm: LlmServer;
  let hooks: WebhookReceiver;
  let client: Client;

  before(async () => {
    hooks = await startWebhookReceiver();
  });
  after(async () => {
    await hooks?.close();
  });
  // A model that thinks for a long time keeps jobs running while the operator acts; two jobs run at once.
  useLlmStack(
    (stack, server) => {
      s = stack;
      llm = server;
      client = stack.api.temporal.client;
    },
    { LLM_TIMEOUT_MS: '300000', CLOSEOUT_SWEEP_MS: '500', BATCH_WINDOW: '2' },
  );

  const get = async (path: string) => {
    const r = await s.call('GET', path);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body.data;
  };

  /** A batch of `n` model jobs, the first two running (their model calls held), the others not started. */
  async function runningBatch(n: number, tag: string): Promise<{ batchId: string; ids: string[] }> {
    llm.latency(600_000, n);
    const r = await s.call('POST', '/api/jobs/batch', {
      batch_name: tag,
      jobs: Array.from({ length: n }, (_, i) => summarize(`${tag} ${i}`)),
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const batchId: string = r.body.data.batch_id;
    const ids: string[] = r.body.data.batch.jobs.map((j: { job_id: string }) => j.job_id);
    await until(async () => (llm.chatRequests().length >= 2 ? true : undefined), 'two model calls to start', 60_000);
    return { batchId, ids };
  }

  /** Waits (bounded) until the batch and every one of its jobs read terminal; answers the batch. */
  async function settledBatch(batchId: string, ids: string[], within = 60_000): Promise<any> {
    const t0 = Date.now();
    const b = await until(
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
    expect(Date.now() - t0).to.be.below(within);
    return b;
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

  it('a batch terminated while its jobs run ends completed with every job failed, and its jobs restart and complete', async () => {
    const { batchId, ids } = await runningBatch(4, 'terminated batch');
    await client.workflow.getHandle(batchId).terminate('operator test');
    const batch = await settledBatch(batchId, ids);
    expect(batch).to.include({ status: 'completed', job_count: 4, completed_count: 0, failed_count: 4 });
    for (const id of ids) {
      const j = await get(`/api/jobs/${id}`);
      expect(j.status, id).to.equal('failed');
      expect(j.error.code).to.equal('CANCELLED');
      expect(j.error.message).to.match(/batch was terminated/);
    }
    // A running one and one that never started: each runs alone, and the closed batch's counts follow.
    await restartAndComplete([ids[0], ids[3]]);
    const after = await until(
      async () => {
        const b = await get(`/api/jobs/batch/${batchId}`);
        return b.status === 'completed' && b.completed_count === 2 ? b : undefined;
      },
      'the batch to count the restarted jobs',
      60_000,
    );
    expect(after).to.include({ job_count: 4, completed_count: 2, failed_count: 2 });
    expect(after.jobs.map((j: { status: string }) => j.status)).to.deep.equal([
      'completed',
      'failed',
      'failed',
      'completed',
    ]);
  });

  it('a batch cancelled while its jobs run ends completed with every job failed, and its jobs restart and complete', async () => {
    const { batchId, ids } = await runningBatch(3, 'cancelled batch');
    await client.workflow.getHandle(batchId).cancel();
    const batch = await settledBatch(batchId, ids);
    expect(batch).to.include({ status: 'completed', job_count: 3, completed_count: 0, failed_count: 3 });
    for (const id of ids) expect((await get(`/api/jobs/${id}`)).error.code, id).to.equal('CANCELLED');
    await restartAndComplete([ids[1], ids[2]]);
  });

  it('a job of a batch terminated or cancelled from the UI counts as failed, and the batch goes on with the rest', async () => {
    const { batchId, ids } = await runningBatch(3, 'job actions');
    await client.workflow.getHandle(ids[0]).terminate('operator test');
    await client.workflow.getHandle(ids[1]).cancel();
    // The third job starts in the freed window; its model answers at once.
    llm.reset();
    const batch = await settledBatch(batchId, ids);
    expect(batch).to.include({ status: 'completed', completed_count: 1, failed_count: 2 });
    const codes = await Promise.all(ids.map(async (id) => (await get(`/api/jobs/${id}`)).error?.code ?? null));
    expect(codes).to.deep.equal(['TERMINATED', 'CANCELLED', null]);
    await restartAndComplete([ids[0], ids[1]]);
    const after = await until(
      async () => {
        const b = await get(`/api/jobs/batch/${batchId}`);
        return b.completed_count === 3 ? b : undefined;
      },
      'the batch to count the restarted jobs',
      60_000,
    );
    expect(after).to.include({ status: 'completed', failed_count: 0 });
  });

  /** Resets a workflow's current run to its first workflow task (the UI's reset). */
  const reset = (workflowId: string) => resetToFirstTask(client, s.worker.config.TEMPORAL_NAMESPACE, workflowId);

  const hooksOf = (tag: string) => hooks.requests.filter((q) => q.json?.job?.id === tag);

  it('a job reset while it runs completes in its new run: no closeout, no failure webhook, distinct webhook ids', async () => {
    llm.latency(600_000);
    const tag = `reset-running-${randomUUID().slice(0, 8)}`;
    const r = await s.call('POST', '/api/jobs/', { ...summarize(tag), webhook: { url: hooks.url, jobId: tag } });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const jobId: string = r.body.data.job_id;
    await until(async () => (llm.chatRequests().length > 0 ? true : undefined), 'the model call to start', 60_000);
    llm.reset();
    const { oldRunId } = await reset(jobId);
    const job = await s.waitJob(jobId, 60_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    await hooks.waitFor(() => hooksOf(tag).some((q) => q.json.phase === 'completed'), 60_000);
    // Several sweeps (every 500 ms) have seen the reset run's terminated predecessor meanwhile.
    await sleep(4000);
    expect(
      hooksOf(tag).map((q) => q.json.phase),
      'phases sent',
    ).to.not.include('failed');
    expect((await get(`/api/jobs/${jobId}`)).status).to.equal('completed');
    const closeout = await client.workflow
      .getHandle(closeoutWorkflowId(jobId, oldRunId))
      .describe()
      .then(
        () => true,
        () => false,
      );
    expect(closeout, 'a closeout of the reset run was started').to.equal(false);
    // One id, one event: every request of an id (its retries) carries the same event.
    const byId = new Map<string, string>();
    for (const q of hooksOf(tag)) {
      const id = String(q.headers['x-webhook-id']);
      const event = JSON.stringify([q.json.phase, q.json.progress, q.json.message]);
      expect(byId.get(id) ?? event, `two events sent as ${id}`).to.equal(event);
      byId.set(id, event);
    }
  });

  it('a job reset after it completed completes again, with a completion webhook of its own id and no failure', async () => {
    const tag = `reset-done-${randomUUID().slice(0, 8)}`;
    const r = await s.call('POST', '/api/jobs/', {
      ...transformerJob('<p>reset me</p>'),
      webhook: { url: hooks.url, jobId: tag },
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const jobId: string = r.body.data.job_id;
    expect((await s.waitJob(jobId)).status).to.equal('completed');
    await hooks.waitFor(() => hooksOf(tag).some((q) => q.json.phase === 'completed'), 60_000);
    const { newRunId } = await reset(jobId);
    await client.workflow.getHandle(jobId, newRunId).result();
    await hooks.waitFor(() => hooksOf(tag).filter((q) => q.json.phase === 'completed').length >= 2, 60_000);
    await sleep(2000);
    const completions = hooksOf(tag).filter((q) => q.json.phase === 'completed');
    expect(completions).to.have.length(2);
    expect(completions[0].headers['x-webhook-id']).to.not.equal(completions[1].headers['x-webhook-id']);
    expect(hooksOf(tag).map((q) => q.json.phase)).to.not.include('failed');
    expect((await get(`/api/jobs/${jobId}`)).status).to.equal('completed');
  });

  it('a batch reset after it completed completes again with its true counts', async () => {
    const r = await s.call('POST', '/api/jobs/batch', {
      batch_name: 'reset done',
      jobs: [transformerJob('<p>a</p>'), transformerJob('<p>b</p>'), transformerJob('<p>c</p>')],
    });
    expect(r.status).to.equal(200);
    const batchId: string = r.body.data.batch_id;
    const ids: string[] = r.body.data.batch.jobs.map((j: { job_id: string }) => j.job_id);
    expect((await settledBatch(batchId, ids)).completed_count).to.equal(3);
    const { newRunId } = await reset(batchId);
    const final = (await Promise.race([
      client.workflow.getHandle(batchId, newRunId).result(),
      sleep(60_000).then(() => ({ status: 'still running after 60 s' })),
    ])) as { status: string; completed_count?: number };
    expect(final).to.include({ status: 'completed', completed_count: 3 });
    expect(await get(`/api/jobs/batch/${batchId}`)).to.include({ status: 'completed', completed_count: 3 });
  });

  it('a batch reset while its jobs run completes with its true counts once they end', async () => {
    const { batchId, ids } = await runningBatch(3, 'reset running batch');
    await reset(batchId);
    // The held model calls go on in the jobs the first run started; new calls answer at once.
    llm.reset();
    await client.workflow.getHandle(ids[0]).cancel();
    await client.workflow.getHandle(ids[1]).cancel();
    const batch = await settledBatch(batchId, ids);
    expect(batch).to.include({ status: 'completed', job_count: 3, completed_count: 1, failed_count: 2 });
  });

  it('a batch reset to its last workflow task while its jobs run completes with its true counts', async () => {
    const { batchId, ids } = await runningBatch(3, 'reset late batch');
    const history = await client.workflow.getHandle(batchId).fetchHistory();
    const last = history.events!.filter((x) => x.workflowTaskCompletedEventAttributes).at(-1)!.eventId!;
    const { runId } = await client.workflow.getHandle(batchId).describe();
    await client.workflowService.resetWorkflowExecution({
      namespace: s.worker.config.TEMPORAL_NAMESPACE,
      workflowExecution: { workflowId: batchId, runId },
      reason: 'operator test',
      workflowTaskFinishEventId: last,
      requestId: randomUUID(),
    });
    llm.reset();
    await client.workflow.getHandle(ids[0]).cancel();
    await client.workflow.getHandle(ids[1]).cancel();
    const batch = await settledBatch(batchId, ids);
    expect(batch).to.include({ status: 'completed', job_count: 3, completed_count: 1, failed_count: 2 });
  });

  it('a job of a batch reset while it runs is counted once, by its new run', async () => {
    const { batchId, ids } = await runningBatch(2, 'reset job of batch');
    llm.reset();
    await reset(ids[0]);
    await client.workflow.getHandle(ids[1]).cancel();
    const batch = await settledBatch(batchId, ids);
    expect(batch).to.include({ status: 'completed', job_count: 2, completed_count: 1, failed_count: 1 });
    expect((await get(`/api/jobs/${ids[0]}`)).status).to.equal('completed');
  });

  describe('with a window wide enough to start a whole batch at once', () => {
    let w: Stack;
    let model: LlmServer;
    useLlmStack(
      (stack, server) => {
        w = stack;
        model = server;
      },
      { LLM_TIMEOUT_MS: '300000', BATCH_WINDOW: '50' },
    );

    it('fail-all sent while the batch’s child starts are in flight fails and counts every one of them', async () => {
      for (let round = 0; round < 4; round++) {
        model.latency(600_000, 30);
        const r = await w.call('POST', '/api/jobs/batch', {
          batch_name: `in flight ${round}`,
          jobs: Array.from({ length: 30 }, (_, i) => summarize(`in flight ${round} ${i}`)),
        });
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        const batchId: string = r.body.data.batch_id;
        const ids: string[] = r.body.data.batch.jobs.map((j: { job_id: string }) => j.job_id);
        // Sent at once: it reaches the batch while its first task starts the jobs, or just after.
        const fail = await w.api.temporal.client.workflow
          .getHandle(batchId)
          .executeUpdate(failAllUpdate, { args: [{ reason: 'stop now' }] });
        const b = await until(
          async () => {
            const batch = (await w.call('GET', `/api/jobs/batch/${batchId}`)).body.data;
            return batch.status === 'completed' ? batch : undefined;
          },
          `batch ${round} to end (a job that missed its failJob runs on for 600 s)`,
          60_000,
          200,
        );
        // Each failJob went out once the job's start was seen (ChildWorkflowExecutionStarted): never into the void.
        const events = (await w.api.temporal.client.workflow.getHandle(batchId).fetchHistory()).events!;
        const at = (id: string, kind: 'signal' | 'started') =>
          events.findIndex((e) =>
            kind === 'signal'
              ? e.signalExternalWorkflowExecutionInitiatedEventAttributes?.workflowExecution?.workflowId === id
              : e.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId === id,
          );
        const early = ids.filter((id) => at(id, 'signal') >= 0 && at(id, 'signal') < at(id, 'started'));
        expect(early, `round ${round}: failJob sent before the job's start was seen`).to.deep.equal([]);
        expect(b).to.include({ job_count: 30, completed_count: 0, failed_count: 30 });
        expect(fail.failed_count).to.equal(30);
        for (const id of ids) {
          const j = (await w.call('GET', `/api/jobs/${id}`)).body.data;
          expect(j.status, id).to.equal('failed');
          expect(j.error).to.include({ code: 'CANCELLED', message: 'stop now' });
        }
      }
    });
  });
});
