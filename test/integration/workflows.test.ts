import { expect } from 'chai';
import { Client, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import proto from '@temporalio/proto';
import { readBlobJson } from '../../core/stores/blob-store';
import type { CreateJob } from '../../api/services/job-starts';
import { JobService } from '../../api/services/jobs';
import { htmlToMarkdown } from '../../core/html';
import { withResults, type StoredRecord } from '../../core/results/job-results';
import { batchRecordKey, jobOutputKey, jobRecordKey } from '../../core/stores/records';
import { notifierWorkflowId } from '../../core/jobs/webhooks';
import {
  batchStateQuery,
  failJobSignal,
  jobStateQuery,
  type BatchState,
  type JobState,
} from '../../workflows/definitions';
import { startWebhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver';
import { connectTracked, type TrackedConnection } from '../support/workflows/temporal-calls';
import { sharedBundle } from '../support/workflows/worker';
import { jobStatusAttribute, jobTypeAttribute } from '../../core/runtime/search-attributes';
import {
  createLocalEnv,
  htmlOfSize,
  sectionsHtml,
  startHarness,
  type Harness,
} from '../support/workflows/workflow-env';
import { waitFor } from '../support/wait';

const { EventType } = proto.temporal.api.enums.v1;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const until = <T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 30_000,
  everyMs = 50,
): Promise<T> => waitFor(fn, what, { timeoutMs, everyMs, errors: 'throw' });

async function failureOf(p: Promise<unknown>): Promise<WorkflowFailedError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'the workflow run failed').to.be.instanceOf(WorkflowFailedError);
  return err as WorkflowFailedError;
}

const transformer = (html: string) => ({
  jobType: 'transformer' as const,
  parameters: { operation: 'html-to-markdown' as const, html },
});

describe('job and batch workflows on a local Temporal dev server', function () {
  this.timeout(60_000);
  let env: TestWorkflowEnvironment;
  // The tests' calls go through a connection of their own: the environment's teardown closes its connection at
  // once, even under a result() long poll that a failed test left running (see test/support/workflows/temporal-calls.ts).
  let calls: TrackedConnection;
  let h: Harness;

  before(async function () {
    this.timeout(120_000);
    env = await createLocalEnv();
    calls = await connectTracked(env.address);
    await sharedBundle();
  });
  after(async () => {
    await calls?.closeWhenIdle();
    await env?.teardown();
  });
  beforeEach(async () => {
    const client = new Client({ connection: calls.connection });
    h = await startHarness({
      address: env.address,
      client,
      connection: calls.connection,
      nativeConnection: env.nativeConnection,
    });
  });
  afterEach(async () => {
    await h?.stop();
  });

  // The record as the API reads it: results stored beside it (results_ref) are read back in.
  const jobRecord = async (id: string) =>
    withResults(h.store, await readBlobJson<JobState & StoredRecord>(h.store, jobRecordKey(id)));
  const batchRecord = (id: string) => readBlobJson<BatchState & { input: unknown }>(h.store, batchRecordKey(id));

  it('completes a transformer job, answers completed by query, and records its full results and search attributes', async () => {
    const html = sectionsHtml(60);
    const expected = htmlToMarkdown(html);
    expect(expected.length, 'longer than the 2000-character preview').to.be.greaterThan(2500);
    const { state } = await h.jobs.create(transformer(html));
    const handle = h.client.workflow.getHandle(state.job_id);
    expect(await handle.result()).to.deep.equal({ status: 'completed' });

    const live = await handle.query(jobStateQuery);
    expect(live.status).to.equal('completed');
    expect(live.progress.percent).to.equal(100);
    expect(live.error).to.equal(undefined);
    const preview = (live.results!.structured_data as { extracted_text: string }).extracted_text;
    expect(preview).to.equal(`${expected.slice(0, 2000)}…`);
    expect(live.logs.map((l) => l.message)).to.deep.equal([
      'Processing transformer job',
      'Step html-to-markdown done',
      'Job completed',
    ]);

    const rec = await jobRecord(state.job_id);
    expect(rec.status).to.equal('completed');
    expect(rec.progress.percent).to.equal(100);
    expect(rec.results).to.deep.include({
      structured_data: {
        extracted_text: expected,
        metadata: { operation: 'html-to-markdown', characters: expected.length },
      },
      assets: [jobOutputKey(state.job_id, 'result.md')],
      target_dir: `jobs/${state.job_id}/out`,
      from_cache: false,
    });
    const file: Buffer[] = [];
    for await (const c of await h.store.get(jobOutputKey(state.job_id, 'result.md'))) file.push(c as Buffer);
    expect(Buffer.concat(file).toString('utf8')).to.equal(expected);

    const desc = await handle.describe();
    expect(desc.status.name).to.equal('COMPLETED');
    expect(desc.typedSearchAttributes.get(jobStatusAttribute)).to.equal('completed');
    expect(desc.typedSearchAttributes.get(jobTypeAttribute)).to.equal('transformer');
  });

  it('fails a pdf job for a missing file with FILE_NOT_FOUND and records the failure with that code', async () => {
    // An absolute path inside the data directory (an input root) that does not exist.
    const missing = `${h.config.dataDir}/report.pdf`;
    const { state } = await h.jobs.create({ jobType: 'pdf', parameters: { filename: missing } });
    const handle = h.client.workflow.getHandle(state.job_id);
    const err = await failureOf(handle.result());
    expect(err.cause).to.be.instanceOf(ApplicationFailure);
    const cause = err.cause as ApplicationFailure;
    expect(cause.type).to.equal('FILE_NOT_FOUND');
    expect(cause.nonRetryable).to.equal(true);

    const rec = await jobRecord(state.job_id);
    expect(rec.status).to.equal('failed');
    expect(rec.error).to.deep.equal({ code: 'FILE_NOT_FOUND', message: cause.message, details: { filename: missing } });
    expect(rec.results).to.equal(null);
    expect(rec.logs.at(-1)!.message).to.equal(`Job failed: FILE_NOT_FOUND: ${cause.message}`);
    const desc = await handle.describe();
    expect(desc.status.name).to.equal('FAILED');
    expect(desc.typedSearchAttributes.get(jobStatusAttribute)).to.equal('failed');
    expect(desc.typedSearchAttributes.get(jobTypeAttribute)).to.equal('pdf');
  });

  it('fails a job with CANCELLED and the reason when failJob arrives while a large page converts', async () => {
    const html = htmlOfSize(4_000_000);
    const { state } = await h.jobs.create(transformer(html));
    const handle = h.client.workflow.getHandle(state.job_id);
    await until('the conversion step to run', async () => {
      const s = await handle.query(jobStateQuery);
      return s.status === 'processing' && s.progress.step === 'transform';
    });
    await handle.signal(failJobSignal, { reason: 'Stopped by the operator' });
    const err = await failureOf(handle.result());
    expect((err.cause as ApplicationFailure).type).to.equal('CANCELLED');
    expect(err.cause!.message).to.equal('Stopped by the operator');
    // The conversion of 4 MB takes several seconds; the job must not wait for it: the run fails between the signal
    // and the end of the conversion, however slow the machine (an order of events, not a time).
    const events = ((await handle.fetchHistory()).events ?? []).map((e) => e.eventType);
    const signalled = events.indexOf(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
    const failed = events.indexOf(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED);
    expect(signalled, 'the signal is in the history').to.be.at.least(0);
    expect(failed, 'the run failed after the signal').to.be.greaterThan(signalled);
    expect(events.slice(signalled, failed), 'the conversion completed before the run failed').to.not.include(
      EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
    );

    const rec = await jobRecord(state.job_id);
    expect(rec.status).to.equal('failed');
    expect(rec.error).to.deep.equal({ code: 'CANCELLED', message: 'Stopped by the operator', details: {} });
    expect(rec.logs.map((l) => l.message)).to.not.include('Step html-to-markdown done');
    expect(rec.logs.at(-1)!.message).to.equal('Job failed: CANCELLED: Stopped by the operator');
  });

  it('runs a batch of six jobs never more than two at a time and counts them exactly', async () => {
    const batches = h.batches(2);
    const { state } = await batches.create({
      batchName: 'window',
      jobs: Array.from({ length: 6 }, (_, i) => transformer(htmlOfSize(150_000, `j${i}`))),
    });
    const handle = h.client.workflow.getHandle(state.batch_id);
    let maxProcessing = 0;
    let samples = 0;
    const final = await until(
      'the batch to complete',
      async () => {
        const s = await handle.query(batchStateQuery);
        samples++;
        maxProcessing = Math.max(maxProcessing, s.processing_count);
        expect(s.processing_count, `processing in ${s.statuses}`).to.be.at.most(2);
        expect(s.completed_count + s.failed_count + s.processing_count + s.pending_count).to.equal(6);
        return s.status === 'completed' ? s : undefined;
      },
      60_000,
      25,
    );
    expect(samples).to.be.greaterThan(5);
    expect(maxProcessing, 'the window was used').to.equal(2);
    expect(final).to.include({
      job_count: 6,
      completed_count: 6,
      failed_count: 0,
      processing_count: 0,
      pending_count: 0,
      statuses: 'cccccc',
    });
    expect(await handle.result()).to.deep.include({ completed_count: 6, failed_count: 0, status: 'completed' });
    expect(await batchRecord(state.batch_id)).to.include({
      job_count: 6,
      completed_count: 6,
      failed_count: 0,
      status: 'completed',
    });

    // The jobs' own records tell the same: from each start to each end, never three at once.
    const records = await batches.jobRecords(state.batch_id);
    const spans = records.map((r) => {
      expect(r.status).to.equal('completed');
      const start = r.logs.find((l) => l.message === 'Processing transformer job')!.timestamp;
      return [Date.parse(start), Date.parse(r.updated_at)] as const;
    });
    const overlap = Math.max(...spans.map(([s]) => spans.filter(([a, b]) => a <= s && s < b).length));
    expect(overlap).to.be.at.most(2);
  });

  it('pauses starting jobs while toggled inactive and finishes them once resumed', async () => {
    const batches = h.batches(2);
    const { state } = await batches.create({
      batchName: 'pause',
      jobs: Array.from({ length: 6 }, (_, i) => transformer(htmlOfSize(150_000, `p${i}`))),
    });
    const id = state.batch_id;
    expect(await batches.toggleActive(id)).to.equal(false);
    const paused = await h.client.workflow.getHandle(id).query(batchStateQuery);
    expect(paused.active).to.equal(false);
    expect(paused.pending_count, 'at most one window started before the pause').to.be.at.least(4);
    // Whatever was running finishes; nothing new starts.
    const idle = await until('the running jobs to finish', async () => {
      const s = await batches.require(id);
      return s.processing_count === 0 ? s : undefined;
    });
    await sleep(1500);
    const still = await batches.require(id);
    expect(still.pending_count).to.equal(paused.pending_count);
    expect(still.completed_count).to.equal(idle.completed_count);
    expect(still.status).to.not.equal('completed');

    expect(await batches.toggleActive(id)).to.equal(true);
    const done = (await h.client.workflow.getHandle(id).result()) as BatchState;
    expect(done).to.include({
      status: 'completed',
      active: true,
      completed_count: 6,
      failed_count: 0,
      pending_count: 0,
      processing_count: 0,
    });
  });

  it('fails every unfinished job with failAll, answers how many, and completes the batch', async () => {
    const batches = h.batches(2);
    const jobs = [
      transformer(htmlOfSize(3_000_000, 'big0')),
      transformer(htmlOfSize(3_000_000, 'big1')),
      ...Array.from({ length: 3 }, (_, i) => transformer(sectionsHtml(3, `s${i}`))),
    ];
    const { state } = await batches.create({ batchName: 'fail-all', jobs });
    const id = state.batch_id;
    const manifest = await batches.manifest(id);
    const jobIds = manifest.jobs.map((j) => j.job_id);
    await until('both large jobs to convert', async () => {
      const s = await Promise.all(jobIds.slice(0, 2).map((j) => h.jobs.state(j)));
      return s.every((x) => x?.status === 'processing' && x.progress.step === 'transform');
    });
    expect(await batches.failAll(id, 'Batch cancelled')).to.equal(5);

    const done = (await h.client.workflow.getHandle(id).result()) as BatchState;
    expect(done).to.include({
      status: 'completed',
      job_count: 5,
      completed_count: 0,
      failed_count: 5,
      pending_count: 0,
      processing_count: 0,
      statuses: 'fffff',
    });
    expect(await batchRecord(id)).to.include({ status: 'completed', failed_count: 5, completed_count: 0 });
    for (const jobId of jobIds) {
      const rec = await jobRecord(jobId);
      expect(rec.status, jobId).to.equal('failed');
      expect(rec.error).to.deep.equal({ code: 'CANCELLED', message: 'Batch cancelled', details: {} });
    }
    // The jobs that never started stay unstarted.
    for (const jobId of jobIds.slice(2)) {
      const err = await h.client.workflow
        .getHandle(jobId)
        .describe()
        .catch((e: unknown) => e);
      expect(err, jobId).to.be.instanceOf(WorkflowNotFoundError);
    }
    // And failAll on a finished batch fails nothing more.
    expect(await batches.failAll(id, 'again')).to.equal(0);
  });

  it('continues a large batch as new and still counts every job exactly once', async function () {
    this.timeout(90_000);
    const jobs = Array.from({ length: 40 }, (_, i) => transformer(sectionsHtml(2, `c${i}`)));
    const { batchId, jobIds, firstRunId } = await h.startBatch(
      { batchName: 'continued', jobs },
      { window: 4, historyLimit: 60 },
    );
    const handle = h.client.workflow.getHandle(batchId);
    const final = (await handle.result()) as BatchState;
    expect(final).to.include({
      status: 'completed',
      job_count: 40,
      completed_count: 40,
      failed_count: 0,
      pending_count: 0,
      processing_count: 0,
    });
    expect(final.statuses).to.equal('c'.repeat(40));

    const desc = await handle.describe();
    expect(desc.runId).to.not.equal(firstRunId);
    // Follow the chain of runs from the first one.
    let runId: string | undefined = firstRunId;
    let runs = 0;
    let lastEvent: string | undefined;
    while (runId) {
      runs++;
      const history: proto.temporal.api.history.v1.IHistory = await h.client.workflow
        .getHandle(batchId, runId)
        .fetchHistory();
      const last: proto.temporal.api.history.v1.IHistoryEvent = history.events!.at(-1)!;
      lastEvent = EventType[last.eventType!];
      runId = last.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
      expect(runs).to.be.below(40);
    }
    expect(runs, 'runs of the batch').to.be.at.least(2);
    expect(lastEvent).to.equal('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
    expect(await batchRecord(batchId)).to.include({ job_count: 40, completed_count: 40, failed_count: 0 });
    const records = await Promise.all(jobIds.map(jobRecord));
    expect(
      records.map((r) => `${r.status}/${r.run}/${r.logs.filter((l) => l.message === 'Job completed').length}`),
    ).to.deep.equal(Array(40).fill('completed/1/1'));
  });

  it('reopens a finished batch when one of its jobs is restarted, and keeps its counts exact', async () => {
    const batches = h.batches(1);
    const { state } = await batches.create({
      batchName: 'reopen',
      jobs: [{ jobType: 'pdf', parameters: { filename: `${h.config.dataDir}/a.pdf` } }],
    });
    const id = state.batch_id;
    const handle = h.client.workflow.getHandle(id);
    const firstRun = (await handle.describe()).runId;
    expect(await handle.result()).to.include({
      status: 'completed',
      job_count: 1,
      failed_count: 1,
      completed_count: 0,
    });
    const [jobId] = (await batches.manifest(id)).jobs.map((j) => j.job_id);
    expect((await jobRecord(jobId)).status).to.equal('failed');

    const pending = await h.jobs.restart(jobId);
    expect(pending).to.include({ status: 'pending', run: 2 });
    await failureOf(h.client.workflow.getHandle(jobId).result());

    const reopened = await until('the batch to run again and complete', async () => {
      const d = await handle.describe();
      return d.runId !== firstRun && d.status.name === 'COMPLETED' ? d : undefined;
    });
    expect(reopened.runId).to.not.equal(firstRun);
    const again = (await h.client.workflow.getHandle(id, reopened.runId).result()) as BatchState;
    expect(again).to.include({
      status: 'completed',
      job_count: 1,
      failed_count: 1,
      completed_count: 0,
      processing_count: 0,
      pending_count: 0,
    });
    expect(await batches.require(id)).to.include({
      job_count: 1,
      failed_count: 1,
      completed_count: 0,
      status: 'completed',
    });
    expect(await batchRecord(id)).to.include({ job_count: 1, failed_count: 1, completed_count: 0 });

    const rec = await jobRecord(jobId);
    expect(rec).to.include({ status: 'failed', run: 2 });
    const messages = rec.logs.map((l) => l.message);
    expect(messages).to.include.members(['Job restarted', 'Run 2 started']);
    expect(messages.filter((m) => m.startsWith('Job failed: FILE_NOT_FOUND'))).to.have.length(2);
  });

  describe('webhooks', () => {
    let receiver: WebhookReceiver;
    afterEach(() => receiver?.close());

    it('retries a failed delivery on the scaled backoff, logs each attempt, and keeps the event id', async () => {
      receiver = await startWebhookReceiver({ responses: [500, 500, 500] });
      const jobs = new JobService(h.gateway, h.store, 0.001);
      // A job of a type this version has no pipeline for (created past the API, which knows only its own types)
      // fails at once with NOT_IMPLEMENTED, before any progress, so its only event is the failure.
      const { state } = await jobs.create({
        jobType: 'retired',
        parameters: {},
        webhook: { url: receiver.url, token: 'tok-1', jobId: 'client-7' },
      } as unknown as CreateJob);
      await failureOf(h.client.workflow.getHandle(state.job_id).result());
      // The job's run hands its events to the job's notifier and ends; the notifier delivers them.
      await h.client.workflow.getHandle(notifierWorkflowId(state.job_id)).result();

      expect(receiver.requests).to.have.length(4);
      const ids = new Set(receiver.requests.map((r) => r.headers['x-webhook-id']));
      expect([...ids]).to.deep.equal([`evt_${state.job_id}_1`]);
      for (const r of receiver.requests) {
        expect(r.json).to.deep.include({ phase: 'failed', process: { id: state.job_id }, job: { id: 'client-7' } });
      }
      const rec = (await jobs.state(state.job_id))!;
      const hookLines = rec.logs.map((l) => l.message).filter((m) => m.startsWith('Webhook'));
      expect(hookLines).to.have.length(4);
      hookLines.slice(0, 3).forEach((line, i) => {
        expect(line).to.match(
          new RegExp(`^Webhook failed failed: HTTP 500 \\(attempt ${i + 1}\\); retrying in \\d+ s$`),
        );
      });
      expect(hookLines[3]).to.match(/^Webhook failed delivered \(attempt 4, HTTP 200, \d+ ms\)$/);
      // Scaled down a thousandfold, the gaps still grow (10 ms, 30 ms, 90 ms at least).
      const at = receiver.requests.map((r) => r.receivedAt);
      expect(at[1] - at[0]).to.be.at.least(10);
      expect(at[2] - at[1]).to.be.at.least(30);
      expect(at[3] - at[2]).to.be.at.least(90);
    });
  });

  it('answers the jobState query right after the start, before any work is done', async () => {
    const { state } = await h.jobs.create(transformer(htmlOfSize(1_000_000)));
    const s = await h.client.workflow.getHandle(state.job_id).query(jobStateQuery);
    expect(['pending', 'processing']).to.include(s.status);
    expect(s.job_id).to.equal(state.job_id);
    expect(s.results).to.equal(null);
    await h.client.workflow.getHandle(state.job_id).result();
  });
});
