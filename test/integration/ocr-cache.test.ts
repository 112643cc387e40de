import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { startStack, type Stack } from '../support/servers/stack';
import { startOcrServer, type OcrServer } from '../support/servers/ocr-server';
import { postMultipart, type FormFile } from '../support/clients/pdf-http';
import { pageImage, recordedJobs, startFileServer, syncCall, textPdf, unique } from '../support/results';

// The result cache of image OCR (file and URL) and external OCR (issue 11): read by the pipeline unless `use_cache`
// (external OCR: also `useCache`) is false, written by every fresh success, never by an error; `X-Cache` says which.
// Real API and worker on a Temporal dev server, real tesseract and poppler; the external OCR service is the
// Mistral-compatible wire-protocol test server, image URLs a static HTTP server.

describe('Result cache of image OCR and external OCR', function () {
  this.timeout(90_000);
  let s: Stack;
  let ocr: OcrServer;
  let files: Awaited<ReturnType<typeof startFileServer>>;

  before(async function () {
    this.timeout(120_000);
    ocr = await startOcrServer();
    files = await startFileServer();
    s = await startStack({ EXTERNAL_OCR_URL: ocr.url });
  });
  after(async () => {
    await s?.stop();
    await Promise.all([ocr?.close(), files?.close()]);
  });
  afterEach(() => ocr.reset());

  /** Runs one synchronous request; answers its X-Cache, its data and whether its job's results say from_cache. */
  const run = async (call: () => Promise<{ status: number; body: any; headers: Headers }>) => {
    const r = await syncCall(s.worker.store, call);
    const job = await s.waitJob(r.jobId);
    expect(job.results.from_cache, 'the results say where they came from').to.equal(r.cache === 'hit');
    return r;
  };

  /** A request the API answers from the cache itself (issue 24): no job ran. */
  const direct = async (call: () => Promise<{ status: number; body: any; headers: Headers }>) => {
    const before = await recordedJobs(s.worker.store);
    const r = await call();
    expect(r.status, JSON.stringify(r.body).slice(0, 600)).to.equal(200);
    const added = [...(await recordedJobs(s.worker.store))].filter((id) => !before.has(id));
    expect(added, 'no job ran').to.deep.equal([]);
    return { data: r.body.data, cache: r.headers.get('x-cache') };
  };

  describe('image OCR', () => {
    it('answers a repeated upload from the cache (X-Cache hit, same data) and recognises it again with use_cache false', async () => {
      const image: FormFile = {
        bytes: pageImage([unique('Die Brücke über den Rhein ist gesperrt.')]),
        name: 'schild.png',
        type: 'image/png',
      };
      const call =
        (fields: Record<string, string> = {}) =>
        () =>
          postMultipart(`${s.url}/api/imageocr/process`, fields, image);
      const post = (fields: Record<string, string> = {}) => run(call(fields));
      const first = await post();
      expect(first.cache).to.equal('miss');
      expect(first.data.extracted_text).to.include('Rhein');
      const again = await direct(call());
      expect(again.cache).to.equal('hit');
      expect(again.data).to.deep.equal(first.data);
      const bypass = await post({ use_cache: 'false' });
      expect(bypass.cache).to.equal('miss');
      expect(bypass.data).to.deep.equal(first.data);
      expect((await post({ ocr_language: 'en' })).cache, 'other OCR languages are another entry').to.equal('miss');
    });

    it('answers a repeated URL from the cache by the bytes it serves, and recognises it again with use_cache false', async () => {
      const name = `url-${Date.now()}.png`;
      const url = files.put(name, pageImage([unique('Am Markt gibt es frisches Brot.')]));
      const post = (extra: Record<string, unknown> = {}) =>
        run(() => s.call('POST', '/api/imageocr/process-url', { url, ...extra }));
      const first = await post();
      expect(first.cache).to.equal('miss');
      const again = await post();
      expect(again.cache).to.equal('hit');
      expect(again.data).to.deep.equal(first.data);
      expect((await post({ use_cache: false })).cache).to.equal('miss');
      expect(
        files.hits.filter((h) => h === `/${name}`),
        'each request fetched the URL',
      ).to.have.length(3);

      files.put(name, pageImage([unique('Ein anderes Bild unter derselben Adresse.')]));
      const changed = await post();
      expect(changed.cache, 'new bytes at the same URL are recognised again').to.equal('miss');
      expect(changed.data.extracted_text).to.include('anderes Bild');
    });
  });

  describe('external OCR', () => {
    const pdfFile = (text: string): FormFile => ({
      bytes: textPdf([unique(text)]),
      name: 'extern.pdf',
      type: 'application/pdf',
    });
    const post = (file: FormFile, fields: Record<string, string> = {}) =>
      run(() => postMultipart(`${s.url}/api/pdf/process-external-ocr`, { wait_ms: '30000', ...fields }, file));
    /** `data` without the pages archive (its name carries the job id, its ZIP the render times). */
    const ocrPart = ({ pages_archive_filename: _f, pages_archive_data: _d, ...rest }: any) => rest;

    it('answers a repeated document from the cache without asking the service; useCache or use_cache false asks it again', async () => {
      const file = pdfFile('Eine Seite für die externe Erkennung.');
      const first = await post(file);
      expect(first.cache).to.equal('miss');
      expect(ocr.ocrRequests()).to.have.length(1);
      const again = await post(file);
      expect(again.cache).to.equal('hit');
      expect(ocr.ocrRequests(), 'a hit asks the service nothing').to.have.length(1);
      expect(ocrPart(again.data)).to.deep.equal(ocrPart(first.data));
      expect(again.data.pages_archive_data).to.be.a('string');
      expect((await post(file, { useCache: 'false' })).cache).to.equal('miss');
      expect((await post(file, { use_cache: 'false' })).cache).to.equal('miss');
      expect(ocr.ocrRequests()).to.have.length(3);
      expect(
        (await post(file, { page_start: '1', page_end: '1', includeImages: 'false' })).cache,
        'other options are another entry',
      ).to.equal('miss');
    });

    it('never caches a failure: after the service recovers, the same document is a miss that succeeds', async () => {
      const file = pdfFile('Ein Dokument, dessen erste Erkennung scheitert.');
      // A refusal the service gives for this document (not retried): the job fails.
      ocr.fail(400, 50, { detail: 'document refused' });
      const failed = await postMultipart(
        `${s.url}/api/pdf/process-external-ocr`,
        { wait_ms: '30000', includePageImages: 'false' },
        file,
      );
      expect(failed.body.status, JSON.stringify(failed.body)).to.equal('error');
      ocr.reset();
      const ok = await post(file, { includePageImages: 'false' });
      expect(ok.cache).to.equal('miss');
      expect(ok.data.extracted_text).to.include('erste Erkennung');
      expect((await post(file, { includePageImages: 'false' })).cache).to.equal('hit');
    });
  });
});
