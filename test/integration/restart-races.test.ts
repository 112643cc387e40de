import { expect } from 'chai';
// The OpenAPI extension of zod first: the services' imports build schemas that use it.
import '../../api/openapi';
import { Client, WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { readBlobJson } from '../../core/stores/blob-store';
import { idFromKey } from '../../api/services/job-starts';
import { JobService } from '../../api/services/jobs';
import { jobRecordKey } from '../../core/stores/records';
import { notifierWorkflowId } from '../../core/jobs/webhooks';
import {
  batchStateQuery,
  jobFinishedSignal,
  jobRestartedSignal,
  toggleActiveSignal,
  type JobState,
} from '../../workflows/definitions';
import { holdJobOutput } from '../support/jobs';
import { llmEnv } from '../support/servers/llm-env';
import { startLlmServer } from '../support/servers/llm-server';
import { startWebhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver';
import { connectTracked, type TrackedConnection } from '../support/workflows/temporal-calls';
import { sharedBundle } from '../support/workflows/worker';
import { createLocalEnv, startHarness, type Harness } from '../support/workflows/workflow-env';
import { waitFor } from '../support/wait';

// Restart is safe by construction (contract §3): the API only starts the new run; the run writes its own record and
// reports itself to its batch with its run number, and webhook delivery lives in the job's notifier. These tests
// force the interleavings a restart can meet (late, stale and repeated reports), on the real dev server.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const until = <T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 30_000,
  everyMs = 50,
): Promise<T> => waitFor(fn, what, { timeoutMs, everyMs, errors: 'throw' });

const failed = (p: Promise<unknown>) =>
  p.then(
    () => expect.fail('the run should have failed'),
    (e: unknown) => expect(e).to.be.instanceOf(WorkflowFailedError),
  );

/** A pdf job whose file does not exist: its run fails at once with FILE_NOT_FOUND. */
const failing = (dataDir: string, i: number) => ({
  jobType: 'pdf' as const,
  parameters: { filename: `${dataDir}/missing-${i}.pdf` },
});

describe('restart races on a local Temporal dev server', function () {
  this.timeout(90_000);
  let env: TestWorkflowEnvironment;
  let calls_: TrackedConnection;
  let h: Harness;
  let receiver: WebhookReceiver | undefined;

  before(async function () {
    this.timeout(120_000);
    env = await createLocalEnv();
    calls_ = await connectTracked(env.address);
    await sharedBundle();
  });
  after(async () => {
    await calls_?.closeWhenIdle();
    await env?.teardown();
  });
  beforeEach(async () => {
    h = await startHarness({
      address: env.address,
      client: new Client({ connection: calls_.connection }),
      connection: calls_.connection,
      nativeConnection: env.nativeConnection,
    });
  });
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
    await h?.stop();
  });

  const jobRecord = (id: string) => readBlobJson<JobState>(h.store, jobRecordKey(id));

  it('restarts a failed job at once while its failure webhook is still being retried, and queues the new run’s events behind it', async () => {
    receiver = await startWebhookReceiver({ respond: () => 500 });
    // Real retry delays (10 s, 30 s, ...): the notifier sits in its backoff for the whole test.
    const jobs = new JobService(h.gateway, h.store, 1);
    const { state } = await jobs.create({
      ...failing(h.config.dataDir, 0),
      webhook: { url: receiver.url, token: 'tok-r' },
    });
    await failed(h.client.workflow.getHandle(state.job_id).result());
    const lastOfRun1 = (await jobRecord(state.job_id)).events.at(-1)!.id;
    const notifier = h.client.workflow.getHandle(notifierWorkflowId(state.job_id));
    await until('the first failure delivery attempt', async () => receiver!.requests.length >= 1);

    const restarted = await jobs.restart(state.job_id);
    expect(restarted).to.include({ status: 'pending', run: 2 });
    // The notifier is still retrying the first failure: delivery did not hold the restart.
    expect((await notifier.describe()).status.name).to.equal('RUNNING');
    await failed(h.client.workflow.getHandle(state.job_id).result());
    expect(await jobRecord(state.job_id)).to.include({ status: 'failed', run: 2 });
    // Restarted again, still while the first failure is being retried.
    expect(await jobs.restart(state.job_id)).to.include({ status: 'pending', run: 3 });
    await failed(h.client.workflow.getHandle(state.job_id).result());
    expect((await notifier.describe()).status.name).to.equal('RUNNING');
    // Every delivery so far is of the first run's events; the later runs' wait their turn, in order.
    const delivered = receiver.requests.map((r) => Number(/_(\d+)$/.exec(String(r.headers['x-webhook-id']))![1]));
    expect(
      delivered.every((id) => id <= lastOfRun1),
      `event ids ${delivered} of run 1 (up to ${lastOfRun1})`,
    ).to.equal(true);
    const merged = (await jobs.state(state.job_id))!;
    const hookLines = merged.logs.filter((l) => /^Webhook \w+ failed: HTTP 500 \(attempt 1\)/.test(l.message));
    expect(hookLines.length, 'delivery lines in the job’s logs, each once')
      .to.equal(new Set(hookLines.map((l) => l.message)).size)
      .and.be.at.least(1);
    await notifier.terminate('test over');
  });

  it('keeps a batch’s counts exact whatever order a restarted run’s reports and stale ones arrive in', async () => {
    const batches = h.batches(1);
    // One job at a time: job 0 fails at once; job 1 is held in processing for seconds (its output key blocked), so
    // the batch is paused while it holds the only slot and job 2 stays pending: the batch stays open.
    const key = `races-${Date.now()}`;
    await holdJobOutput(h.store, idFromKey('job', `${key}\u00001`));
    const held = {
      jobType: 'transformer' as const,
      parameters: { operation: 'html-to-markdown' as const, html: '<p>held</p>' },
    };
    const { state } = await batches.create({
      batchName: 'races',
      idempotencyKey: key,
      jobs: [failing(h.config.dataDir, 0), held, failing(h.config.dataDir, 2)],
    });
    const batch = h.client.workflow.getHandle(state.batch_id);
    await until('job 0 failed and job 1 held', async () =>
      (await batch.query(batchStateQuery)).statuses.startsWith('fr'),
    );
    await batch.signal(toggleActiveSignal, { active: false });
    const paused = await until('job 1 to end while the paused batch keeps job 2 pending', async () => {
      const s = await batch.query(batchStateQuery);
      return s.statuses === 'ffp' ? s : undefined;
    });
    const index = 0;
    const jobId = (await batches.manifest(state.batch_id)).jobs[index].job_id;

    // A restarted run that fails at once: its own record and its own reports, nothing written after it by the API.
    expect(await h.jobs.restart(jobId)).to.include({ status: 'pending', run: 2 });
    await until('run 2 to fail', async () => {
      const r = await jobRecord(jobId);
      return r.run === 2 && r.status === 'failed';
    });
    await until(
      'the batch to count run 2 as failed',
      async () => (await batch.query(batchStateQuery)).statuses[index] === 'f',
    );
    await sleep(500);
    expect(await jobRecord(jobId), 'never overwritten back to pending').to.include({ status: 'failed', run: 2 });

    // Late and stale reports: run 2's restart report again (counted, it would show a finished job as running), and
    // run 1's report of a different outcome. The batch ignores both.
    await batch.signal(jobRestartedSignal, { index, run: 2, jobId });
    await batch.signal(jobFinishedSignal, { index, status: 'completed', run: 1 });
    await batch.signal(jobRestartedSignal, { index, run: 1, jobId });
    const after = await batch.query(batchStateQuery);
    expect(after.statuses[index]).to.equal('f');
    expect(after).to.include({ processing_count: 0, completed_count: 0, failed_count: paused.failed_count });

    // Set (not flipped) twice: a retried request does not pause the batch again.
    await batch.signal(toggleActiveSignal, { active: true });
    await batch.signal(toggleActiveSignal, { active: true });
    const done = await batch.result();
    expect(done).to.include({
      status: 'completed',
      active: true,
      job_count: 3,
      failed_count: 3,
      completed_count: 0,
      processing_count: 0,
      pending_count: 0,
    });
  });

  it('fail-all reaches a restarted job that runs in a reopened batch, answers with it counted, and completes the batch', async () => {
    const llm = await startLlmServer();
    // Its own workers, with a model: the first call is refused (a permanent 400: run 1 fails at once), every later one
    // is held open, so run 2 is running for as long as the test needs.
    let calls = 0;
    llm.respond(() =>
      ++calls === 1
        ? { status: 400, body: { error: { message: 'bad request', type: 'invalid_request_error' } } }
        : { hang: true },
    );
    await h.stop();
    h = await startHarness(
      {
        address: env.address,
        client: new Client({ connection: calls_.connection }),
        connection: calls_.connection,
        nativeConnection: env.nativeConnection,
      },
      { env: llmEnv(llm, { LLM_TIMEOUT_MS: '120000' }) },
    );
    try {
      const batches = h.batches(2);
      const template = {
        jobType: 'transformer' as const,
        parameters: {
          operation: 'template' as const,
          text: 'Three bridges were mapped.',
          template_content: '# {{title|a short title}}',
          use_cache: false,
        },
      };
      const { state } = await batches.create({
        batchName: 'fail-all restarted',
        jobs: [template, failing(h.config.dataDir, 1)],
      });
      const batch = h.client.workflow.getHandle(state.batch_id);
      expect(await batch.result()).to.include({ status: 'completed', failed_count: 2 });
      const jobId = (await batches.manifest(state.batch_id)).jobs[0].job_id;
      expect((await jobRecord(jobId)).error?.code).to.equal('UPSTREAM_ERROR');

      // Restarted: the run reopens its closed batch with its report and waits on the held model call.
      expect(await h.jobs.restart(jobId)).to.include({ status: 'pending', run: 2 });
      await until('the reopened batch to count the restarted job as running', async () => {
        const s = await batches.state(state.batch_id).catch(() => null);
        return s?.statuses[0] === 'r';
      });
      await until('run 2 to ask the model', async () => calls >= 2);

      const failed = await batches.failAll(state.batch_id, 'Stopped by the test');
      expect(failed, 'the restarted, running job failed by fail-all').to.equal(1);
      const rec = await until('the restarted run to end', async () => {
        const r = await jobRecord(jobId);
        return r.run === 2 && r.status === 'failed' ? r : undefined;
      });
      expect(rec.error).to.include({ code: 'CANCELLED', message: 'Stopped by the test' });
      const reopened = h.client.workflow.getHandle(state.batch_id);
      expect(await reopened.result()).to.include({
        status: 'completed',
        job_count: 2,
        failed_count: 2,
        completed_count: 0,
        processing_count: 0,
      });
    } finally {
      await llm.close();
    }
  });
});
