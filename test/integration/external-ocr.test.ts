import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { ExternalOcr, ExternalOcrRetryInfo } from '../../domain/engines/external-ocr';
import { createExternalOcr, type ExternalOcrSettings, requireExternalOcr } from '../../providers/external-ocr/mistral';
import { AppError } from '../../core/errors';
import { rejection } from '../support/assert';
import { type OcrServer, startOcrServer } from '../support/servers/ocr-server';

const SAMPLE = fs.readFileSync(path.resolve('samples/sample.pdf'));
const FAST = { baseMs: 10, maxMs: 50, maxRetryAfterMs: 5000 };

/** A valid PDF of `n` letter pages; page i (1-based) reads `Sheet i of n`. */
function multiPagePdf(n: number): Buffer {
  const objects: string[] = [];
  const kids = Array.from({ length: n }, (_, i) => `${4 + 2 * i} 0 R`).join(' ');
  objects.push('<< /Type /Catalog /Pages 2 0 R >>', `<< /Type /Pages /Kids [${kids}] /Count ${n} >>`);
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  for (let i = 1; i <= n; i++) {
    const stream = `BT /F1 24 Tf 72 700 Td (Sheet ${i} of ${n}) Tj ET`;
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ` +
        `${5 + 2 * (i - 1)} 0 R >>`,
      `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    );
  }
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  out += offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('');
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

describe('external OCR provider (Mistral-compatible)', function () {
  this.timeout(30_000);
  let server: OcrServer;
  const KEY = 'sk-ocr-test-key-0123456789';

  before(async () => {
    server = await startOcrServer({ apiKey: KEY });
  });
  after(() => server.close());
  beforeEach(() => server.reset());

  const ocr = (over: Partial<ExternalOcrSettings> = {}, retries: ExternalOcrRetryInfo[] = []): ExternalOcr =>
    createExternalOcr(
      { url: server.url, apiKey: KEY, model: 'mistral-ocr-latest', timeoutMs: 10_000, maxRetries: 2, ...over },
      { backoff: FAST, onRetry: (i) => retries.push(i) },
    )!;

  it('sends the model, the PDF as a data URL, include_image_base64 and the bearer key, and returns the page', async () => {
    const raw = await ocr().ocrPdf(SAMPLE, { includeImages: true });
    const [req] = server.ocrRequests();
    expect(server.ocrRequests()).to.have.length(1);
    expect(req.path).to.equal('/v1/ocr');
    expect(req.headers.authorization).to.equal(`Bearer ${KEY}`);
    expect(req.headers['content-type']).to.match(/^application\/json/);
    expect(req.json.model).to.equal('mistral-ocr-latest');
    expect(req.json.document.type).to.equal('document_url');
    expect(req.json.document.document_url).to.equal(`data:application/pdf;base64,${SAMPLE.toString('base64')}`);
    expect(req.json.include_image_base64).to.equal(true);
    expect(req.json).to.not.have.property('pages');
    expect(raw.model).to.equal('mistral-ocr-2503-completion');
    expect(raw.usage_info).to.deep.equal({ pages_processed: 1, doc_size_bytes: SAMPLE.length });
    expect(raw.pages).to.have.length(1);
    expect(raw.pages[0].index).to.equal(0);
    expect(raw.pages[0].markdown)
      .to.match(/^# Page 1\n\n/)
      .and.include('Document and Media Processing Service');
    expect(raw.pages[0].images).to.have.length(1);
    const img = raw.pages[0].images[0];
    expect(img.image_base64).to.match(/^data:image\/png;base64,iVBOR/);
    expect(img).to.include({
      id: 'img-0.png',
      top_left_x: 10,
      top_left_y: 20,
      bottom_right_x: 110,
      bottom_right_y: 220,
    });
  });

  it('leaves image_base64 null when images are not asked for', async () => {
    const raw = await ocr().ocrPdf(SAMPLE, { includeImages: false });
    expect(server.ocrRequests()[0].json.include_image_base64).to.equal(false);
    expect(raw.pages[0].images[0].image_base64).to.equal(null);
  });

  it('splits a 120-page document into groups of 50 and merges the pages in order with their own text', async () => {
    const pdf = multiPagePdf(120);
    const progress: [number, number][] = [];
    const raw = await ocr({ maxPagesPerRequest: 50 }).ocrPdf(pdf, {
      includeImages: true,
      pageCount: 120,
      onProgress: (done, total) => progress.push([done, total]),
    });
    const sets = server
      .ocrRequests()
      .map((r) => r.pages!)
      .sort((a, b) => a[0] - b[0]);
    const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    expect(sets).to.deep.equal([range(0, 49), range(50, 99), range(100, 119)]);
    for (const r of server.ocrRequests()) expect(r.docBytes).to.equal(pdf.length);
    expect(raw.pages.map((p) => p.index)).to.deep.equal(range(0, 119));
    raw.pages.forEach((p, i) => {
      expect(p.markdown).to.equal(`# Page ${i + 1}\n\nSheet ${i + 1} of 120`);
      expect(p.images[0].id).to.equal(`img-${i}.png`);
    });
    expect(raw.usage_info).to.deep.equal({ pages_processed: 120, doc_size_bytes: pdf.length });
    expect(progress.map(([d]) => d)).to.deep.equal([...progress.map(([d]) => d)].sort((a, b) => a - b));
    expect(progress.at(-1)).to.deep.equal([120, 120]);
  });

  it('asks only for the pages requested, sorted and grouped, and keeps their document indexes', async () => {
    const pdf = multiPagePdf(12);
    const raw = await ocr({ maxPagesPerRequest: 2 }).ocrPdf(pdf, {
      includeImages: false,
      pages: [9, 4, 5, 4],
      pageCount: 12,
    });
    const sets = server
      .ocrRequests()
      .map((r) => r.pages!)
      .sort((a, b) => a[0] - b[0]);
    expect(sets).to.deep.equal([[4, 5], [9]]);
    expect(raw.pages.map((p) => [p.index, p.markdown])).to.deep.equal([
      [4, '# Page 5\n\nSheet 5 of 12'],
      [5, '# Page 6\n\nSheet 6 of 12'],
      [9, '# Page 10\n\nSheet 10 of 12'],
    ]);
    expect(raw.usage_info.pages_processed).to.equal(3);
  });

  it('maps pages that a server numbers from 0 within each request back to their document indexes', async () => {
    const relative = await startOcrServer({ relativeIndexes: true });
    try {
      const pdf = multiPagePdf(7);
      const raw = await ocr({ url: relative.url, maxPagesPerRequest: 3 }).ocrPdf(pdf, {
        includeImages: false,
        pageCount: 7,
      });
      expect(relative.ocrRequests()).to.have.length(3);
      expect(raw.pages.map((p) => p.index)).to.deep.equal([0, 1, 2, 3, 4, 5, 6]);
      raw.pages.forEach((p, i) => expect(p.markdown).to.equal(`# Page ${i + 1}\n\nSheet ${i + 1} of 7`));
    } finally {
      await relative.close();
    }
  });

  it('refuses page indexes outside the document before calling the endpoint', async () => {
    const err = await rejection(ocr().ocrPdf(SAMPLE, { includeImages: false, pages: [0, 3], pageCount: 2 }));
    expect(err.code).to.equal('VALIDATION_ERROR');
    expect(server.ocrRequests()).to.have.length(0);
  });

  it('waits as long as Retry-After says after a 429, then succeeds', async () => {
    server.fail429(1, 1);
    const retries: ExternalOcrRetryInfo[] = [];
    const t0 = Date.now();
    const raw = await ocr({}, retries).ocrPdf(SAMPLE, { includeImages: false });
    expect(Date.now() - t0).to.be.at.least(950);
    expect(raw.pages).to.have.length(1);
    expect(server.ocrRequests()).to.have.length(2);
    expect(retries).to.have.length(1);
    expect(retries[0]).to.include({ attempt: 1, status: 429, delayMs: 1000 });
  });

  it('gives up on a server that always answers 500 with a bounded number of attempts and a 502', async () => {
    server.fail500(100);
    const t0 = Date.now();
    const err = await rejection(ocr({ maxRetries: 2 }).ocrPdf(SAMPLE, { includeImages: false }));
    expect(Date.now() - t0).to.be.below(15_000);
    expect(server.ocrRequests()).to.have.length(3);
    expect(err).to.be.instanceOf(AppError);
    expect(err.code).to.equal('UPSTREAM_ERROR');
    expect(err.status).to.equal(502);
    expect(err.details).to.include({ provider: 'external_ocr', status: 500, attempts: 3 });
  });

  it('does not retry a 4xx answer and reports its status', async () => {
    server.fail(400, 5, { message: 'Invalid document' });
    const err = await rejection(ocr().ocrPdf(SAMPLE, { includeImages: false }));
    expect(server.ocrRequests()).to.have.length(1);
    expect(err.status).to.equal(502);
    expect(err.details).to.include({ provider: 'external_ocr', status: 400, attempts: 1 });
    expect(err.message).to.include('Invalid document');
  });

  for (const kind of ['not-json', 'wrong-shape'] as const) {
    it(`answers 502 at once to a 200 whose body is ${kind === 'not-json' ? 'not JSON' : 'JSON of the wrong shape'}`, async () => {
      server.malformed(1, kind);
      const err = await rejection(ocr().ocrPdf(SAMPLE, { includeImages: false }));
      expect(err.code).to.equal('UPSTREAM_ERROR');
      expect(err.status).to.equal(502);
      expect(err.details).to.include({ provider: 'external_ocr', reason: 'malformed response', attempts: 1 });
      expect(server.ocrRequests()).to.have.length(1);
    });
  }

  it('times out a hanging endpoint, retries, and answers 502 within a bounded time', async () => {
    server.hang(10);
    const t0 = Date.now();
    const err = await rejection(ocr({ timeoutMs: 200, maxRetries: 1 }).ocrPdf(SAMPLE, { includeImages: false }));
    expect(Date.now() - t0).to.be.within(380, 15_000);
    expect(server.ocrRequests()).to.have.length(2);
    expect(err.code).to.equal('UPSTREAM_ERROR');
    expect(err.details).to.include({ attempts: 2 });
    expect(String(err.details.reason)).to.match(/timeout/);
  });

  it('succeeds when a slow answer still arrives within the timeout', async () => {
    server.latency(150);
    const raw = await ocr({ timeoutMs: 2000 }).ocrPdf(SAMPLE, { includeImages: false });
    expect(raw.pages).to.have.length(1);
    expect(server.ocrRequests()).to.have.length(1);
  });

  it('retries network errors and then answers 502', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const err = await rejection(
      ocr({ url: `http://127.0.0.1:${port}`, maxRetries: 1 }).ocrPdf(SAMPLE, { includeImages: false }),
    );
    expect(err.code).to.equal('UPSTREAM_ERROR');
    expect(err.details).to.include({ attempts: 2 });
    expect(String(err.details.reason)).to.match(/network error/);
  });

  it('never puts the API key in error messages or details, even when the endpoint echoes it', async () => {
    const secret = 'sk-wrong-secret-key-abcdef123456';
    const err = await rejection(ocr({ apiKey: secret }).ocrPdf(SAMPLE, { includeImages: false }));
    expect(server.ocrRequests()[0].headers.authorization).to.equal(`Bearer ${secret}`);
    expect(err.details).to.include({ status: 401 });
    expect(err.message).to.include('Unauthorized').and.not.include(secret);
    expect(JSON.stringify(err.details)).to.not.include(secret);
    server.fail500(10);
    const err2 = await rejection(ocr({ maxRetries: 1 }).ocrPdf(SAMPLE, { includeImages: false }));
    expect(`${err2.message} ${JSON.stringify(err2.details)} ${err2.stack}`).to.not.include(KEY);
  });

  it('stops at once with the caller’s reason when the signal aborts', async () => {
    server.hang(1);
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('cancelled by test')), 100);
    const t0 = Date.now();
    const err = await rejection(ocr().ocrPdf(SAMPLE, { includeImages: false, signal: ac.signal }));
    expect(Date.now() - t0).to.be.below(10_000);
    expect(err.message).to.equal('cancelled by test');
  });

  it('sends an image as an image_url data URL and returns one page', async () => {
    const png = fs.readFileSync(path.resolve('samples/image.png'));
    const raw = await ocr().ocrImage(png, 'image/png', { includeImages: true });
    const [req] = server.ocrRequests();
    expect(req.json.document.type).to.equal('image_url');
    expect(req.json.document.image_url).to.equal(`data:image/png;base64,${png.toString('base64')}`);
    expect(raw.pages.map((p) => p.index)).to.deep.equal([0]);
    expect(raw.usage_info).to.deep.equal({ pages_processed: 1, doc_size_bytes: png.length });
  });

  it('accepts a configured URL that already ends in /v1 or /v1/ocr', async () => {
    await ocr({ url: `${server.url}/v1` }).ocrPdf(SAMPLE, { includeImages: false });
    await ocr({ url: `${server.url}/v1/ocr/` }).ocrPdf(SAMPLE, { includeImages: false });
    expect(server.ocrRequests().map((r) => r.path)).to.deep.equal(['/v1/ocr', '/v1/ocr']);
  });

  it('is absent without configuration, and requiring it then answers 503 PROVIDER_NOT_CONFIGURED', () => {
    expect(createExternalOcr(null)).to.equal(null);
    expect(() => requireExternalOcr(null))
      .to.throw(AppError)
      .with.property('code', 'PROVIDER_NOT_CONFIGURED');
  });
});
