import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { useStack, type Stack } from '../support/servers/stack';
import { idFromKey } from '../../api/services/job-starts';
import {
  download,
  generatedHtml,
  holdJobOutput,
  pdfJob,
  rawRequest,
  readSse,
  sleep,
  transformerJob,
  unzip,
  until,
} from '../support/jobs';

// Batches and the legacy event-job API on the real API and worker (in this process) over real HTTP on loopback.

const BATCH_ID = /^batch-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_BATCH = 'batch-00000000-0000-4000-8000-000000000000';
const UNKNOWN_JOB = 'job-00000000-0000-4000-8000-000000000000';

const uniqueKey = (name: string) => `${name}-${Math.random().toString(36).slice(2)}`;
const issuePaths = (body: any): string[] => body.error.details.issues.map((i: { path: string }) => i.path);

/** Polls a batch until it is completed, checking at every poll that its counts are consistent and never go back. */
async function waitBatch(
  s: Stack,
  batchId: string,
  timeoutMs = 60_000,
  path = `/api/jobs/batch/${batchId}`,
): Promise<{ final: any; polls: number }> {
  let last = { completed: 0, failed: 0 };
  let polls = 0;
  const final = await until(
    async () => {
      const r = await s.call('GET', path);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const b = r.body.data;
      polls++;
      expect(b.completed_count + b.failed_count, JSON.stringify(b)).to.be.at.most(b.job_count);
      expect(b.completed_count, 'completed_count went back').to.be.at.least(last.completed);
      expect(b.failed_count, 'failed_count went back').to.be.at.least(last.failed);
      expect(b.jobs).to.have.length(b.job_count);
      const done = b.jobs.filter((j: { status: string }) => j.status === 'completed' || j.status === 'failed').length;
      if (b.status === 'completed') expect(done, 'a completed batch with unfinished jobs').to.equal(b.job_count);
      last = { completed: b.completed_count, failed: b.failed_count };
      return b.status === 'completed' ? b : undefined;
    },
    `batch ${batchId} to complete`,
    timeoutMs,
    100,
  );
  return { final, polls };
}

const notPending = (b: { jobs: { status: string }[] }) => b.jobs.filter((j) => j.status !== 'pending').length;

describe('batches on the real engine', function () {
  this.timeout(90_000);
  let s: Stack;
  useStack((stack) => (s = stack));

  it('runs a 50-job batch to completion with exact counts and its jobs in creation order', async () => {
    const jobs = Array.from({ length: 50 }, (_, i) => transformerJob(`<p>job number ${i}</p>`));
    const r = await s.call('POST', '/api/jobs/batch', { batch_name: 'fifty', jobs });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.status).to.equal('success');
    const { batch_id, batch } = r.body.data;
    expect(batch_id).to.match(BATCH_ID);
    expect(batch).to.include({ batch_id, batch_name: 'fifty', status: 'pending', job_count: 50 });
    expect(batch.jobs).to.have.length(50);
    batch.jobs.forEach((j: any, i: number) => {
      expect(j).to.include({ job_type: 'transformer', status: 'pending', batch_id });
      expect(j.parameters.html).to.equal(`<p>job number ${i}</p>`);
    });
    const ids: string[] = batch.jobs.map((j: { job_id: string }) => j.job_id);
    expect(new Set(ids).size).to.equal(50);

    const { final, polls } = await waitBatch(s, batch_id);
    expect(polls).to.be.at.least(1);
    expect(final).to.include({
      batch_id,
      batch_name: 'fifty',
      status: 'completed',
      job_count: 50,
      completed_count: 50,
      failed_count: 0,
    });
    expect(final.jobs.map((j: { job_id: string }) => j.job_id)).to.deep.equal(ids);
    for (const j of final.jobs) expect(j).to.deep.equal({ job_id: j.job_id, status: 'completed' });

    // Each job is a job of its own, readable by id, with the result of its own input.
    const records = await Promise.all(ids.map((id) => s.call('GET', `/api/jobs/${id}`)));
    records.forEach((rec, i) => {
      expect(rec.status).to.equal(200);
      expect(rec.body.data).to.include({ job_id: ids[i], batch_id, status: 'completed' });
      expect(rec.body.data.results.structured_data.extracted_text).to.equal(`job number ${i}`);
    });
  });

  it('counts a mixed batch exactly: 40 completed transformer jobs and 10 failed pdf jobs', async () => {
    const jobs = Array.from({ length: 50 }, (_, i) => (i % 5 === 2 ? pdfJob() : transformerJob(`<p>mixed ${i}</p>`)));
    const r = await s.call('POST', '/api/jobs/batch', { batch_name: 'mixed', jobs });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const { batch_id } = r.body.data;
    const ids: string[] = r.body.data.batch.jobs.map((j: { job_id: string }) => j.job_id);
    const { final } = await waitBatch(s, batch_id);
    expect(final).to.include({ status: 'completed', job_count: 50, completed_count: 40, failed_count: 10 });
    final.jobs.forEach((j: { job_id: string; status: string }, i: number) => {
      expect(j.job_id).to.equal(ids[i]);
      expect(j.status, `job ${i}`).to.equal(i % 5 === 2 ? 'failed' : 'completed');
    });
    const failed = await s.call('GET', `/api/jobs/${ids[2]}`);
    expect(failed.body.data).to.include({ status: 'failed', batch_id, job_type: 'pdf' });
    expect(failed.body.data.error.code).to.equal('FILE_NOT_FOUND');
  });

  it('rejects an empty batch and a batch with an invalid job, naming the job’s field', async () => {
    const empty = await s.call('POST', '/api/jobs/batch', { batch_name: 'empty', jobs: [] });
    expect(empty.status).to.equal(400);
    expect(empty.body.error.code).to.equal('VALIDATION_ERROR');
    expect(issuePaths(empty.body)).to.include('jobs');

    const noHtml = await s.call('POST', '/api/jobs/batch', {
      batch_name: 'bad',
      jobs: [
        transformerJob(),
        transformerJob(),
        { job_type: 'transformer', parameters: { operation: 'html-to-markdown' } },
      ],
    });
    expect(noHtml.status).to.equal(400);
    expect(noHtml.body.error.code).to.equal('VALIDATION_ERROR');
    expect(issuePaths(noHtml.body)).to.include('jobs.2.parameters.html');

    const badType = await s.call('POST', '/api/jobs/batch', {
      batch_name: 'bad',
      jobs: [transformerJob(), { job_type: 'imageocr', parameters: {} }],
    });
    expect(badType.status).to.equal(400);
    expect(issuePaths(badType.body)).to.include('jobs.1.job_type');

    const noName = await s.call('POST', '/api/jobs/batch', { jobs: [transformerJob()] });
    expect(noName.status).to.equal(400);
    expect(issuePaths(noName.body)).to.include('batch_name');
  });

  it('answers 404 BATCH_NOT_FOUND to toggle-active and fail-all of an unknown batch, and 400 to fail-all without batch_id', async () => {
    const toggle = await s.call('POST', `/api/event-job/batches/${UNKNOWN_BATCH}/toggle-active`);
    expect(toggle.status).to.equal(404);
    expect(toggle.body.error.code).to.equal('BATCH_NOT_FOUND');
    const fail = await s.call('POST', '/api/event-job/batches/fail-all', { batch_id: UNKNOWN_BATCH, reason: 'stop' });
    expect(fail.status).to.equal(404);
    expect(fail.body.error.code).to.equal('BATCH_NOT_FOUND');
    const noId = await s.call('POST', '/api/event-job/batches/fail-all', { reason: 'stop' });
    expect(noId.status).to.equal(400);
    expect(noId.body.error.code).to.equal('VALIDATION_ERROR');
    expect(issuePaths(noId.body)).to.include('batch_id');
  });

  it('answers fail-all of a completed batch with failed_count 0 and leaves its counts alone', async () => {
    const r = await s.call('POST', '/api/jobs/batch', {
      batch_name: 'done',
      jobs: [transformerJob(), transformerJob()],
    });
    const { batch_id } = r.body.data;
    await waitBatch(s, batch_id);
    const fail = await s.call('POST', '/api/event-job/batches/fail-all', { batch_id, reason: 'too late' });
    expect(fail.status).to.equal(200);
    expect(fail.body.data).to.include({ batch_id, failed_count: 0 });
    const after = (await s.call('GET', `/api/jobs/batch/${batch_id}`)).body.data;
    expect(after).to.include({ status: 'completed', completed_count: 2, failed_count: 0 });
  });

  describe('with a window of one job at a time', () => {
    let w: Stack;
    useStack((stack) => (w = stack), { BATCH_WINDOW: '1', MAX_BATCH_JOBS: '5' });

    /**
     * A batch whose first job stays `processing` for a few seconds (its output key is held, so its step fails and
     * is retried), created with an Idempotency-Key so its job ids are known before it starts. Resolves once the
     * first job is seen processing.
     */
    async function batchWithRunningFirstJob(size: number): Promise<{ batchId: string; ids: string[] }> {
      const key = uniqueKey('window');
      const ids = Array.from({ length: size }, (_, i) => idFromKey('job', `${key}\0${i}`));
      await holdJobOutput(w.api.store, ids[0]);
      const jobs = Array.from({ length: size }, (_, i) => transformerJob(`<p>windowed ${i}</p>`));
      const r = await w.call('POST', '/api/jobs/batch', { batch_name: 'windowed', jobs }, { 'Idempotency-Key': key });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.data.batch.jobs.map((j: { job_id: string }) => j.job_id)).to.deep.equal(ids);
      const batchId = r.body.data.batch_id;
      await until(
        async () => ((await w.call('GET', `/api/jobs/${ids[0]}`)).body.data.status === 'processing' ? true : undefined),
        'the first job to run',
        30_000,
        20,
      );
      const b = (await w.call('GET', `/api/jobs/batch/${batchId}`)).body.data;
      expect(b.jobs.map((j: { status: string }) => j.status)).to.deep.equal([
        'processing',
        ...Array(size - 1).fill('pending'),
      ]);
      return { batchId, ids };
    }

    it('rejects a batch over MAX_BATCH_JOBS with the limit in details', async () => {
      const r = await w.call('POST', '/api/jobs/batch', {
        batch_name: 'big',
        jobs: Array.from({ length: 6 }, () => transformerJob()),
      });
      expect(r.status).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_ERROR');
      expect(r.body.error.details.limit).to.equal(5);
      const legacy = await w.call('POST', '/api/event-job/batches', {
        batch_name: 'big',
        jobs: Array.from({ length: 6 }, () => ({
          event: 'e',
          session: 's',
          url: 'https://example.com/s',
          filename: 's',
          track: 't',
        })),
      });
      expect(legacy.status).to.equal(400);
      expect(legacy.body.error.details.limit).to.equal(5);
    });

    it('starts no new job while the batch is inactive and finishes it once it is active again', async () => {
      const { batchId, ids } = await batchWithRunningFirstJob(4);
      const off = await w.call('POST', `/api/event-job/batches/${batchId}/toggle-active`);
      expect(off.status).to.equal(200);
      expect(off.body.data).to.include({ batch_id: batchId, active: false });
      expect(off.body.data.message).to.be.a('string').and.not.equal('');
      const started = notPending((await w.call('GET', `/api/jobs/batch/${batchId}`)).body.data);
      expect(started).to.equal(1);

      // The running job ends (its step gives up) and frees the window; the inactive batch still starts nothing.
      await until(
        async () => {
          const st = (await w.call('GET', `/api/jobs/${ids[0]}`)).body.data.status;
          return st === 'failed' || st === 'completed' ? true : undefined;
        },
        'the running job to end',
        20_000,
      );
      const until2s = Date.now() + 2000;
      while (Date.now() < until2s) {
        const b = (await w.call('GET', `/api/jobs/batch/${batchId}`)).body.data;
        expect(notPending(b), JSON.stringify(b.jobs)).to.equal(started);
        expect(b.active).to.equal(false);
        await sleep(200);
      }
      const legacyView = (await w.call('GET', `/api/event-job/batches/${batchId}`)).body.data;
      expect(legacyView.active).to.equal(false);

      const on = await w.call('POST', `/api/event-job/batches/${batchId}/toggle-active`);
      expect(on.status).to.equal(200);
      expect(on.body.data).to.include({ batch_id: batchId, active: true });
      const { final } = await waitBatch(w, batchId);
      expect(final).to.include({
        status: 'completed',
        active: true,
        job_count: 4,
        completed_count: 3,
        failed_count: 1,
      });
      expect(final.jobs.map((j: { status: string }) => j.status)).to.deep.equal([
        'failed',
        'completed',
        'completed',
        'completed',
      ]);
    });

    it('counts a job terminated while it runs as failed by its close, and goes on with the next', async () => {
      const { batchId, ids } = await batchWithRunningFirstJob(2);
      // Terminated: no workflow code of the job runs again, so nothing of the job signals the batch.
      await w.api.temporal.client.workflow.getHandle(ids[0]).terminate('terminated by the test');
      const { final } = await waitBatch(w, batchId);
      expect(final).to.include({ status: 'completed', job_count: 2, completed_count: 1, failed_count: 1 });
      expect(final.jobs.map((j: { status: string }) => j.status)).to.deep.equal(['failed', 'completed']);
      // The worker's closeout writes the job's record (TERMINATED) and leaves the batch alone: it saw the close.
      await until(
        async () => {
          const j = (await w.call('GET', `/api/jobs/${ids[0]}`)).body.data;
          return j.status === 'failed' && j.error?.code === 'TERMINATED' ? true : undefined;
        },
        'the closeout of the terminated job',
        60_000,
        100,
      );
      const history = await w.api.temporal.client.workflow.getHandle(batchId).fetchHistory();
      const signals = history.events!.flatMap((e) => e.workflowExecutionSignaledEventAttributes?.signalName ?? []);
      expect(signals, 'signals the batch received').to.not.include('jobFinished');
      expect(history.events!.at(-1)!.workflowExecutionCompletedEventAttributes).to.not.equal(undefined);
    });

    it('fails the running job and every job that never started with CANCELLED and the reason', async () => {
      const { batchId, ids } = await batchWithRunningFirstJob(4);
      const r = await w.call('POST', '/api/event-job/batches/fail-all', { batch_id: batchId, reason: 'stop' });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.data).to.include({ batch_id: batchId, failed_count: 4 });
      expect(r.body.data.message).to.be.a('string').and.not.equal('');

      const { final } = await waitBatch(w, batchId);
      expect(final).to.include({ status: 'completed', job_count: 4, completed_count: 0, failed_count: 4 });
      for (const id of ids) {
        const j = (await w.call('GET', `/api/jobs/${id}`)).body.data;
        expect(j.status, id).to.equal('failed');
        expect(j.error).to.include({ code: 'CANCELLED', message: 'stop' });
        expect(
          j.logs.some((l: { message: string }) => l.message.includes('CANCELLED')),
          JSON.stringify(j.logs),
        ).to.equal(true);
      }
    });

    it('cancels a large conversion that is running when fail-all comes, and counts exactly the jobs that failed', async () => {
      const jobs = [transformerJob(generatedHtml(3_000_000)), transformerJob(), transformerJob()];
      const r = await w.call('POST', '/api/jobs/batch', { batch_name: 'slow first', jobs });
      expect(r.status).to.equal(200);
      const batchId = r.body.data.batch_id;
      const ids: string[] = r.body.data.batch.jobs.map((j: { job_id: string }) => j.job_id);
      await until(
        async () => ((await w.call('GET', `/api/jobs/${ids[0]}`)).body.data.status === 'processing' ? true : undefined),
        'the large job to run',
        30_000,
        20,
      );
      const t0 = Date.now();
      const fail = await w.call('POST', '/api/event-job/batches/fail-all', { batch_id: batchId, reason: 'stop' });
      expect(fail.status).to.equal(200);
      const { final } = await waitBatch(w, batchId);
      expect(Date.now() - t0, 'the running conversion was not stopped').to.be.below(15_000);
      expect(final.failed_count, 'failed_count of fail-all against the batch’s own count').to.equal(
        fail.body.data.failed_count,
      );
      expect(final).to.include({ completed_count: 0, failed_count: 3 });
      for (const id of ids)
        expect((await w.call('GET', `/api/jobs/${id}`)).body.data.error).to.include({
          code: 'CANCELLED',
          message: 'stop',
        });
    });

    it('fails the jobs of an inactive batch, running or never started, and completes the batch', async () => {
      const { batchId, ids } = await batchWithRunningFirstJob(3);
      const off = await w.call('POST', `/api/event-job/batches/${batchId}/toggle-active`);
      expect(off.body.data.active).to.equal(false);
      const r = await w.call('POST', '/api/event-job/batches/fail-all', { batch_id: batchId, reason: 'stop' });
      expect(r.status).to.equal(200);
      expect(r.body.data.failed_count).to.equal(3);
      const { final } = await waitBatch(w, batchId);
      expect(final).to.include({ status: 'completed', completed_count: 0, failed_count: 3 });
      for (const id of ids)
        expect((await w.call('GET', `/api/jobs/${id}`)).body.data.error).to.include({
          code: 'CANCELLED',
          message: 'stop',
        });
    });

    it('holds a long-poll on a job the inactive batch has not started until it starts', async () => {
      const { batchId, ids } = await batchWithRunningFirstJob(2);
      await w.call('POST', `/api/event-job/batches/${batchId}/toggle-active`);
      // Nothing changes job 2 while the batch is inactive: the long-poll waits its time out.
      let t0 = Date.now();
      const still = await w.call('GET', `/api/jobs/${ids[1]}?wait=2`);
      expect(still.body.data.status).to.equal('pending');
      expect(Date.now() - t0, 'a long-poll on an unchanged job answered early').to.be.at.least(1800);
      // Its event stream stays open and quiet meanwhile (no burst of keep-alives).
      const quiet = await readSse(`${w.url}/api/jobs/${ids[1]}/events`, {}, 1500, true);
      expect(quiet.status).to.equal(200);
      expect(quiet.events).to.deep.equal([]);
      expect(quiet.comments.length, 'keep-alive comments in 1.5 s').to.be.at.most(1);
      // Once the batch is active again, the long-poll answers when the job starts.
      await until(
        async () => {
          const st = (await w.call('GET', `/api/jobs/${ids[0]}`)).body.data.status;
          return st === 'failed' ? true : undefined;
        },
        'the first job to end',
        20_000,
      );
      t0 = Date.now();
      const waiting = w.call('GET', `/api/jobs/${ids[1]}?wait=30`);
      await sleep(500);
      await w.call('POST', `/api/event-job/batches/${batchId}/toggle-active`);
      const changed = await waiting;
      expect(changed.body.data.status).not.to.equal('pending');
      expect(Date.now() - t0, 'the long-poll waited for its 30 s instead of the change').to.be.below(25_000);
      await waitBatch(w, batchId);
    });
  });

  describe('legacy event-job API', () => {
    // Nothing listens on port 9 of loopback: a session job fails at its first download (UPSTREAM_ERROR), at once.
    const session = {
      event: 'Conf 2025',
      session: 'Opening',
      url: 'http://127.0.0.1:9/opening',
      filename: 'opening.md',
      track: 'Main',
    };

    it('creates a session job, shows it in the legacy shape and restarts it after it failed', async () => {
      const r = await s.call('POST', '/api/event-job/jobs', {
        ...session,
        source_language: 'en',
        target_language: 'de',
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.data).to.have.all.keys('job_id', 'status');
      expect(r.body.data.status).to.equal('pending');
      const jobId = r.body.data.job_id;
      expect((await s.waitJob(jobId)).error.code).to.equal('UPSTREAM_ERROR');

      const got = await s.call('GET', `/api/event-job/jobs/${jobId}`);
      expect(got.status).to.equal(200);
      const d = got.body.data;
      expect(d).to.include({ job_id: jobId, status: 'failed' });
      expect(d.progress).to.have.all.keys('step', 'percent');
      expect(d.progress.step).to.be.a('string');
      expect(d.progress.percent).to.be.a('number');
      expect(d.results).to.have.all.keys('markdown_file', 'assets');
      expect(d.results.assets).to.deep.equal([]);
      expect(d.error.code).to.equal('UPSTREAM_ERROR');

      const restart = await s.call('POST', `/api/event-job/${jobId}/restart`);
      expect(restart.body.data).to.deep.equal({ job_id: jobId, status: 'pending', message: 'Job restarted' });
      const again = await s.waitJob(jobId);
      expect(again.status).to.equal('failed');
      expect(again.parameters).to.include(session);

      const missing = await s.call('GET', `/api/event-job/jobs/${UNKNOWN_JOB}`);
      expect(missing.status).to.equal(404);
      expect(missing.body.error.code).to.equal('JOB_NOT_FOUND');
    });

    it('rejects a session job without a required field, naming every missing one', async () => {
      for (const field of Object.keys(session)) {
        const { [field]: _drop, ...rest } = session as Record<string, string>;
        void _drop;
        const r = await s.call('POST', '/api/event-job/jobs', rest);
        expect(r.status, field).to.equal(400);
        expect(r.body.error.code).to.equal('VALIDATION_ERROR');
        expect(issuePaths(r.body), field).to.include(field);
      }
      const none = await s.call('POST', '/api/event-job/jobs', {});
      expect(none.status).to.equal(400);
      expect(issuePaths(none.body)).to.include.members(Object.keys(session));
    });

    it('creates a legacy batch, counts it and answers 400 NO_ARCHIVE for its archive once it finished without files', async () => {
      const jobs = [1, 2, 3].map((i) => ({
        event: 'Conf 2025',
        session: `Talk ${i}`,
        url: `http://127.0.0.1:9/talk-${i}`,
        filename: `talk-${i}`,
        track: 'Main',
      }));
      const r = await s.call('POST', '/api/event-job/batches', { batch_name: 'talks', jobs });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.data).to.have.all.keys('batch_id', 'batch_name', 'status', 'job_count');
      expect(r.body.data).to.include({ batch_name: 'talks', status: 'pending', job_count: 3 });
      const batchId = r.body.data.batch_id;
      expect(batchId).to.match(BATCH_ID);

      const early = await s.call('GET', `/api/event-job/batches/${batchId}/archive`);
      expect([202, 400], JSON.stringify(early.body)).to.include(early.status);
      if (early.status === 400) expect(early.body.error.code).to.equal('NO_ARCHIVE');

      const { final } = await waitBatch(s, batchId, 60_000, `/api/event-job/batches/${batchId}`);
      expect(final).to.include({
        batch_id: batchId,
        batch_name: 'talks',
        status: 'completed',
        active: true,
        job_count: 3,
        completed_count: 0,
        failed_count: 3,
      });
      expect(final.jobs).to.have.length(3);
      for (const j of final.jobs) expect(j).to.have.keys('job_id', 'status');

      const archive = await s.call('GET', `/api/event-job/batches/${batchId}/archive`);
      expect(archive.status).to.equal(400);
      expect(archive.body.error.code).to.equal('NO_ARCHIVE');
      const jobArchive = await s.call('GET', `/api/event-job/jobs/${final.jobs[0].job_id}/download-archive`);
      expect(jobArchive.status).to.equal(400);
      expect(jobArchive.body.error.code).to.equal('NO_ARCHIVE');

      // A finished batch keeps the flag that toggle-active flips.
      const off = await s.call('POST', `/api/event-job/batches/${batchId}/toggle-active`);
      expect(off.body.data).to.include({ batch_id: batchId, active: false });
      expect((await s.call('GET', `/api/event-job/batches/${batchId}`)).body.data.active).to.equal(false);
      // `{"active": …}` sets the flag: sent twice (a retried request), it stays what was asked.
      for (const wanted of [true, true, false, false]) {
        const set = await s.call('POST', `/api/event-job/batches/${batchId}/toggle-active`, { active: wanted });
        expect(set.body.data, JSON.stringify(set.body)).to.include({ batch_id: batchId, active: wanted });
      }
      const notBool = await s.call('POST', `/api/event-job/batches/${batchId}/toggle-active`, { active: 'yes' });
      expect(notBool.status).to.equal(400);
      expect(notBool.body.error.code).to.equal('VALIDATION_ERROR');

      expect((await s.call('GET', `/api/event-job/batches/${UNKNOWN_BATCH}`)).status).to.equal(404);
      expect((await s.call('GET', `/api/event-job/batches/${UNKNOWN_BATCH}/archive`)).status).to.equal(404);
    });

    it('rejects a legacy batch that is empty or has a job without session', async () => {
      const empty = await s.call('POST', '/api/event-job/batches', { batch_name: 'x', jobs: [] });
      expect(empty.status).to.equal(400);
      const bad = await s.call('POST', '/api/event-job/batches', {
        batch_name: 'x',
        jobs: [
          { event: 'e', session: 's', url: 'u' },
          { event: 'e', url: 'u' },
        ],
      });
      expect(bad.status).to.equal(400);
      expect(issuePaths(bad.body)).to.include('jobs.1.session');
    });

    it('accepts legacy batch jobs of event, session and url only: filename the sanitised session name, track general', async () => {
      const r = await s.call('POST', '/api/event-job/batches', {
        batch_name: 'spec shape',
        jobs: [
          { event: 'E', session: 'Open maps: for/everyone ', url: 'http://127.0.0.1:9/s' },
          { event: 'E', session: 'Two', url: 'http://127.0.0.1:9/t', filename: 'own', track: 'Maps' },
        ],
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const listed = (await s.call('GET', `/api/event-job/batches/${r.body.data.batch_id}`)).body.data.jobs as {
        job_id: string;
      }[];
      const params = await Promise.all(
        listed.map(async (j) => (await s.call('GET', `/api/jobs/${j.job_id}`)).body.data.parameters),
      );
      expect(params.map((p) => [p.filename, p.track])).to.deep.equal([
        ['Open maps- for-everyone', 'general'],
        ['own', 'Maps'],
      ]);
    });

    it('downloads job and batch archives and single files of finished transformer jobs', async () => {
      const r = await s.call('POST', '/api/jobs/batch', {
        batch_name: 'files',
        jobs: [transformerJob('<h1>One</h1>'), transformerJob('<h1>Two</h1>')],
      });
      const batchId = r.body.data.batch_id;
      const ids: string[] = r.body.data.batch.jobs.map((j: { job_id: string }) => j.job_id);
      await waitBatch(s, batchId);

      const batchZip = await download(`${s.url}/api/event-job/batches/${batchId}/archive`);
      expect(batchZip.status).to.equal(200);
      expect(batchZip.headers.get('content-type')).to.match(/^application\/zip/);
      expect(batchZip.headers.get('content-disposition')).to.match(/^attachment; filename="batch-[^"]+\.zip"/);
      const bz = unzip(batchZip.body);
      expect(bz.names).to.include.members(['manifest.json', `${ids[0]}/result.md`, `${ids[1]}/result.md`]);
      expect(bz.read(`${ids[1]}/result.md`)).to.equal('# Two');

      const jobZip = await download(`${s.url}/api/event-job/jobs/${ids[0]}/download-archive`);
      expect(jobZip.status).to.equal(200);
      expect(jobZip.headers.get('content-type')).to.match(/^application\/zip/);
      expect(unzip(jobZip.body).read('result.md')).to.equal('# One');

      const file = await rawRequest(s.url, `/api/event-job/files/${ids[0]}/result.md`);
      expect(file.status).to.equal(200);
      expect(file.text).to.equal('# One');
      expect(file.headers['content-type']).to.match(/^text\/markdown/);
      expect(file.headers['content-disposition']).to.match(/^attachment; filename="result\.md"/);
    });
  });
});
