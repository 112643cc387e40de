import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { startStack, type Stack } from '../support/servers/stack';
import { startTestApi, type TestApi } from '../support/servers/api';
import { JobService } from '../../api/services/jobs';
import { llmEnv } from '../support/servers/llm-env';
import { startLlmServer, type LlmServer } from '../support/servers/llm-server';
import { startOcrServer, type OcrServer } from '../support/servers/ocr-server';
import { postMultipart, postPdf } from '../support/clients/pdf-http';
import {
  completedWebhookData,
  expectResultsCarry,
  holdModel,
  pageImage,
  startFileServer,
  syncCall,
  textPdf,
  unique,
} from '../support/results';
import { startWebhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver';

// Issue 11: one result shape. For transformer, pdf, image OCR and external OCR the synchronous answer's `data`, the
// job's `results` (restricted to the data fields) and the completed webhook's `data` are the same object; a 504
// leaves a job whose results carry the data the call would have answered. Real API and worker, Temporal dev server,
// pdftotext, poppler and tesseract; the LLM and the external OCR service are wire-protocol test servers.

const SUMMARY_FIELDS = ['original_text', 'summary'];
const PDF_FIELDS = ['extracted_text', 'metadata', 'images_archive_filename', 'images_archive_data'];
const IMAGE_FIELDS = ['extracted_text', 'metadata'];
const EXTERNAL_FIELDS = [
  'extracted_text',
  'metadata',
  'external_ocr_raw',
  'pages_archive_filename',
  'pages_archive_data',
  'images_archive_data',
  'images_archive_filename',
];

/** `data` without the pages archive, whose name carries the job id and whose ZIP carries the render times. */
const withoutPagesArchive = ({ pages_archive_filename: _f, pages_archive_data: _d, ...rest }: any) => rest;

describe('One result shape for synchronous answers, job results and webhooks', function () {
  this.timeout(90_000);
  let s: Stack;
  let slow: TestApi;
  let llm: LlmServer;
  let ocr: OcrServer;
  let hook: WebhookReceiver;
  let files: Awaited<ReturnType<typeof startFileServer>>;
  let jobs: JobService;
  let dir: string;

  before(async function () {
    this.timeout(120_000);
    dir = mkdtempSync(path.join(os.tmpdir(), 'result-shape-'));
    llm = await startLlmServer();
    ocr = await startOcrServer();
    hook = await startWebhookReceiver();
    files = await startFileServer();
    const env = { ...llmEnv(llm), EXTERNAL_OCR_URL: ocr.url };
    s = await startStack(env);
    // A second API on the same worker and data that waits at most 1 s for a synchronous job (504 past it).
    const c = s.api.config;
    slow = await startTestApi(
      {
        ...env,
        DATA_DIR: c.dataDir,
        TASK_QUEUE_PREFIX: c.TASK_QUEUE_PREFIX,
        TEMPORAL_ADDRESS: c.temporalAddress,
        SYNC_WAIT_MS: '1000',
      },
      { store: s.worker.store },
    );
    jobs = new JobService(s.api.temporal, s.worker.store);
  });
  after(async () => {
    await slow?.close();
    await s?.stop();
    await Promise.all([llm?.close(), ocr?.close(), hook?.close(), files?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => {
    llm.respond(null);
    ocr.reset();
  });

  const results = async (jobId: string) => {
    const job = await s.waitJob(jobId, 60_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    return job.results;
  };
  const createJob = async (body: unknown): Promise<string> => {
    const r = await s.call('POST', '/api/jobs/', body);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body.data.job_id;
  };
  /** A 504 from the slow API: its job id. */
  const timedOut = (r: { status: number; body: any }): string => {
    expect(r.status, JSON.stringify(r.body).slice(0, 400)).to.equal(504);
    expect(r.body.error.code).to.equal('TIMEOUT');
    return r.body.error.details.job_id;
  };

  describe('transformer', () => {
    it('answers the data its job results hold, and its completed webhook sends the same data', async () => {
      const text = unique('Der Fluss fließt ruhig durch die alte Stadt am Berg.');
      const sync = await syncCall(s.worker.store, () =>
        s.call('POST', '/api/transformer/summarize', { text, max_length: 200 }),
      );
      expectResultsCarry(await results(sync.jobId), sync.data, SUMMARY_FIELDS);
      expect(sync.data.original_text).to.equal(text);

      const jobId = await createJob({
        job_type: 'transformer',
        parameters: { operation: 'summarize', text, max_length: 200, use_cache: false, webhook: { url: hook.url } },
      });
      expect(await completedWebhookData(hook, jobId)).to.deep.equal(sync.data);
    });

    it('after a 504, GET /api/jobs/{id} holds the data the call would have answered', async () => {
      const text = unique('Ein langer Bericht über das Wetter im Herbst.');
      const release = holdModel(llm);
      const jobId = timedOut(
        await fetch(`${slow.url}/api/transformer/summarize`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text, max_length: 200 }),
        }).then(async (r) => ({ status: r.status, body: await r.json() })),
      );
      release();
      const late = await results(jobId);
      const sync = await syncCall(s.worker.store, () =>
        s.call('POST', '/api/transformer/summarize', { text, max_length: 200, use_cache: false }),
      );
      expectResultsCarry(late, sync.data, SUMMARY_FIELDS);
    });
  });

  describe('pdf', () => {
    it('answers the data its job results hold, also with page images, and a job webhook sends the same data', async () => {
      const pdf = textPdf([unique('Erste Zeile des Berichts.'), 'Zweite Zeile mit Umlauten: Grüße.']);
      // `wait_ms` asks for a job (a small native request is otherwise answered without one, with the same data).
      const sync = await syncCall(s.worker.store, () =>
        postMultipart(
          `${s.url}/api/pdf/process?wait_ms=60000`,
          {},
          { bytes: pdf, name: 'p.pdf', type: 'application/pdf' },
        ),
      );
      expectResultsCarry(await results(sync.jobId), sync.data, PDF_FIELDS);
      expect(sync.data.metadata.page_count).to.equal(1);
      const direct = await postPdf(s, { useCache: 'false' }, pdf);
      expect([direct.status, direct.body.data]).to.deep.equal([200, sync.data]);

      const file = path.join(dir, 'bericht.pdf');
      writeFileSync(file, pdf);
      const jobId = await createJob({
        job_type: 'pdf',
        parameters: { filename: file, use_cache: false, webhook: { url: hook.url } },
      });
      expect(await completedWebhookData(hook, jobId)).to.deep.equal(sync.data);

      const withImages = await syncCall(s.worker.store, () => postPdf(s, { includeImages: 'true' }, pdf));
      expectResultsCarry(await results(withImages.jobId), withImages.data, PDF_FIELDS);
      expect(withImages.data.images_archive_filename).to.equal(`${withImages.jobId}-images.zip`);
      expect(Buffer.from(withImages.data.images_archive_data, 'base64').subarray(0, 2).toString('latin1')).to.equal(
        'PK',
      );
    });

    it('after a 504 (template, model held), GET /api/jobs/{id} holds the data the call would have answered', async () => {
      const pdf = textPdf([unique('Protokoll der Sitzung vom Montag.')]);
      const release = holdModel(llm);
      const jobId = timedOut(
        await postMultipart(
          `${slow.url}/api/pdf/process`,
          { template: 'Besprechung' },
          { bytes: pdf, name: 'p.pdf', type: 'application/pdf' },
        ),
      );
      release();
      const late = await results(jobId);
      const sync = await syncCall(s.worker.store, () => postPdf(s, { template: 'Besprechung' }, pdf));
      expectResultsCarry(late, sync.data, PDF_FIELDS);
      expect(sync.data.extracted_text).to.include('title value');
    });
  });

  describe('image OCR', () => {
    it('answers the data its job results hold, for a file and a URL, and a job webhook sends the same data', async () => {
      const png = pageImage([unique('Ein Schild am Bahnhof zeigt den Weg.')]);
      const sync = await syncCall(s.worker.store, () =>
        postMultipart(`${s.url}/api/imageocr/process`, {}, { bytes: png, name: 'p.png', type: 'image/png' }),
      );
      expectResultsCarry(await results(sync.jobId), sync.data, IMAGE_FIELDS);
      expect(sync.data.extracted_text).to.include('Bahnhof');

      const url = files.put(`shape-${Date.now()}.png`, png);
      const byUrl = await syncCall(s.worker.store, () =>
        s.call('POST', '/api/imageocr/process-url', { url, use_cache: false }),
      );
      expectResultsCarry(await results(byUrl.jobId), byUrl.data, IMAGE_FIELDS);
      expect(byUrl.data).to.deep.equal(sync.data);

      const { state } = await jobs.create({
        jobType: 'imageocr',
        parameters: { url, use_cache: false },
        webhook: { url: hook.url },
      });
      expect(await completedWebhookData(hook, state.job_id)).to.deep.equal(sync.data);
    });

    it('after a 504 (template, model held), GET /api/jobs/{id} holds the data the call would have answered', async () => {
      const png = pageImage([unique('Notizen aus der Besprechung.')]);
      const image = { bytes: png, name: 'n.png', type: 'image/png' };
      const release = holdModel(llm);
      const jobId = timedOut(
        await postMultipart(`${slow.url}/api/imageocr/process`, { template: 'Besprechung' }, image),
      );
      release();
      const late = await results(jobId);
      const sync = await syncCall(s.worker.store, () =>
        postMultipart(`${s.url}/api/imageocr/process`, { template: 'Besprechung', use_cache: 'false' }, image),
      );
      expectResultsCarry(late, sync.data, IMAGE_FIELDS);
      expect(sync.data.extracted_text).to.include('title value');
    });
  });

  describe('external OCR', () => {
    it("answers the data its job results hold; a callback job sends its results' data, the same as the answer but for the pages archive", async () => {
      const pdf = {
        bytes: textPdf([unique('Externe Erkennung einer Seite.')]),
        name: 'extern.pdf',
        type: 'application/pdf',
      };
      const route = `${s.url}/api/pdf/process-external-ocr`;
      const sync = await syncCall(s.worker.store, () => postMultipart(route, { wait_ms: '30000' }, pdf));
      expectResultsCarry(await results(sync.jobId), sync.data, EXTERNAL_FIELDS);
      expect(sync.data.pages_archive_filename).to.equal(`${sync.jobId}-pages.zip`);

      const accepted = await postMultipart(route, { callback_url: hook.url, useCache: 'false' }, pdf);
      expect(accepted.status, JSON.stringify(accepted.body)).to.equal(202);
      const jobId = accepted.body.data.job_id;
      const sent = (await completedWebhookData(hook, jobId)) as Record<string, unknown>;
      expectResultsCarry(await results(jobId), sent, EXTERNAL_FIELDS);
      expect(withoutPagesArchive(sent)).to.deep.equal(withoutPagesArchive(sync.data));
      expect(sent.pages_archive_filename).to.equal(`${jobId}-pages.zip`);
    });

    it('answers 202 without wait_ms, and GET /api/jobs/{id} then holds the data a waiting call answers', async () => {
      const pdf = {
        bytes: textPdf([unique('Späte Abholung des Ergebnisses.')]),
        name: 'spaet.pdf',
        type: 'application/pdf',
      };
      const route = `${s.url}/api/pdf/process-external-ocr`;
      const accepted = await postMultipart(route, {}, pdf);
      expect(accepted.status, JSON.stringify(accepted.body)).to.equal(202);
      const late = await results(accepted.body.data.job_id);
      const sync = await syncCall(s.worker.store, () =>
        postMultipart(route, { wait_ms: '30000', useCache: 'false' }, pdf),
      );
      expectResultsCarry(
        late,
        {
          ...sync.data,
          pages_archive_filename: late.pages_archive_filename,
          pages_archive_data: late.pages_archive_data,
        },
        EXTERNAL_FIELDS,
      );
    });
  });
});
