import { createHash } from 'node:crypto';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { useStack, type Stack } from '../support/servers/stack';
import { idFromKey } from '../../api/services/job-starts';
import {
  download,
  generatedHtml,
  holdJobOutput,
  pdfJob,
  SMALL_HTML,
  transformerJob,
  unzip,
  until,
} from '../support/jobs';

// The real API and worker (in this process) on the shared Temporal dev server, over real HTTP on loopback.

const JOB_ID = /^job-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const UNKNOWN_JOB = 'job-00000000-0000-4000-8000-000000000000';
const UNKNOWN_BATCH = 'batch-00000000-0000-4000-8000-000000000000';
const LEVELS = ['debug', 'info', 'warning', 'error'];

const uniqueKey = (name: string) => `${name}-${Math.random().toString(36).slice(2)}`;

describe('jobs API on the real engine', function () {
  this.timeout(60_000);
  let s: Stack;
  useStack((stack) => (s = stack));

  /** Creates a job and answers its id (the response must be a 200). */
  async function create(body: unknown, headers: Record<string, string> = {}): Promise<string> {
    const r = await s.call('POST', '/api/jobs/', body, headers);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body.data.job_id;
  }

  /** A transformer job held in `processing` (see holdJobOutput); resolves once it is seen processing. */
  async function heldRunningJob(): Promise<string> {
    const key = uniqueKey('held');
    const jobId = idFromKey('job', key);
    await holdJobOutput(s.api.store, jobId);
    expect(await create(transformerJob(), { 'Idempotency-Key': key })).to.equal(jobId);
    let last: unknown;
    await until(
      async () => {
        const r = await s.call('GET', `/api/jobs/${jobId}`);
        last = r.body;
        return r.body.data?.status === 'processing' ? true : undefined;
      },
      'the held job to be processing',
      30_000,
      20,
    ).catch((e: Error) => {
      throw new Error(`${e.message}; last seen ${JSON.stringify(last)}`);
    });
    return jobId;
  }

  describe('creating and reading a job', () => {
    it('accepts a transformer job as pending and completes it with Markdown, progress 100, results and logs', async () => {
      const body = transformerJob(SMALL_HTML);
      const r = await s.call('POST', '/api/jobs/', { ...body, user_id: 'user-1' });
      expect(r.status).to.equal(200);
      expect(r.body.status).to.equal('success');
      const { job_id, job } = r.body.data;
      expect(job_id).to.match(JOB_ID);
      expect(job).to.include({ job_id, job_type: 'transformer', status: 'pending' });
      expect(job.created_at).to.match(ISO);
      expect(job.parameters).to.deep.equal(body.parameters);

      await s.waitJob(job_id);
      const got = await s.call('GET', `/api/jobs/${job_id}`);
      expect(got.status).to.equal(200);
      const d = got.body.data;
      expect(d).to.include({ job_id, job_type: 'transformer', status: 'completed', user_id: 'user-1' });
      expect(d.created_at).to.equal(job.created_at);
      expect(Date.parse(d.updated_at)).to.be.at.least(Date.parse(d.created_at));
      expect(d.progress.percent).to.equal(100);
      expect(d.progress.step).to.be.a('string');
      expect(d.progress.message).to.be.a('string');
      const text: string = d.results.structured_data.extracted_text;
      expect(text)
        .to.include('# Report')
        .and.to.include('**world**')
        .and.to.match(/^[-*]\s+one$/m);
      expect(d.results.structured_data.metadata).to.be.an('object');
      expect(d.results.assets).to.be.an('array').with.length.greaterThan(0);
      expect(d.logs).to.be.an('array').with.length.greaterThan(0);
      for (const l of d.logs) {
        expect(l.timestamp).to.match(ISO);
        expect(LEVELS).to.include(l.level);
        expect(l.message).to.be.a('string').and.not.equal('');
      }
      expect(d.logs.map((l: { message: string }) => l.message)).to.include('Job completed');
      expect(d).not.to.have.property('error');
    });

    it('reports progress through long-polls that never goes backwards and is 100 only once completed', async () => {
      const jobId = await create(transformerJob());
      const seen: { status: string; percent: number }[] = [];
      for (let i = 0; i < 60; i++) {
        const r = await s.call('GET', `/api/jobs/${jobId}?wait=5`);
        expect(r.status).to.equal(200);
        seen.push({ status: r.body.data.status, percent: r.body.data.progress.percent });
        if (r.body.data.status === 'completed' || r.body.data.status === 'failed') break;
      }
      expect(seen.at(-1)).to.deep.equal({ status: 'completed', percent: 100 });
      const order = ['pending', 'processing', 'completed'];
      for (let i = 1; i < seen.length; i++) {
        expect(seen[i].percent, JSON.stringify(seen)).to.be.at.least(seen[i - 1].percent);
        expect(order.indexOf(seen[i].status), JSON.stringify(seen)).to.be.at.least(order.indexOf(seen[i - 1].status));
      }
      for (const o of seen) if (o.status !== 'completed') expect(o.percent, JSON.stringify(seen)).to.be.below(100);
    });

    it('answers a long-poll on a running job as soon as the job changes, well before the wait is over', async function () {
      this.timeout(180_000);
      // A job of one step finishes within a second; whenever its first read shows it unfinished, a long-poll must come
      // back with a changed job long before its 20 s are up (a wait far above the job's time, even on a busy machine).
      // Its page is above the size converted in the job's first workflow task (transformer.pipeline.ts
      // SMALL_TRANSFORM_CHARS): such a small job is never seen unfinished once its first task has run.
      let observed = 0;
      for (let attempt = 0; attempt < 8 && observed < 2; attempt++) {
        const jobId = await create(transformerJob(generatedHtml(20_000)));
        const before = (await s.call('GET', `/api/jobs/${jobId}`)).body.data;
        if (before.status === 'completed' || before.status === 'failed') continue;
        const t0 = Date.now();
        const after = (await s.call('GET', `/api/jobs/${jobId}?wait=20`)).body.data;
        const elapsed = Date.now() - t0;
        expect(elapsed, 'long-poll answered late').to.be.below(15_000);
        const changed =
          after.status !== before.status ||
          after.progress.percent !== before.progress.percent ||
          after.logs.length !== before.logs.length ||
          after.updated_at !== before.updated_at;
        expect(changed, `answered without a change: ${JSON.stringify({ before, after })}`).to.equal(true);
        observed++;
      }
      // A job kept running for seconds without a change: the long-poll waits while nothing changes and ends when
      // the job does (it fails at the end of its step's retries, about 3 s in), long before its 30 s are up.
      const held = await heldRunningJob();
      const before = (await s.call('GET', `/api/jobs/${held}`)).body.data;
      expect(before.status).to.equal('processing');
      const t0 = Date.now();
      const after = (await s.call('GET', `/api/jobs/${held}?wait=30`)).body.data;
      const heldFor = Date.now() - t0;
      expect(after.status).to.equal('failed');
      expect(heldFor, 'answered before the job changed').to.be.above(500);
      expect(heldFor, 'answered long after the job changed').to.be.below(25_000);
      expect(observed, 'never saw a small job unfinished').to.be.at.least(1);
    });

    it('lets twenty long-polls of one job share its workflow queries instead of each querying it', async () => {
      const held = await heldRunningJob();
      // Counted at the API's own connection to the real server (every call still goes through).
      const service = s.api.temporal.connection.workflowService;
      const query = service.queryWorkflow.bind(service);
      let queries = 0;
      service.queryWorkflow = ((...args: Parameters<typeof query>) => {
        queries++;
        return query(...args);
      }) as typeof service.queryWorkflow;
      try {
        const answers = await Promise.all(Array.from({ length: 20 }, () => s.call('GET', `/api/jobs/${held}?wait=2`)));
        expect(answers.map((r) => r.status)).to.deep.equal(Array(20).fill(200));
      } finally {
        service.queryWorkflow = query;
      }
      // Unshared, each of the 20 readers queries at least once (at its deadline) and every 500 ms meanwhile: 20 at
      // the very least. Shared: one query per 500 ms of the wait for all of them, plus each reader's first read.
      expect(queries, 'workflow queries for 20 readers').to.be.below(20);
    });
  });

  describe('validation and unknown ids', () => {
    async function expectValidation(
      body: string,
      headers: Record<string, string> = { 'content-type': 'application/json' },
      path?: string,
    ) {
      const res = await fetch(`${s.url}/api/jobs/`, { method: 'POST', headers, body });
      const json = (await res.json()) as any;
      expect(res.status, JSON.stringify(json)).to.equal(400);
      expect(json.status).to.equal('error');
      expect(json.error.code).to.equal('VALIDATION_ERROR');
      expect(json.error.details.issues).to.be.an('array').that.is.not.empty;
      for (const i of json.error.details.issues) expect(i).to.have.all.keys('path', 'message');
      if (path !== undefined) expect(json.error.details.issues.map((i: { path: string }) => i.path)).to.include(path);
      return json;
    }

    it('rejects malformed JSON with 400 VALIDATION_ERROR', async () => {
      await expectValidation('{"job_type": "transformer", ');
    });

    it('rejects an unknown, unsupported or missing job_type naming the field', async () => {
      await expectValidation(JSON.stringify({ job_type: 'imageocr', parameters: {} }), undefined, 'job_type');
      await expectValidation(JSON.stringify({ job_type: 'nope', parameters: {} }), undefined, 'job_type');
      await expectValidation(
        JSON.stringify({ parameters: { operation: 'html-to-markdown', html: 'x' } }),
        undefined,
        'job_type',
      );
    });

    it('rejects parameters that are not an object', async () => {
      await expectValidation(JSON.stringify({ job_type: 'transformer', parameters: 'html' }), undefined, 'parameters');
      await expectValidation(
        JSON.stringify({ job_type: 'transformer', parameters: ['html'] }),
        undefined,
        'parameters',
      );
    });

    it('rejects a transformer job without html at parameters.html', async () => {
      await expectValidation(
        JSON.stringify({ job_type: 'transformer', parameters: { operation: 'html-to-markdown' } }),
        undefined,
        'parameters.html',
      );
    });

    it('rejects a user_id longer than 200 characters', async () => {
      await expectValidation(JSON.stringify({ ...transformerJob(), user_id: 'u'.repeat(201) }), undefined, 'user_id');
    });

    it('answers 415 for a text/plain body', async () => {
      const res = await fetch(`${s.url}/api/jobs/`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify(transformerJob()),
      });
      const json = (await res.json()) as any;
      expect(res.status).to.equal(415);
      expect(json.error.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
    });

    it('answers 404 JOB_NOT_FOUND for an unknown job id, well-formed or not', async () => {
      for (const id of [UNKNOWN_JOB, 'nope', 'job-123']) {
        const r = await s.call('GET', `/api/jobs/${id}`);
        expect(r.status, id).to.equal(404);
        expect(r.body.status).to.equal('error');
        expect(r.body.error.code).to.equal('JOB_NOT_FOUND');
      }
      const waited = await s.call('GET', `/api/jobs/${UNKNOWN_JOB}?wait=2`);
      expect(waited.status).to.equal(404);
    });

    it('answers 404 BATCH_NOT_FOUND for an unknown batch id, well-formed or not', async () => {
      for (const id of [UNKNOWN_BATCH, 'nope']) {
        const r = await s.call('GET', `/api/jobs/batch/${id}`);
        expect(r.status, id).to.equal(404);
        expect(r.body.error.code).to.equal('BATCH_NOT_FOUND');
      }
    });
  });

  describe('failure and restart', () => {
    it('fails a pdf job for a missing file with FILE_NOT_FOUND, restarts it under the same id and keeps the first run’s logs', async () => {
      const jobId = await create(pdfJob());
      const first = await s.waitJob(jobId);
      expect(first.status).to.equal('failed');
      expect(first.error).to.include({ code: 'FILE_NOT_FOUND' });
      expect(first.error.message).to.be.a('string').and.not.equal('');
      expect(first.progress.percent).to.be.below(100);
      const firstLogs: { timestamp: string; message: string }[] = first.logs;
      expect(firstLogs.some((l) => l.message.includes('FILE_NOT_FOUND'))).to.equal(true);

      const r = await s.call('POST', `/api/event-job/${jobId}/restart`);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.status).to.equal('success');
      expect(r.body.data).to.deep.equal({ job_id: jobId, status: 'pending', message: 'Job restarted' });

      const second = await s.waitJob(jobId);
      expect(second.job_id).to.equal(jobId);
      expect(second.status).to.equal('failed');
      expect(second.error.code).to.equal('FILE_NOT_FOUND');
      const messages: string[] = second.logs.map((l: { message: string }) => l.message);
      // The first run's lines come first, unchanged, then the restart line, then the second run's lines.
      expect(second.logs.slice(0, firstLogs.length)).to.deep.equal(firstLogs);
      const restartAt = messages.indexOf('Job restarted');
      expect(restartAt).to.equal(firstLogs.length);
      expect(
        messages.slice(restartAt + 1).some((m) => m.includes('FILE_NOT_FOUND')),
        'the second run failed again',
      ).to.equal(true);
      expect(Date.parse(second.updated_at)).to.be.at.least(Date.parse(first.updated_at));
    });

    it('fails a job whose step keeps failing on an unexpected error with INTERNAL_ERROR, after its retries, naming no server path', async () => {
      const jobId = await heldRunningJob();
      const t0 = Date.now();
      const done = await s.waitJob(jobId);
      expect(done.status).to.equal('failed');
      expect(Date.now() - t0, 'the step was retried before the job failed').to.be.above(1000);
      expect(done.error.code).to.equal('INTERNAL_ERROR');
      const shown = JSON.stringify({ error: done.error, logs: done.logs });
      expect(shown).not.to.include(s.api.config.dataDir);
      expect(shown).not.to.match(/EISDIR|\/tmp\//);
      expect(done.logs.at(-1)).to.include({ level: 'error' });
    });

    it('refuses a second restart while the restarted run has not failed yet', async () => {
      // A held job (holdJobOutput): each run sits in its step's retries for seconds before failing, so the restarted
      // run is still going when the second request arrives, however slow the machine (a job that failed at once,
      // as a missing file does, could fail again between the two requests and make the second restart legitimate).
      const key = uniqueKey('restart-twice');
      const jobId = idFromKey('job', key);
      await holdJobOutput(s.api.store, jobId);
      expect(await create(transformerJob(), { 'Idempotency-Key': key })).to.equal(jobId);
      expect((await s.waitJob(jobId)).status).to.equal('failed');
      const [a, b] = await Promise.all([
        s.call('POST', `/api/event-job/${jobId}/restart`),
        s.call('POST', `/api/event-job/${jobId}/restart`),
      ]);
      expect([a.status, b.status].sort()).to.deep.equal([200, 409]);
      expect([a, b].find((x) => x.status === 409)!.body.error.code).to.equal('INVALID_STATE');
      const done = await s.waitJob(jobId);
      expect(done.status).to.equal('failed');
      expect(done.logs.filter((l: { message: string }) => l.message === 'Job restarted')).to.have.length(1);
    });

    it('answers 409 INVALID_STATE to a restart of a completed or running job and 404 for an unknown one', async () => {
      const done = await create(transformerJob());
      expect((await s.waitJob(done)).status).to.equal('completed');
      const r = await s.call('POST', `/api/event-job/${done}/restart`);
      expect(r.status).to.equal(409);
      expect(r.body.error.code).to.equal('INVALID_STATE');
      expect(
        (await s.call('GET', `/api/jobs/${done}`)).body.data.status,
        'the refused restart changed nothing',
      ).to.equal('completed');

      const running = await heldRunningJob();
      const r2 = await s.call('POST', `/api/event-job/${running}/restart`);
      expect(r2.status).to.equal(409);
      expect(r2.body.error.code).to.equal('INVALID_STATE');

      const r3 = await s.call('POST', `/api/event-job/${UNKNOWN_JOB}/restart`);
      expect(r3.status).to.equal(404);
      expect(r3.body.error.code).to.equal('JOB_NOT_FOUND');
    });
  });

  describe('Idempotency-Key', () => {
    it('answers the same job for a repeated key and a new job for another key', async () => {
      const key = uniqueKey('job');
      const a = await create(transformerJob(), { 'Idempotency-Key': key });
      const b = await create(transformerJob(), { 'Idempotency-Key': key });
      const c = await create(transformerJob(), { 'Idempotency-Key': `${key}-other` });
      expect(b).to.equal(a);
      expect(c).not.to.equal(a);
      expect((await s.waitJob(a)).status).to.equal('completed');
      expect((await s.waitJob(c)).status).to.equal('completed');
      // After the job finished, the key still names it.
      expect(await create(transformerJob(), { 'Idempotency-Key': key })).to.equal(a);
    });

    it('answers one job to concurrent requests with the same key', async () => {
      const key = uniqueKey('concurrent');
      const replies = await Promise.all(
        Array.from({ length: 4 }, () => s.call('POST', '/api/jobs/', transformerJob(), { 'Idempotency-Key': key })),
      );
      for (const r of replies) expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const ids = new Set(replies.map((r) => r.body.data.job_id));
      expect(ids.size).to.equal(1);
      const done = await s.waitJob([...ids][0]);
      expect(done.status).to.equal('completed');
      expect(done.logs.filter((l: { message: string }) => l.message === 'Job completed')).to.have.length(1);
    });

    it('answers the same batch and job ids for a repeated batch key, also concurrently, and another batch for another key', async () => {
      const key = uniqueKey('batch');
      const body = { batch_name: 'idem', jobs: [transformerJob('<p>a</p>'), transformerJob('<p>b</p>'), pdfJob()] };
      const [a, b] = await Promise.all([
        s.call('POST', '/api/jobs/batch', body, { 'Idempotency-Key': key }),
        s.call('POST', '/api/jobs/batch', body, { 'Idempotency-Key': key }),
      ]);
      const c = await s.call('POST', '/api/jobs/batch', body, { 'Idempotency-Key': key });
      const d = await s.call('POST', '/api/jobs/batch', body, { 'Idempotency-Key': `${key}-other` });
      for (const r of [a, b, c, d]) expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const ids = (r: typeof a) => r.body.data.batch.jobs.map((j: { job_id: string }) => j.job_id);
      expect(b.body.data.batch_id).to.equal(a.body.data.batch_id);
      expect(c.body.data.batch_id).to.equal(a.body.data.batch_id);
      expect(ids(b)).to.deep.equal(ids(a));
      expect(ids(c)).to.deep.equal(ids(a));
      expect(d.body.data.batch_id).not.to.equal(a.body.data.batch_id);
      expect(ids(d).filter((id: string) => ids(a).includes(id))).to.deep.equal([]);

      const batchId = a.body.data.batch_id;
      const final = await until(async () => {
        const r = await s.call('GET', `/api/jobs/batch/${batchId}`);
        return r.body.data.status === 'completed' ? r.body.data : undefined;
      }, 'the batch to complete');
      expect(final).to.include({ job_count: 3, completed_count: 2, failed_count: 1 });
      for (const id of ids(a)) expect((await s.call('GET', `/api/jobs/${id}`)).body.data.batch_id).to.equal(batchId);
    });
  });

  describe('archives', () => {
    it('downloads a completed job’s ZIP with result.md and a manifest listing sha256 of every file', async () => {
      const jobId = await create(transformerJob());
      const done = await s.waitJob(jobId);
      expect(done.status).to.equal('completed');
      const res = await download(`${s.url}/api/jobs/${jobId}/download-archive`);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^application\/zip/);
      expect(res.headers.get('content-disposition')).to.match(new RegExp(`^attachment; filename="${jobId}\\.zip"`));
      expect(res.body.subarray(0, 4).toString('latin1')).to.equal('PK\x03\x04');

      const zip = unzip(res.body);
      expect(zip.names).to.include.members(['result.md', 'manifest.json']);
      const md = zip.read('result.md');
      expect(md).to.equal(done.results.structured_data.extracted_text);
      const manifest = JSON.parse(zip.read('manifest.json'));
      expect(manifest).to.include({ job_id: jobId, job_type: 'transformer', status: 'completed' });
      const entry = manifest.files.find((f: { name: string }) => f.name === 'result.md');
      expect(entry, JSON.stringify(manifest)).to.be.an('object');
      expect(entry.size).to.equal(Buffer.byteLength(md));
      expect(entry.sha256).to.equal(createHash('sha256').update(md).digest('hex'));
      for (const f of manifest.files) expect(f.sha256).to.match(/^[0-9a-f]{64}$/);
      // Internal state (results.json, steps) never leaks into the archive.
      expect(zip.names.filter((n) => n.includes('internal') || n.includes('steps'))).to.deep.equal([]);
    });

    it('answers 400 NO_ARCHIVE for a failed job without files, 202 for a running one and 404 for an unknown one', async () => {
      const failed = await create(pdfJob());
      expect((await s.waitJob(failed)).status).to.equal('failed');
      const r = await s.call('GET', `/api/jobs/${failed}/download-archive`);
      expect(r.status).to.equal(400);
      expect(r.body.error.code).to.equal('NO_ARCHIVE');

      const running = await heldRunningJob();
      const r2 = await s.call('GET', `/api/jobs/${running}/download-archive`);
      expect(r2.status).to.equal(202);
      expect(r2.body.data).to.include({ job_id: running, status: 'processing' });

      // A large page converts for seconds; meanwhile its archive is not ready either.
      const large = await create(transformerJob(generatedHtml(3_000_000)));
      await until(
        async () => ((await s.call('GET', `/api/jobs/${large}`)).body.data.status === 'processing' ? true : undefined),
        'the large job to run',
        30_000,
        20,
      );
      const r4 = await s.call('GET', `/api/jobs/${large}/download-archive`);
      expect(r4.status, JSON.stringify(r4.body)).to.equal(202);
      expect(r4.body.data).to.include({ job_id: large, status: 'processing' });
      expect((await s.waitJob(large, 60_000)).status).to.equal('completed');
      expect((await download(`${s.url}/api/jobs/${large}/download-archive`)).status).to.equal(200);

      const r3 = await s.call('GET', `/api/jobs/${UNKNOWN_JOB}/download-archive`);
      expect(r3.status).to.equal(404);
      expect(r3.body.error.code).to.equal('JOB_NOT_FOUND');
    });
  });

  describe('synchronous transformer endpoints', () => {
    it('converts HTML to Markdown and answers {html, markdown}', async () => {
      const r = await s.call('POST', '/api/transformer/html-to-markdown', { html: SMALL_HTML });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.status).to.equal('success');
      expect(r.body.data).to.have.all.keys('html', 'markdown');
      expect(r.body.data.html).to.equal(SMALL_HTML);
      expect(r.body.data.markdown).to.include('# Report').and.include('**world**');
    });

    it('extracts tables with colspan expanded into headers and rows', async () => {
      const html = `<p>intro</p>
        <table><thead><tr><th>Name</th><th colspan="2">Scores</th></tr></thead>
        <tbody><tr><td>Ann</td><td>1</td><td>2</td></tr><tr><td colspan="3">total</td></tr></tbody></table>
        <table><tr><th>K</th><th>V</th></tr><tr><td>a</td><td>b</td></tr></table>`;
      const r = await s.call('POST', '/api/transformer/extract-tables', { html });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.data).to.have.all.keys('tables');
      const [t1, t2] = r.body.data.tables;
      expect(r.body.data.tables).to.have.length(2);
      expect(t1.headers).to.deep.equal(['Name', 'Scores', 'Scores']);
      expect(t1.rows).to.deep.equal([
        ['Ann', '1', '2'],
        ['total', 'total', 'total'],
      ]);
      expect(t2).to.deep.include({ headers: ['K', 'V'], rows: [['a', 'b']] });
    });

    it('answers 400 without html and 415 for a body that is not JSON', async () => {
      for (const path of ['/api/transformer/html-to-markdown', '/api/transformer/extract-tables']) {
        const r = await s.call('POST', path, {});
        expect(r.status, path).to.equal(400);
        expect(r.body.error.code).to.equal('VALIDATION_ERROR');
        expect(r.body.error.details.issues.map((i: { path: string }) => i.path)).to.include('html');
        const res = await fetch(s.url + path, {
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: SMALL_HTML,
        });
        expect(res.status, path).to.equal(415);
        expect(((await res.json()) as any).error.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
      }
    });
  });
});
