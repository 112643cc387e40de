import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { useStack, type Stack } from '../support/servers/stack';
import { buildPdf, corruptPdf, scannedPdf, zeroPagePdf } from '../support/documents/pdf-factory';
import { postPdf } from '../support/clients/pdf-http';
import { until } from '../support/jobs';

// Refused inputs of POST /api/pdf/process, and POST /api/pdf/job and pdf jobs for files in the data directory
// (spec §4.2, contract §1 and §6), on the real API and worker over loopback HTTP, on a Temporal dev server.

const TEXT_PDF = buildPdf({ pages: [{ kind: 'lines', lines: ['Ein gültiges Dokument über Größen.'] }] });

describe('PDF endpoints refusing bad input and reading server files', function () {
  this.timeout(90_000);
  let s: Stack;
  useStack((stack) => (s = stack));

  describe('POST /api/pdf/process with bad input', () => {
    const cases: [string, () => Promise<Buffer | undefined>, Record<string, string>, number, string][] = [
      [
        'a PNG instead of a PDF',
        () => readFile(new URL('../../samples/image.png', import.meta.url)),
        {},
        400,
        'INVALID_FORMAT',
      ],
      ['a corrupt PDF', async () => corruptPdf(), {}, 422, 'UNPROCESSABLE_INPUT'],
      [
        'an encrypted PDF',
        async () => buildPdf({ userPassword: 'geheim', pages: [{ kind: 'lines', lines: ['Vertraulich'] }] }),
        {},
        422,
        'UNPROCESSABLE_INPUT',
      ],
      ['a PDF without pages', async () => zeroPagePdf(), {}, 422, 'UNPROCESSABLE_INPUT'],
      ['an empty file', async () => Buffer.alloc(0), {}, 422, 'UNPROCESSABLE_INPUT'],
      [
        'a form without the file field',
        async () => undefined,
        { extraction_method: 'native' },
        400,
        'VALIDATION_ERROR',
      ],
      [
        'the unknown extraction method magic',
        async () => TEXT_PDF,
        { extraction_method: 'magic' },
        400,
        'VALIDATION_ERROR',
      ],
    ];
    for (const [name, file, fields, status, code] of cases) {
      it(`answers ${status} ${code} within a few seconds for ${name}`, async () => {
        const r = await postPdf(s, fields, await file());
        expect(r.status, JSON.stringify(r.body)).to.equal(status);
        expect(r.body.status).to.equal('error');
        expect(r.body.error.code).to.equal(code);
        expect(r.body.error.message).to.be.a('string').and.not.equal('');
        expect(r.ms, 'answer time').to.be.lessThan(5000);
      });
    }

    it('answers 400 INVALID_FORMAT with the error type and the supported formats for a file that is not a PDF', async () => {
      const r = await postPdf(s, {}, Buffer.from('just some plain text, no PDF header'), 'notes.txt');
      expect(r.status).to.equal(400);
      expect(r.body.error.code).to.equal('INVALID_FORMAT');
      expect(r.body.error.details.error_type).to.be.a('string');
      expect(r.body.error.details.supported_formats).to.be.an('array').that.is.not.empty;
    });

    it('leaves no upload behind after any of the refused inputs above', async () => {
      expect((await s.worker.store.list('uploads/')).map((b) => b.key)).to.deep.equal([]);
    });

    it('answers 415 UNSUPPORTED_MEDIA_TYPE for a JSON body instead of multipart', async () => {
      const t0 = Date.now();
      const r = await s.call('POST', '/api/pdf/process', { extraction_method: 'native' });
      expect(r.status, JSON.stringify(r.body)).to.equal(415);
      expect(r.body.error.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
      expect(Date.now() - t0).to.be.lessThan(5000);
    });
  });

  describe('POST /api/pdf/job', () => {
    async function startJob(body: Record<string, unknown>): Promise<string> {
      const r = await s.call('POST', '/api/pdf/job', body);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.data.status).to.equal('pending');
      return r.body.data.job_id;
    }

    it('completes a job for a PDF inside the data directory with its extracted text', async () => {
      const dir = path.join(s.api.config.dataDir, 'inbox');
      await mkdir(dir, { recursive: true });
      const file = path.join(dir, 'bericht.pdf');
      await writeFile(file, TEXT_PDF);
      const job = await s.waitJob(await startJob({ filename: file, extraction_method: 'native' }), 60_000);
      expect(job.status, JSON.stringify(job.error)).to.equal('completed');
      expect(job.results.structured_data.extracted_text).to.equal('Ein gültiges Dokument über Größen.');
    });

    /** The ids of the jobs this stack's API started since `since`, as Temporal lists them. */
    async function jobsStartedSince(since: Date): Promise<string[]> {
      const ids: string[] = [];
      const query = `WorkflowType = "jobWorkflow" AND TaskQueue = "${s.api.temporal.queues.io}" AND StartTime >= "${since.toISOString()}"`;
      for await (const w of s.api.temporal.client.workflow.list({ query })) ids.push(w.workflowId);
      return ids.sort();
    }

    it('refuses files outside the allowed roots with 403 FORBIDDEN at request time and starts no job for them', async () => {
      const inside = path.join(s.api.config.dataDir, 'inbox', 'erlaubt.pdf');
      await mkdir(path.dirname(inside), { recursive: true });
      await writeFile(inside, TEXT_PDF);
      // A symlink inside the data directory that leads out of it, and a missing file reached through `..`.
      const link = path.join(s.api.config.dataDir, 'inbox', 'passwd-link.pdf');
      await symlink('/etc/passwd', link);
      const since = new Date();
      for (const filename of [
        '/etc/passwd',
        link,
        path.join(s.api.config.dataDir, ...Array(20).fill('..'), 'nowhere.pdf'),
        'relative/to/cwd.pdf',
      ]) {
        const r = await s.call('POST', '/api/pdf/job', { filename });
        expect(r.status, `${filename}: ${JSON.stringify(r.body)}`).to.equal(403);
        expect(r.body.error.code).to.equal('FORBIDDEN');
        expect(r.body.error.details.filename).to.equal(filename);
        expect(JSON.stringify(r.body)).not.to.match(/job-[0-9a-f]{8}-/);
      }
      // A file inside the roots still gives a job: once Temporal lists it, it is the only job started since.
      const allowed = await startJob({ filename: inside });
      const started = await until(
        async () => {
          const ids = await jobsStartedSince(since);
          return ids.includes(allowed) ? ids : undefined;
        },
        'the allowed job in the workflow list',
        30_000,
        200,
      );
      expect(started).to.deep.equal([allowed]);
      expect((await s.waitJob(allowed, 60_000)).status).to.equal('completed');
    });

    it('still fails a pdf job created through POST /api/jobs/ for /etc/passwd with FORBIDDEN (the worker checks too)', async () => {
      const r = await s.call('POST', '/api/jobs/', { job_type: 'pdf', parameters: { filename: '/etc/passwd' } });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const job = await s.waitJob(r.body.data.job_id, 30_000);
      expect(job.status).to.equal('failed');
      expect(job.error.code).to.equal('FORBIDDEN');
    });

    it('fails the job with FILE_NOT_FOUND for a missing file inside the data directory', async () => {
      const job = await s.waitJob(
        await startJob({ filename: path.join(s.api.config.dataDir, 'nowhere', 'missing.pdf') }),
        30_000,
      );
      expect(job.status).to.equal('failed');
      expect(job.error.code).to.equal('FILE_NOT_FOUND');
    });

    it('answers 400 VALIDATION_ERROR without a filename', async () => {
      const r = await s.call('POST', '/api/pdf/job', { extraction_method: 'native' });
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_ERROR');
    });
  });

  describe('page reuse across jobs', () => {
    it('reuses the OCR pages of an earlier local_ocr job on the same file and says so in the logs', async () => {
      const file = path.join(s.api.config.dataDir, 'scan-4.pdf');
      await writeFile(
        file,
        await scannedPdf([
          'Erste gescannte Seite.',
          'Zweite gescannte Seite.',
          'Dritte gescannte Seite.',
          'Vierte gescannte Seite.',
        ]),
      );
      const run = async () => {
        const r = await s.call('POST', '/api/jobs/', {
          job_type: 'pdf',
          parameters: { filename: file, extraction_method: 'local_ocr' },
        });
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        const job = await s.waitJob(r.body.data.job_id, 60_000);
        expect(job.status, JSON.stringify(job.error)).to.equal('completed');
        return (job.logs as { message: string }[]).map((l) => l.message);
      };
      const first = await run();
      expect(
        first.some((m) => m.includes('reused from earlier work')),
        'the first job reuses nothing',
      ).to.equal(false);
      const second = await run();
      expect(
        second.some((m) => m.includes('4 page(s) reused from earlier work')),
        second.join('\n'),
      ).to.equal(true);
    });

    it('reads no cached page when the job says use_cache: false', async () => {
      const file = path.join(s.api.config.dataDir, 'scan-2-nocache.pdf');
      await writeFile(file, await scannedPdf(['Erste Seite ohne Cache.', 'Zweite Seite ohne Cache.']));
      const run = async (extra: Record<string, unknown>) => {
        const r = await s.call('POST', '/api/jobs/', {
          job_type: 'pdf',
          parameters: { filename: file, extraction_method: 'local_ocr', ...extra },
        });
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        const job = await s.waitJob(r.body.data.job_id, 60_000);
        expect(job.status, JSON.stringify(job.error)).to.equal('completed');
        return (job.logs as { message: string }[]).map((l) => l.message);
      };
      await run({});
      const bypass = await run({ use_cache: false });
      expect(
        bypass.some((m) => m.includes('reused from earlier work')),
        bypass.join('\n'),
      ).to.equal(false);
    });
  });
});

describe('POST /api/pdf/process past the synchronous limit', function () {
  this.timeout(120_000);
  let s: Stack;
  useStack((stack) => (s = stack), { SYNC_WAIT_MS: '1000' });

  it('answers 504 with the job id, the job goes on with its upload, and keeps it as its input when it finishes', async () => {
    const pages = [
      'Erste Seite, die länger dauert.',
      'Zweite Seite, die länger dauert.',
      'Dritte Seite, die länger dauert.',
    ];
    const r = await postPdf(s, { extraction_method: 'local_ocr', useCache: 'false' }, await scannedPdf(pages));
    expect(r.status, JSON.stringify(r.body)).to.equal(504);
    expect(r.body.error.code).to.equal('TIMEOUT');
    const jobId = r.body.error.details.job_id;
    expect(jobId).to.be.a('string');
    expect(await s.worker.store.list('uploads/'), 'the running job still has its input').to.have.length(1);
    const job = await s.waitJob(jobId, 90_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    expect(job.results.structured_data.metadata.text_contents.map((c: { method: string }) => c.method)).to.deep.equal([
      'local_ocr',
      'local_ocr',
      'local_ocr',
    ]);
    // The input stays with the job (a restart may need it) until retention removes it with the job's outputs.
    expect(
      (await s.worker.store.list('uploads/')).map((b) => b.key),
      'the finished job keeps its input',
    ).to.deep.equal([job.parameters.file_key]);
  });
});
