import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import type { Stack } from '../support/servers/stack';
import { readBlobBuffer } from '../../core/stores/blob-store';
import { readCacheRef } from '../../core/stores/cache';
import { PDF_CACHE_OPERATION, pdfCacheKey } from '../../core/stores/cache-keys';
import { resultData } from '../../core/results/job-results';
import { createHash } from 'node:crypto';
import { useLlmStack } from '../support/servers/llm-env';
import type { LlmServer } from '../support/servers/llm-server';
import { countWorkflowStarts, directDocPdf, expectNoRequestFiles, pdfViaJob, refusedPdfs } from '../support/direct-pdf';
import { postPdf } from '../support/clients/pdf-http';
import { holdModel, unique } from '../support/results';
import { popplerPids } from '../support/servers/proc-tree';
import { directPdfReading } from '../../api/services/direct-pdf';
import { idleCores } from '../../core/results/pdf-text';

// Issue 24: a small synchronous `native` request to /api/pdf/process is answered by the API itself (pdfinfo and
// pdftotext as its child processes), without a job, with the job's `data`; a larger one, or a client asking for a
// job, runs one as before. The real API and worker, the shared Temporal dev server, poppler, the local blob store.
// Workflow starts are counted at the API's Temporal client, through which every start passes.

// 60 pages: enough for pdftotext to be split in two (at least 25 pages a process).
const INLINE = 60;
const MAX_PAGES = 80;

/** A PDF of `pages` pages of distinct text (one without a text layer), with a title and an author. */
const docPdf = (pages: number) =>
  directDocPdf(pages, (p) =>
    Array.from({ length: 12 }, (_, i) => `Seite ${p} Zeile ${i}: "Zitat" C:\\Pfad ${unique('Grüße')}`),
  );

describe('native PDF text answered by the API without a job (INLINE_PDF_MAX_PAGES)', function () {
  this.timeout(90_000);
  let s: Stack;
  let llm: LlmServer;
  let started: string[] = [];
  useLlmStack(
    (stack, server) => {
      s = stack;
      llm = server;
      countWorkflowStarts(s, (id) => started.push(id));
    },
    { INLINE_PDF_MAX_PAGES: String(INLINE), MAX_PDF_PAGES: String(MAX_PAGES), MAX_HEAVY_REQUESTS: '1' },
  );
  beforeEach(() => (started = []));

  const viaJob = (fields: Record<string, string>, pdf: Buffer) => pdfViaJob(s, fields, pdf);

  /** Nothing of a request stays behind: no engine process, no upload blob, no temporary upload, no scratch file. */
  async function nothingLeft(): Promise<void> {
    // The API runs in this process: its pdfinfo and pdftotext are children of it.
    expect(popplerPids(process.pid), 'no poppler process left').to.deep.equal([]);
    await expectNoRequestFiles(s);
  }

  for (const [cores, how] of [
    [1, 'one pdftotext beside pdfinfo'],
    [2, 'pdftotext split across two processes after pdfinfo'],
  ] as const) {
    it(`answers a multi-page document and page ranges with the data of the job, without a workflow (${how})`, async () => {
      const pdf = docPdf(INLINE);
      directPdfReading.idleCores = () => cores;
      try {
        const ranges: Record<string, string>[] = [
          {},
          { page_start: '3', page_end: '57' },
          { page_start: '50' },
          { page_start: '55', page_end: '75' },
          { page_end: '1' },
        ];
        for (const range of ranges) {
          const fields = { extraction_method: 'native', useCache: 'false', ...range };
          const job = await viaJob(fields, pdf);
          expect(job.status, JSON.stringify(job.body).slice(0, 300)).to.equal(200);
          expect(started, 'the job path runs a workflow').to.have.length(1);
          const direct = await postPdf(s, fields, pdf);
          expect(direct.status, JSON.stringify(direct.body).slice(0, 300)).to.equal(200);
          expect(started, `no workflow for ${JSON.stringify(range)}`).to.have.length(1);
          expect([direct.headers.get('x-cache'), job.headers.get('x-cache')]).to.deep.equal(['miss', 'miss']);
          expect(direct.headers.get('content-type')).to.match(/^application\/json/);
          // Field by field: the same envelope, the same data (text, page entries, title, author, archive fields).
          expect(Object.keys(direct.body.data)).to.deep.equal(Object.keys(job.body.data));
          for (const k of Object.keys(job.body.data)) expect(direct.body.data[k], k).to.deep.equal(job.body.data[k]);
          expect(direct.body).to.deep.equal(job.body);
          started = [];
        }
      } finally {
        directPdfReading.idleCores = idleCores;
      }
      await nothingLeft();
    });
  }

  it('answers with the document facts and only the pages asked for', async () => {
    const pdf = docPdf(10);
    // The checks above compared real answers: the text, the pages and the document's facts are there.
    const whole = (await postPdf(s, { extraction_method: 'native', page_start: '2', page_end: '4' }, pdf)).body.data;
    expect(whole.metadata).to.include({ page_count: 10, title: 'Direkt gelesen', author: 'Ada Größe' });
    expect(whole.metadata.text_contents.map((c: { page: number }) => c.page)).to.deep.equal([2, 3, 4]);
    expect(whole.metadata.text_contents[1]).to.deep.equal({ page: 3, text: '', method: 'native' });
    expect(whole.extracted_text).to.match(/^Seite 2 Zeile 0: "Zitat" C:\\Pfad Grüße/);
    expect(whole.extracted_text).to.include('Seite 4 Zeile 11');
    expect(whole.extracted_text).not.to.include('Seite 5');
    expect(started).to.deep.equal([]);
    await nothingLeft();
  });

  it('writes the cache entry: a repeated request is a hit without a job, and a job reads the same entry', async () => {
    const pdf = docPdf(4);
    const first = await postPdf(s, { extraction_method: 'native' }, pdf);
    expect(first.status, JSON.stringify(first.body).slice(0, 300)).to.equal(200);
    expect(first.headers.get('x-cache')).to.equal('miss');
    // The entry is written as the answer goes out; a request for it in the same API waits for the write.
    const hit = await postPdf(s, { extraction_method: 'native' }, pdf);
    expect([hit.status, hit.headers.get('x-cache')]).to.deep.equal([200, 'hit']);
    expect(hit.body).to.deep.equal(first.body);
    expect(started).to.deep.equal([]);
    const sha256 = createHash('sha256').update(pdf).digest('hex');
    const key = pdfCacheKey(sha256, { extraction_method: 'native' }, { textEngine: 'poppler' })!;
    const ref = await readCacheRef(s.api.store, PDF_CACHE_OPERATION, key);
    expect(ref, 'the entry points at the stored result').to.not.equal(null);
    expect(ref!.job_id, 'no job: no job id').to.equal(undefined);
    // A job asked for (202 at once) takes its result from the entry the API wrote, with the job's own fields.
    const asked = await fetch(`${s.url}/api/pdf/process`, {
      method: 'POST',
      headers: { Prefer: 'respond-async' },
      body: (() => {
        const form = new FormData();
        form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), 'doc.pdf');
        form.append('extraction_method', 'native');
        return form;
      })(),
    });
    expect(asked.status).to.equal(202);
    const jobId = ((await asked.json()) as { data: { job_id: string } }).data.job_id;
    const done = await s.waitJob(jobId, 60_000);
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect(done.results.from_cache).to.equal(true);
    expect(resultData(done.results)).to.deep.equal(first.body.data);
    expect(done.results.structured_data).to.deep.equal({
      extracted_text: first.body.data.extracted_text,
      metadata: first.body.data.metadata,
    });
    expect(done.results.assets).to.deep.equal([`jobs/${jobId}/out/result.md`]);
    const md = (await readBlobBuffer(s.api.store, `jobs/${jobId}/out/result.md`)).toString('utf8');
    expect(md).to.equal(first.body.data.extracted_text);
    expect(started).to.deep.equal([jobId]);
    await nothingLeft();
  });

  const refused = refusedPdfs(MAX_PAGES, docPdf);
  for (const [name, file, range, status, code] of refused) {
    it(`refuses ${name} with the job's envelope (${status} ${code}) but no job id, and no workflow`, async () => {
      const pdf = file();
      const fields = { extraction_method: 'native', ...range };
      const job = await viaJob(fields, pdf);
      expect(job.status, JSON.stringify(job.body)).to.equal(status);
      expect(started).to.have.length(1);
      // One pdftotext started beside pdfinfo (the way a busy machine reads): a refusal must stop it.
      directPdfReading.idleCores = () => 1;
      const direct = await postPdf(s, fields, pdf).finally(() => (directPdfReading.idleCores = idleCores));
      expect(direct.status, JSON.stringify(direct.body)).to.equal(status);
      expect(started, 'no workflow').to.have.length(1);
      // The one documented difference: the job path names its job.
      expect(job.body.error.details.job_id).to.equal(started[0]);
      const { job_id: _id, ...jobDetails } = job.body.error.details;
      void _id;
      expect(direct.body.error.details).to.not.have.property('job_id');
      expect(direct.body.error.code).to.equal(code);
      expect({ ...direct.body.error, request_id: null }).to.deep.equal({
        ...job.body.error,
        details: jobDetails,
        request_id: null,
      });
      await nothingLeft();
    });
  }

  it(`reads more than INLINE_PDF_MAX_PAGES (${INLINE}) pages in a job, and a range within it without one`, async () => {
    const pdf = docPdf(INLINE + 2);
    const big = await postPdf(s, { extraction_method: 'native', useCache: 'false' }, pdf);
    expect(big.status, JSON.stringify(big.body).slice(0, 300)).to.equal(200);
    expect(big.body.data.metadata.text_contents).to.have.length(INLINE + 2);
    expect(started, 'over the threshold: a job').to.have.length(1);
    const part = await postPdf(s, { extraction_method: 'native', page_start: '3', page_end: String(INLINE + 2) }, pdf);
    expect(part.status, JSON.stringify(part.body).slice(0, 300)).to.equal(200);
    expect(part.body.data.metadata.text_contents).to.have.length(INLINE);
    expect(started, `${INLINE} pages: no job`).to.have.length(1);
    // Page images and other methods go on as jobs (Markdown is answered directly: direct-pdf-markdown.test.ts).
    const small = docPdf(1);
    const others: Record<string, string>[] = [
      { includeImages: 'true' },
      { extraction_method: 'combined', ocr_language: 'en' },
    ];
    for (const fields of others) {
      const r = await postPdf(s, { extraction_method: 'native', useCache: 'false', ...fields }, small);
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).to.equal(200);
    }
    expect(started).to.have.length(3);
    await nothingLeft();
  });

  it('runs every native request as a job with INLINE_PDF_MAX_PAGES=0', async () => {
    // The route reads the setting per request from the app's configuration (loaded once from the environment).
    const config = s.api.config as { INLINE_PDF_MAX_PAGES: number };
    config.INLINE_PDF_MAX_PAGES = 0;
    try {
      const r = await postPdf(s, { extraction_method: 'native', useCache: 'false' }, docPdf(1));
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).to.equal(200);
      expect(started, 'threshold 0: a job').to.have.length(1);
    } finally {
      config.INLINE_PDF_MAX_PAGES = INLINE;
    }
    await nothingLeft();
  });

  it('answers 429 RATE_LIMITED while MAX_HEAVY_REQUESTS (1) is taken, before reading the document (text and Markdown)', async () => {
    const release = holdModel(llm);
    try {
      const held = s.call('POST', '/api/transformer/template', {
        text: unique('Ada Lovelace schreibt.'),
        template_content: 'Person: {{person|the person}}',
      });
      while (llm.chatRequests().length === 0) await new Promise((r) => setTimeout(r, 20));
      const before = started.length;
      const r = await postPdf(s, { extraction_method: 'native' }, docPdf(2));
      expect(r.status, JSON.stringify(r.body)).to.equal(429);
      expect(r.body.error.code).to.equal('RATE_LIMITED');
      expect(r.headers.get('retry-after')).to.equal('2');
      expect(started.length, 'no workflow for the refused request').to.equal(before);
      // A Markdown request takes the same slot (issue 25).
      const md = await postPdf(s, { extraction_method: 'native', output_format: 'markdown' }, docPdf(2));
      expect([md.status, md.body.error?.code], JSON.stringify(md.body)).to.deep.equal([429, 'RATE_LIMITED']);
      expect(started.length, 'no workflow for the refused Markdown request').to.equal(before);
      release();
      expect((await held).status).to.equal(200);
    } finally {
      release();
    }
    const again = await postPdf(s, { extraction_method: 'native' }, docPdf(2));
    expect(again.status, JSON.stringify(again.body).slice(0, 300)).to.equal(200);
    const againMd = await postPdf(s, { extraction_method: 'native', output_format: 'markdown' }, docPdf(2));
    expect(againMd.status, JSON.stringify(againMd.body).slice(0, 300)).to.equal(200);
    await nothingLeft();
  });
});
