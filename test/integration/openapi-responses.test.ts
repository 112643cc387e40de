import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { startStack, useStack, type Stack } from '../support/servers/stack';
import { idFromKey } from '../../api/services/job-starts';
import { responseChecker } from '../support/clients/openapi-schemas';
import { startOcrServer, type OcrServer } from '../support/servers/ocr-server';
import { buildPdf } from '../support/documents/pdf-factory';
import { holdJobOutput, rawRequest, transformerJob, until } from '../support/jobs';

// Real answers of the job, legacy event-job, files and PDF-job operations, on the real API and worker over loopback
// HTTP on a Temporal dev server, checked against the schemas GET /api/openapi.json documents for them.

const UNKNOWN_JOB = 'job-00000000-0000-4000-8000-000000000000';
// Nothing listens on port 9 of loopback: the session job fails at its first download, at once.
const SESSION = {
  event: 'Conf 2025',
  session: 'Opening',
  url: 'http://127.0.0.1:9/opening',
  filename: 'opening.md',
  track: 'Main',
};

describe('answers of the job operations against their documented schemas', function () {
  this.timeout(90_000);
  let s: Stack;
  let check: ReturnType<typeof responseChecker>;
  useStack((stack) => (s = stack));

  before(async () => {
    check = responseChecker((await s.call('GET', '/api/openapi.json')).body);
  });

  /**
   * Calls `url` and checks the answer against the schema documented for `template` (the OpenAPI path) and its status.
   */
  async function checked(
    method: string,
    template: string,
    url: string,
    body?: unknown,
  ): Promise<{ status: number; body: any }> {
    const r = await s.call(method, url, body);
    expect(
      check(method, template, r.status, r.body),
      `${method} ${url} ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`,
    ).to.deep.equal([]);
    return r;
  }

  it('POST /api/jobs/, GET /api/jobs/{job_id} (pending and completed), batches and the files listing', async () => {
    const created = await checked('POST', '/api/jobs/', '/api/jobs/', transformerJob());
    expect(created.status).to.equal(200);
    const jobId = created.body.data.job_id;
    await checked('GET', '/api/jobs/{job_id}', `/api/jobs/${jobId}`);
    const done = await s.waitJob(jobId);
    expect((await checked('GET', '/api/jobs/{job_id}', `/api/jobs/${jobId}`)).body.data.status).to.equal('completed');

    const listing = await rawRequest(s.url, `/api/event-job/files/${done.results.target_dir}`);
    expect(listing.status).to.equal(200);
    expect(check('GET', '/api/event-job/files/{path}', 200, listing.json())).to.deep.equal([]);
    for (const p of [`jobs/${jobId}/internal/results.json`, `jobs/${jobId}/out/none.md`]) {
      const r = await rawRequest(s.url, `/api/event-job/files/${p}`);
      expect(check('GET', '/api/event-job/files/{path}', r.status, r.json()), p).to.deep.equal([]);
    }

    const batch = await checked('POST', '/api/jobs/batch', '/api/jobs/batch', {
      batch_name: 'schemas',
      jobs: [transformerJob('<p>a</p>'), transformerJob('<p>b</p>')],
    });
    expect(batch.status).to.equal(200);
    await checked('GET', '/api/jobs/batch/{batch_id}', `/api/jobs/batch/${batch.body.data.batch_id}`);
  });

  it('the 202 of an archive asked of a running job', async () => {
    const key = `held-${Math.random().toString(36).slice(2)}`;
    const jobId = idFromKey('job', key);
    await holdJobOutput(s.api.store, jobId);
    expect((await s.call('POST', '/api/jobs/', transformerJob(), { 'Idempotency-Key': key })).status).to.equal(200);
    await until(
      async () => ((await s.call('GET', `/api/jobs/${jobId}`)).body.data?.status === 'processing' ? true : undefined),
      'the held job to be processing',
      30_000,
      20,
    );
    for (const template of ['/api/jobs/{job_id}/download-archive', '/api/event-job/jobs/{job_id}/download-archive']) {
      const r = await checked('GET', template, template.replace('{job_id}', jobId));
      expect(r.status, template).to.equal(202);
    }
  });

  it('every legacy event-job operation', async () => {
    const created = await checked('POST', '/api/event-job/jobs', '/api/event-job/jobs', SESSION);
    const jobId = created.body.data.job_id;
    expect((await s.waitJob(jobId)).status).to.equal('failed');
    await checked('GET', '/api/event-job/jobs/{job_id}', `/api/event-job/jobs/${jobId}`);
    expect(
      (await checked('POST', '/api/event-job/{job_id}/restart', `/api/event-job/${jobId}/restart`)).status,
    ).to.equal(200);
    await s.waitJob(jobId);
    expect(
      (await checked('POST', '/api/event-job/{job_id}/restart', `/api/event-job/${UNKNOWN_JOB}/restart`)).status,
    ).to.equal(404);

    const batch = await checked('POST', '/api/event-job/batches', '/api/event-job/batches', {
      batch_name: 'legacy',
      jobs: [SESSION, SESSION],
    });
    const batchId = batch.body.data.batch_id;
    await checked('GET', '/api/event-job/batches/{batch_id}', `/api/event-job/batches/${batchId}`);
    await checked(
      'POST',
      '/api/event-job/batches/{batch_id}/toggle-active',
      `/api/event-job/batches/${batchId}/toggle-active`,
    );
    await checked('POST', '/api/event-job/batches/fail-all', '/api/event-job/batches/fail-all', { batch_id: batchId });
    // Pending or processing (202), or finished with no files (400): each against its own documented schema.
    await checked('GET', '/api/event-job/batches/{batch_id}/archive', `/api/event-job/batches/${batchId}/archive`);
  });

  it('POST /api/pdf/job: accepted inside INPUT_ROOTS, 403 outside', async () => {
    const file = path.join(s.api.config.dataDir, 'inbox', 'schema.pdf');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, buildPdf({ pages: [{ kind: 'lines', lines: ['Schema.'] }] }));
    const ok = await checked('POST', '/api/pdf/job', '/api/pdf/job', { filename: file });
    expect(ok.status).to.equal(200);
    expect((await checked('POST', '/api/pdf/job', '/api/pdf/job', { filename: '/etc/hostname' })).status).to.equal(403);
    await s.waitJob(ok.body.data.job_id, 60_000);
  });
});

describe('answers of the external OCR operations against their documented schemas', function () {
  this.timeout(90_000);
  let s: Stack;
  let ocr: OcrServer;
  before(async function () {
    this.timeout(120_000);
    ocr = await startOcrServer();
    s = await startStack({ EXTERNAL_OCR_URL: ocr.url });
  });
  after(async () => {
    await s?.stop();
    await ocr?.close();
  });

  async function postOcr(waitMs: string): Promise<{ status: number; body: any }> {
    const form = new FormData();
    const pdf = buildPdf({
      pages: [
        { kind: 'lines', lines: ['Erste Seite.'] },
        { kind: 'lines', lines: ['Zweite Seite.'] },
      ],
    });
    form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), 'zwei.pdf');
    form.append('wait_ms', waitMs);
    const res = await fetch(`${s.url}/api/pdf/process-external-ocr`, {
      method: 'POST',
      body: form,
      signal: AbortSignal.timeout(60_000),
    });
    return { status: res.status, body: await res.json() };
  }

  it('the 200 result, the 202 of a request that does not wait, and the pages archive answers', async () => {
    const check = responseChecker((await s.call('GET', '/api/openapi.json')).body);
    const done = await postOcr('30000');
    expect(done.status, JSON.stringify(done.body).slice(0, 300)).to.equal(200);
    expect(check('POST', '/api/pdf/process-external-ocr', 200, done.body)).to.deep.equal([]);
    const accepted = await postOcr('0');
    expect(accepted.status).to.equal(202);
    expect(check('POST', '/api/pdf/process-external-ocr', 202, accepted.body)).to.deep.equal([]);
    // Running (202) or finished (the ZIP): a JSON answer is checked against the schema of its status.
    const archive = await s.call('GET', `/api/pdf/jobs/${accepted.body.data.job_id}/download-pages-archive`);
    if (archive.headers.get('content-type')?.startsWith('application/json')) {
      expect(check('GET', '/api/pdf/jobs/{job_id}/download-pages-archive', archive.status, archive.body)).to.deep.equal(
        [],
      );
    } else expect(archive.status).to.equal(200);
    await s.waitJob(accepted.body.data.job_id, 60_000);
  });
});
