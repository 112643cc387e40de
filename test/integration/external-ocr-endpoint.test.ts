import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { startStack, useStack, type Stack } from '../support/servers/stack';
import { startOcrServer, type OcrServer } from '../support/servers/ocr-server';
import { buildPdf } from '../support/documents/pdf-factory';
import { startWebhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver';

// POST /api/pdf/process-external-ocr and GET /api/pdf/jobs/{id}/download-pages-archive (spec §4.2, contract §1, §2,
// §6) on the real API and worker over loopback HTTP, on a Temporal dev server, with real poppler page renders. The
// external OCR service is the Mistral-compatible wire-protocol test server; callbacks go to a real HTTP receiver.

const PAGES = [
  ['Erste Seite: Grüße aus Köln', 'Äpfel und Öl'],
  ['Zweite Seite: Straße und Maß'],
  ['Dritte Seite: Schluss und Übermut'],
];
const PDF = buildPdf({
  title: 'Drei Seiten',
  pages: PAGES.map((lines) => ({ kind: 'lines' as const, lines, size: 14 })),
});
const PNG_DATA_URL = /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/;

type Res = { status: number; body: any; headers: Headers };

/** Posts multipart to the external-OCR route; the file is the 3-page PDF unless `file` says otherwise (null: none). */
async function postOcr(
  s: Stack,
  fields: Record<string, string>,
  file: { bytes: Buffer; name: string; type: string } | null = {
    bytes: PDF,
    name: 'drei-seiten.pdf',
    type: 'application/pdf',
  },
  headers: Record<string, string> = {},
): Promise<Res> {
  const form = new FormData();
  if (file) form.append('file', new Blob([new Uint8Array(file.bytes)], { type: file.type }), file.name);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(`${s.url}/api/pdf/process-external-ocr`, {
    method: 'POST',
    body: form,
    headers,
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers };
}

const expectStatus = (r: Res, status: number) =>
  expect(r.status, JSON.stringify(r.body).slice(0, 600)).to.equal(status);
const err = (r: Res, status: number, code: string) => {
  expectStatus(r, status);
  expect(r.body.status).to.equal('error');
  expect(r.body.error.code).to.equal(code);
  return r.body.error;
};

/** The PNG entries of a ZIP, listed by `unzip -Z1`. */
function zipEntries(zip: Buffer, dir: string): string[] {
  const file = path.join(dir, `${randomUUID()}.zip`);
  writeFileSync(file, zip);
  return execFileSync('unzip', ['-Z1', file], { encoding: 'utf8', timeout: 10_000 }).split('\n').filter(Boolean);
}
/** Checks every `.png` entry really is a PNG by extracting it to stdout. */
function zipPngsAreReal(zip: Buffer, dir: string, names: string[]): void {
  const file = path.join(dir, `${randomUUID()}.zip`);
  writeFileSync(file, zip);
  for (const n of names) {
    const bytes = execFileSync('unzip', ['-p', file, n], { timeout: 10_000, maxBuffer: 64 * 1024 * 1024 });
    expect(bytes.subarray(0, 8).toString('hex'), n).to.equal('89504e470d0a1a0a');
  }
}

async function download(s: Stack, jobId: string) {
  const res = await fetch(`${s.url}/api/pdf/jobs/${jobId}/download-pages-archive`, {
    signal: AbortSignal.timeout(30_000),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  let json: any;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, bytes, json };
}

describe('External OCR endpoint on the real engine', function () {
  this.timeout(60_000);
  let s: Stack;
  let ocr: OcrServer;
  let dir: string;

  before(async function () {
    this.timeout(120_000);
    dir = mkdtempSync(path.join(os.tmpdir(), 'ext-ocr-test-'));
    ocr = await startOcrServer();
    // A short outage window: an OCR server that answers 500 every time fails its job within the test's wait.
    s = await startStack({ EXTERNAL_OCR_URL: ocr.url, PROVIDER_OUTAGE_MAX_MS: '2000' });
  });
  after(async () => {
    await s?.stop();
    await ocr?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => ocr.reset());

  describe('waiting for the result with wait_ms', () => {
    it('answers 200 with page-separated Markdown, metadata, the raw OCR answer and a ZIP of three page PNGs', async () => {
      const r = await postOcr(s, { wait_ms: '30000' });
      expectStatus(r, 200);
      expect(r.body.status).to.equal('success');
      const d = r.body.data;

      const text: string = d.extracted_text;
      const at = PAGES.map((lines) => text.indexOf(lines[0]));
      expect(
        at.every((i) => i >= 0),
        text,
      ).to.equal(true);
      expect(at).to.deep.equal([...at].sort((a, b) => a - b));
      expect(text.indexOf('# Page 1')).to.be.lessThan(text.indexOf('# Page 2'));
      expect(text.indexOf('# Page 2')).to.be.lessThan(text.indexOf('# Page 3'));
      expect(text).to.include('Grüße aus Köln').and.include('Straße und Maß').and.include('Übermut');

      expect(d.metadata).to.deep.include({
        page_count: 3,
        file_name: 'drei-seiten.pdf',
        file_size: PDF.length,
        extraction_method: 'external_ocr',
      });

      const raw = d.external_ocr_raw;
      expect(raw.pages.map((p: { index: number }) => p.index)).to.deep.equal([0, 1, 2]);
      raw.pages.forEach((p: any, i: number) => {
        expect(p.markdown).to.include(PAGES[i][0]);
        expect(p.images).to.have.length.at.least(1);
        for (const im of p.images) {
          expect(im.id).to.be.a('string');
          expect(im.image_base64).to.match(PNG_DATA_URL);
          for (const k of ['top_left_x', 'top_left_y', 'bottom_right_x', 'bottom_right_y'])
            expect(Number.isInteger(im[k]), k).to.equal(true);
        }
      });
      expect(raw.model).to.equal('mistral-ocr-2503-completion');
      expect(raw.usage_info).to.deep.include({ pages_processed: 3, doc_size_bytes: PDF.length });

      expect(d.pages_archive_filename)
        .to.be.a('string')
        .and.match(/\.zip$/);
      const zip = Buffer.from(d.pages_archive_data, 'base64');
      const pngs = zipEntries(zip, dir).filter((n) => n.endsWith('.png'));
      expect(pngs).to.have.length(3);
      zipPngsAreReal(zip, dir, pngs);
      expect(d.images_archive_data).to.equal(null);
      expect(d.images_archive_filename).to.equal(null);

      const [req] = ocr.ocrRequests();
      expect(ocr.ocrRequests()).to.have.length(1);
      expect(req.mime).to.equal('application/pdf');
      expect(req.docBytes).to.equal(PDF.length);
      expect(req.includeImages).to.equal(true);
    });

    it('asks the OCR server for pages 1 and 2 (0-based) only and returns only them when page_start is 2 and page_end is 3', async () => {
      const r = await postOcr(s, { wait_ms: '30000', page_start: '2', page_end: '3' });
      expectStatus(r, 200);
      const d = r.body.data;
      const asked = ocr.ocrRequests().flatMap((q): (number | string)[] => q.pages ?? ['all']);
      expect(asked).to.deep.equal([1, 2]);
      expect(d.external_ocr_raw.pages.map((p: { index: number }) => p.index)).to.deep.equal([1, 2]);
      expect(d.extracted_text).to.include(PAGES[1][0]).and.include(PAGES[2][0]).and.not.include(PAGES[0][0]);
      expect(d.extracted_text.indexOf(PAGES[1][0])).to.be.lessThan(d.extracted_text.indexOf(PAGES[2][0]));
      const pngs = zipEntries(Buffer.from(d.pages_archive_data, 'base64'), dir).filter((n) => n.endsWith('.png'));
      expect(pngs).to.have.length(2);
    });

    it('refuses a page range whose end lies before its start with 400 VALIDATION_ERROR and asks nothing of the OCR server', async () => {
      err(await postOcr(s, { wait_ms: '30000', page_start: '3', page_end: '2' }), 400, 'VALIDATION_ERROR');
      expect(ocr.ocrRequests()).to.have.length(0);
    });

    it('answers pages_archive_data null when includePageImages is false', async () => {
      const r = await postOcr(s, { wait_ms: '30000', includePageImages: 'false' });
      expectStatus(r, 200);
      expect(r.body.data.pages_archive_data).to.equal(null);
      expect(r.body.data.extracted_text).to.include(PAGES[2][0]);
    });

    it("omits the recognised images' Base64 when includeImages is false", async () => {
      const r = await postOcr(s, { wait_ms: '30000', includeImages: 'false', includePageImages: 'false' });
      expectStatus(r, 200);
      expect(ocr.ocrRequests()[0].includeImages).to.equal(false);
      for (const p of r.body.data.external_ocr_raw.pages)
        for (const im of p.images) expect(im.image_base64 ?? null).to.equal(null);
    });

    it('fails the job with UPSTREAM_ERROR and answers 502 when the OCR server answers 500 past the outage window', async () => {
      ocr.fail500(50);
      // useCache false: earlier tests cached this document's answer, and a hit would not ask the server.
      const e = err(
        await postOcr(s, { wait_ms: '30000', includePageImages: 'false', useCache: 'false' }),
        502,
        'UPSTREAM_ERROR',
      );
      expect(e.details.job_id).to.match(/^job-/);
      expect(ocr.ocrRequests().length).to.be.at.least(2);
      const job = await s.waitJob(e.details.job_id, 10_000);
      expect(job.status).to.equal('failed');
      expect(job.error.code).to.equal('UPSTREAM_ERROR');
      expect(job.error.details.outage, 'given up after the outage window').to.include({
        gave_up: 'window',
        window_ms: 2000,
      });
    });

    it('refuses a file that is not a PDF with 400 INVALID_FORMAT', async () => {
      const r = await postOcr(
        s,
        { wait_ms: '30000' },
        { bytes: Buffer.from('Hello, this is plain text.\n'), name: 'notes.txt', type: 'text/plain' },
      );
      const e = err(r, 400, 'INVALID_FORMAT');
      expect(e.details.supported_formats).to.deep.equal(['pdf']);
      expect(ocr.ocrRequests()).to.have.length(0);
    });

    it('refuses a request without a file with 400 VALIDATION_ERROR', async () => {
      err(await postOcr(s, { wait_ms: '30000' }, null), 400, 'VALIDATION_ERROR');
    });

    it('refuses an empty file with 422 UNPROCESSABLE_INPUT, asks nothing of the OCR server and keeps no upload', async () => {
      const before = ocr.ocrRequests().length;
      const uploads = (await s.worker.store.list('uploads/')).length;
      err(
        await postOcr(s, { wait_ms: '30000' }, { bytes: Buffer.alloc(0), name: 'leer.pdf', type: 'application/pdf' }),
        422,
        'UNPROCESSABLE_INPUT',
      );
      expect(ocr.ocrRequests()).to.have.length(before);
      expect(await s.worker.store.list('uploads/')).to.have.length(uploads);
    });
  });

  describe('asynchronous jobs and the pages archive download', () => {
    it("answers 202 with a job id for wait_ms 0, and the finished job's pages archive downloads as a ZIP attachment", async () => {
      const r = await postOcr(s, { wait_ms: '0' });
      expectStatus(r, 202);
      const jobId = r.body.data.job_id;
      expect(jobId).to.match(/^job-/);
      const job = await s.waitJob(jobId, 30_000);
      expect(job.status).to.equal('completed');
      const dl = await download(s, jobId);
      expect(dl.status).to.equal(200);
      expect(dl.headers.get('content-type')).to.match(/^application\/zip/);
      expect(dl.headers.get('content-disposition'))
        .to.match(/^attachment/)
        .and.include('.zip');
      const pngs = zipEntries(dl.bytes, dir).filter((n) => n.endsWith('.png'));
      expect(pngs).to.have.length(3);
      zipPngsAreReal(dl.bytes, dir, pngs);
    });

    it('answers 202 on the download route while the job is still running', async () => {
      ocr.latency(3000);
      const r = await postOcr(s, {});
      expectStatus(r, 202);
      const jobId = r.body.data.job_id;
      const running = await download(s, jobId);
      expect(running.status, JSON.stringify(running.json)).to.equal(202);
      expect(running.json.data.job_id).to.equal(jobId);
      expect((await s.waitJob(jobId, 30_000)).status).to.equal('completed');
      expect((await download(s, jobId)).status).to.equal(200);
    });

    it('answers 400 NO_ARCHIVE on the download route for a finished job that ran without includePageImages', async () => {
      const r = await postOcr(s, { includePageImages: 'false' });
      expectStatus(r, 202);
      const jobId = r.body.data.job_id;
      expect((await s.waitJob(jobId, 30_000)).status).to.equal('completed');
      const dl = await download(s, jobId);
      expect(dl.status, dl.bytes.toString().slice(0, 300)).to.equal(400);
      expect(dl.json.error.code).to.equal('NO_ARCHIVE');
    });

    it('answers 404 on the download route for an unknown job', async () => {
      const dl = await download(s, `job-${randomUUID()}`);
      expect(dl.status).to.equal(404);
      expect(dl.json.status).to.equal('error');
    });
  });

  describe('callbacks', () => {
    let hook: WebhookReceiver;
    before(async () => {
      hook = await startWebhookReceiver();
    });
    after(() => hook?.close());

    it('answers 202 at once and posts the completion with the result and a bearer token to callback_url', async () => {
      // The OCR answers after 8 s: a 202 well before that did not wait for it, however busy the machine.
      ocr.latency(8000);
      const t0 = Date.now();
      const r = await postOcr(s, {
        callback_url: hook.url,
        callback_token: 'cb-secret-123',
        jobId: 'client-job-42',
        wait_ms: '30000',
      });
      expectStatus(r, 202);
      expect(Date.now() - t0).to.be.lessThan(6000);
      const processId = r.body.data.job_id;
      await hook.waitFor((rs) => rs.some((q) => q.json?.phase === 'completed'), 30_000);
      const done = hook.requests.find((q) => q.json?.phase === 'completed')!;
      expect(done.headers.authorization).to.equal('Bearer cb-secret-123');
      expect(done.headers['content-type']).to.match(/^application\/json/);
      expect(done.json.process.id).to.equal(processId);
      expect(done.json.job.id).to.equal('client-job-42');
      expect(done.json.data).to.be.an('object');
      expect(JSON.stringify(done.json.data)).to.include(PAGES[2][0]);
    });
  });

  describe('on a server that does not listen on loopback only', () => {
    const KEY = 'ext-ocr-test-service-key-0123456789';
    const auth = { 'X-Service-Api-Key': KEY };
    let open: Stack;
    let openHttp: Stack;
    let hook: WebhookReceiver;
    before(async function () {
      this.timeout(120_000);
      hook = await startWebhookReceiver();
      open = await startStack({ HOST: '0.0.0.0', SERVICE_API_KEY: KEY, EXTERNAL_OCR_URL: ocr.url });
      // ALLOW_PRIVATE_URLS lets the callback reach the loopback receiver; nothing leaves this machine.
      openHttp = await startStack({
        HOST: '0.0.0.0',
        SERVICE_API_KEY: KEY,
        EXTERNAL_OCR_URL: ocr.url,
        ALLOW_HTTP_CALLBACKS: 'true',
        ALLOW_PRIVATE_URLS: 'true',
      });
      expect(open.api.config.loopbackOnly).to.equal(false);
    });
    after(async () => {
      await open?.stop();
      await openHttp?.stop();
      await hook?.close();
    });

    it('refuses an http callback_url with 400 VALIDATION_ERROR and starts no work', async () => {
      const e = err(await postOcr(open, { callback_url: hook.url }, undefined, auth), 400, 'VALIDATION_ERROR');
      expect(JSON.stringify(e.details.issues)).to.include('callback_url');
      expect(ocr.ocrRequests()).to.have.length(0);
    });

    it('accepts an http callback_url with 202 and delivers to it when ALLOW_HTTP_CALLBACKS is true', async () => {
      const r = await postOcr(openHttp, { callback_url: hook.url, jobId: 'open-http-1' }, undefined, auth);
      expectStatus(r, 202);
      expect(r.body.data.job_id).to.match(/^job-/);
      await hook.waitFor(
        (rs) => rs.some((q) => q.json?.phase === 'completed' && q.json?.job?.id === 'open-http-1'),
        30_000,
      );
    });
  });

  describe('without an external OCR service configured', () => {
    let bare: Stack;
    useStack((stack) => (bare = stack));

    it('answers 503 PROVIDER_NOT_CONFIGURED for a valid request', async () => {
      const e = err(await postOcr(bare, { wait_ms: '1000' }), 503, 'PROVIDER_NOT_CONFIGURED');
      expect(e.message).to.include('EXTERNAL_OCR_URL');
    });

    it('still answers 400 for a request without a file', async () => {
      err(await postOcr(bare, {}, null), 400, 'VALIDATION_ERROR');
    });

    it('still answers 400 INVALID_FORMAT for a file that is not a PDF', async () => {
      const e = err(
        await postOcr(
          bare,
          { wait_ms: '1000' },
          { bytes: Buffer.from('Hello, this is plain text.\n'), name: 'notes.txt', type: 'text/plain' },
        ),
        400,
        'INVALID_FORMAT',
      );
      expect(e.details.supported_formats).to.deep.equal(['pdf']);
    });
  });
});
