import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { useStack, type Stack } from '../support/servers/stack';
import { createHash } from 'node:crypto';
import { readBlobBuffer } from '../../core/stores/blob-store';
import { readCacheRef } from '../../core/stores/cache';
import { PDF_CACHE_OPERATION, pdfCacheKey } from '../../core/stores/cache-keys';
import { resultData } from '../../core/results/job-results';
import { idleCores } from '../../core/results/pdf-text';
import { directPdfReading } from '../../api/services/direct-pdf';
import { nativeMarkdownThreadRuns, nativeMarkdownThreadsBusy } from '../../providers/pdf/native-markdown-thread';
import { htmlToPdf, structuredDoc } from '../support/documents/html-pdf';
import { countWorkflowStarts, directDocPdf, expectNoRequestFiles, pdfViaJob, refusedPdfs } from '../support/direct-pdf';
import { postMultipart, postPdf } from '../support/clients/pdf-http';
import { childPids, popplerPids } from '../support/servers/proc-tree';
import { unique } from '../support/results';

// Issue 25: a small synchronous `native` + `output_format=markdown` request to /api/pdf/process is answered by the API
// (text layer and layouts read at once, the Markdown rules in a worker thread), without a job, with the job's `data`
// field by field, the job's errors and the job's cache entry. The real API and worker, the shared Temporal dev
// server, poppler, Chromium for a document of known structure, the local blob store. Workflow starts are counted at
// the API's Temporal client, through which every start passes.

const INLINE = 40;
const MAX_PAGES = 60;
const MD = { extraction_method: 'native', output_format: 'markdown' };

/** A PDF of `pages` pages of distinct text (one without a text layer), with a title and an author. */
const docPdf = (pages: number) =>
  directDocPdf(pages, (p) => [
    `Kapitel ${p}`,
    '',
    ...Array.from({ length: 10 }, (_, i) => `Seite ${p} Zeile ${i}: "Zitat" ${unique('Grüße')}`),
  ]);

describe('native PDF Markdown answered by the API without a job (INLINE_PDF_MAX_PAGES)', function () {
  this.timeout(120_000);
  let s: Stack;
  let started: string[] = [];
  let structured: Buffer;
  useStack(
    (stack) => {
      s = stack;
      countWorkflowStarts(s, (id) => started.push(id));
    },
    { INLINE_PDF_MAX_PAGES: String(INLINE), MAX_PDF_PAGES: String(MAX_PAGES) },
  );
  before(async () => {
    // Headings, two columns, lists, a ruled table across a page break (drawn rulings), Chromium's running header.
    structured = await htmlToPdf(structuredDoc().html, { pageHeaders: true });
  });
  beforeEach(() => (started = []));

  const viaJob = (fields: Record<string, string>, pdf: Buffer) => pdfViaJob(s, fields, pdf);

  /** Nothing of a request stays behind: no thread at work, no engine process, no upload, no temporary file. */
  async function nothingLeft(): Promise<void> {
    expect(nativeMarkdownThreadsBusy(), 'no Markdown thread at work').to.equal(0);
    // The API runs in this process: its tools are children of it or of a tool launcher of it (one per thread).
    expect(popplerPids(process.pid), 'no poppler text process left').to.deep.equal([]);
    expect(childPids(process.pid, /\bpdftohtml\b/), 'no pdftohtml left').to.deep.equal([]);
    await expectNoRequestFiles(s);
  }

  /** The direct answer equals the job's, field by field and page by page; no workflow for the direct one. */
  async function sameAsJob(fields: Record<string, string>, pdf: Buffer): Promise<Record<string, any>> {
    const job = await viaJob(fields, pdf);
    expect(job.status, JSON.stringify(job.body).slice(0, 300)).to.equal(200);
    expect(started, 'the job path runs a workflow').to.have.length(1);
    const runs = nativeMarkdownThreadRuns();
    const direct = await postPdf(s, fields, pdf);
    expect(direct.status, JSON.stringify(direct.body).slice(0, 300)).to.equal(200);
    expect(started, `no workflow for ${JSON.stringify(fields)}`).to.have.length(1);
    expect(nativeMarkdownThreadRuns(), 'the Markdown was made in a thread').to.equal(runs + 1);
    expect([direct.headers.get('x-cache'), job.headers.get('x-cache')]).to.deep.equal(['miss', 'miss']);
    const [d, j] = [direct.body.data, job.body.data];
    expect(Object.keys(d)).to.deep.equal(Object.keys(j));
    for (const k of ['markdown', 'extracted_text', 'images_archive_filename', 'images_archive_data'])
      expect(d[k], k).to.deep.equal(j[k]);
    expect(Object.keys(d.metadata)).to.deep.equal(Object.keys(j.metadata));
    expect(d.metadata.text_contents).to.have.length(j.metadata.text_contents.length);
    j.metadata.text_contents.forEach((page: Record<string, unknown>, i: number) => {
      const mine = d.metadata.text_contents[i];
      expect(Object.keys(mine), `page ${String(page.page)}`).to.deep.equal(Object.keys(page));
      for (const k of Object.keys(page)) expect(mine[k], `page ${String(page.page)} ${k}`).to.deep.equal(page[k]);
    });
    expect(direct.body).to.deep.equal(job.body);
    started = [];
    return d;
  }

  for (const [cores, how] of [
    [1, 'one process per reader'],
    [2, 'each reader split across two processes'],
  ] as const) {
    it(`answers a structured document and page ranges with the job's data, without a workflow (${how})`, async () => {
      directPdfReading.idleCores = () => cores;
      try {
        const whole = await sameAsJob({ ...MD, useCache: 'false' }, structured);
        // A real Markdown answer: headings, a table, each page its Markdown and quality.
        expect(whole.markdown)
          .to.match(/^# /m)
          .and.match(/^\| .* \|$/m);
        for (const p of whole.metadata.text_contents) {
          expect(p.markdown).to.be.a('string');
          expect(p.quality.score).to.be.a('number');
        }
        // Chunks of the Markdown (contract §14) are cut in the thread too: the job's, without a workflow.
        const chunked = await sameAsJob(
          { ...MD, useCache: 'false', chunking: 'true', chunk_max_tokens: '120' },
          structured,
        );
        expect(chunked.chunks.length).to.be.greaterThan(3);
        expect(chunked.chunking).to.deep.equal({ tokenizer: 'cl100k_base', max_tokens: 120, overlap_tokens: 0 });
        expect(chunked.chunks.flatMap((c: { pages: number[] }) => c.pages)).to.include(2);
        const pdf = docPdf(INLINE);
        const ranges: Record<string, string>[] = [
          {},
          { page_start: '3', page_end: '37' },
          { page_start: '39' },
          { page_end: '1' },
        ];
        for (const range of ranges) await sameAsJob({ ...MD, useCache: 'false', ...range }, pdf);
      } finally {
        directPdfReading.idleCores = idleCores;
      }
      await nothingLeft();
    });
  }

  it("writes the job's cache entry: a repeat is a hit without a job, and a job copies the same entry", async () => {
    const pdf = docPdf(4);
    const first = await postPdf(s, MD, pdf);
    expect(first.status, JSON.stringify(first.body).slice(0, 300)).to.equal(200);
    expect(first.headers.get('x-cache')).to.equal('miss');
    expect(first.body.data.markdown).to.include('Seite 4 Zeile 9');
    const hit = await postPdf(s, MD, pdf);
    expect([hit.status, hit.headers.get('x-cache')]).to.deep.equal([200, 'hit']);
    expect(hit.body).to.deep.equal(first.body);
    // The text format is another entry: read again (directly), without the Markdown.
    const text = await postPdf(s, { extraction_method: 'native' }, pdf);
    expect([text.status, text.headers.get('x-cache')]).to.deep.equal([200, 'miss']);
    expect(text.body.data).not.to.have.property('markdown');
    expect(text.body.data.extracted_text).to.equal(first.body.data.extracted_text);
    expect(started).to.deep.equal([]);
    const sha256 = createHash('sha256').update(pdf).digest('hex');
    const key = pdfCacheKey(sha256, MD, { textEngine: 'poppler' })!;
    const ref = await readCacheRef(s.api.store, PDF_CACHE_OPERATION, key);
    expect(ref, 'the entry under the Markdown key').to.not.equal(null);
    expect(ref!.job_id, 'no job: no job id').to.equal(undefined);
    expect((await readBlobBuffer(s.api.store, ref!.files['result.md'])).toString('utf8')).to.equal(
      first.body.data.markdown,
    );
    // A job asked for (202 at once) takes its result from the entry the API wrote, with the job's own fields.
    const asked = await postMultipart(
      `${s.url}/api/pdf/process`,
      MD,
      { bytes: pdf, name: 'doc.pdf', type: 'application/pdf' },
      { Prefer: 'respond-async' },
    );
    expect(asked.status, JSON.stringify(asked.body)).to.equal(202);
    const jobId = (asked.body as { data: { job_id: string } }).data.job_id;
    const done = await s.waitJob(jobId, 60_000);
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect(done.results.from_cache).to.equal(true);
    expect(resultData(done.results)).to.deep.equal(first.body.data);
    expect(done.results.structured_data).to.deep.equal({
      extracted_text: first.body.data.extracted_text,
      metadata: first.body.data.metadata,
    });
    const md = (await readBlobBuffer(s.api.store, `jobs/${jobId}/out/result.md`)).toString('utf8');
    expect(md).to.equal(first.body.data.markdown);
    expect(started).to.deep.equal([jobId]);
    await nothingLeft();
  });

  it('answers a hit on an entry a job wrote, without a job', async () => {
    const pdf = docPdf(3);
    const job = await viaJob(MD, pdf);
    expect(job.status, JSON.stringify(job.body).slice(0, 300)).to.equal(200);
    expect(started).to.have.length(1);
    const hit = await postPdf(s, MD, pdf);
    expect([hit.status, hit.headers.get('x-cache')]).to.deep.equal([200, 'hit']);
    expect(hit.body.data).to.deep.equal(job.body.data);
    expect(started).to.have.length(1);
    await nothingLeft();
  });

  const refused = refusedPdfs(MAX_PAGES, docPdf);
  for (const [name, file, range, status, code] of refused) {
    it(`refuses ${name} with the job's envelope (${status} ${code}) but no job id, and no workflow`, async () => {
      const pdf = file();
      const fields = { ...MD, ...range };
      const job = await viaJob(fields, pdf);
      expect(job.status, JSON.stringify(job.body)).to.equal(status);
      expect(started).to.have.length(1);
      const direct = await postPdf(s, fields, pdf);
      expect(direct.status, JSON.stringify(direct.body)).to.equal(status);
      expect(started, 'no workflow').to.have.length(1);
      // The one documented difference: the job path names its job.
      expect(job.body.error.details.job_id).to.equal(started[0]);
      const { job_id: _id, ...jobDetails } = job.body.error.details;
      void _id;
      expect(direct.body.error.code).to.equal(code);
      expect({ ...direct.body.error, request_id: null }).to.deep.equal({
        ...job.body.error,
        details: jobDetails,
        request_id: null,
      });
      await nothingLeft();
    });
  }

  it(`reads more than INLINE_PDF_MAX_PAGES (${INLINE}) pages in a job, and runs jobs when asked or set to 0`, async () => {
    const big = await postPdf(s, { ...MD, useCache: 'false' }, docPdf(INLINE + 1));
    expect(big.status, JSON.stringify(big.body).slice(0, 300)).to.equal(200);
    expect(big.body.data.metadata.text_contents).to.have.length(INLINE + 1);
    expect(big.body.data.markdown).to.include(`Seite ${INLINE + 1} Zeile 9`);
    expect(started, 'over the threshold: a job').to.have.length(1);
    const small = docPdf(1);
    const asked = await postMultipart(
      `${s.url}/api/pdf/process`,
      { ...MD, useCache: 'false' },
      { bytes: small, name: 'doc.pdf', type: 'application/pdf' },
      { Prefer: 'respond-async' },
    );
    expect(asked.status).to.equal(202);
    expect(started, 'Prefer: respond-async: a job').to.have.length(2);
    expect((await s.waitJob(started[1], 60_000)).status).to.equal('completed');
    const config = s.api.config as { INLINE_PDF_MAX_PAGES: number };
    config.INLINE_PDF_MAX_PAGES = 0;
    try {
      const r = await postPdf(s, { ...MD, useCache: 'false' }, small);
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).to.equal(200);
      expect(r.body.data.markdown).to.include('Kapitel 1');
      expect(started, 'threshold 0: a job').to.have.length(3);
    } finally {
      config.INLINE_PDF_MAX_PAGES = INLINE;
    }
    await nothingLeft();
  });

  it('stops the read when the client goes away: the thread and its processes end, nothing is cached', async () => {
    const pdf = docPdf(INLINE);
    const runs = nativeMarkdownThreadRuns();
    const gone = new AbortController();
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), 'doc.pdf');
    for (const [k, v] of Object.entries(MD)) form.append(k, v);
    const req = fetch(`${s.url}/api/pdf/process`, { method: 'POST', body: form, signal: gone.signal });
    // Gone once a thread is at work on it.
    const t0 = Date.now();
    while (nativeMarkdownThreadsBusy() === 0 && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 2));
    gone.abort();
    await req.catch(() => undefined);
    // The thread is terminated at once; its processes go with their launcher's lifeline and their pipes.
    const t1 = Date.now();
    while (Date.now() - t1 < 30_000) {
      if (
        nativeMarkdownThreadsBusy() === 0 &&
        popplerPids(process.pid).length === 0 &&
        childPids(process.pid, /\bpdftohtml\b/).length === 0
      )
        break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(nativeMarkdownThreadRuns(), 'the aborted read gave no answer').to.equal(runs);
    const sha256 = createHash('sha256').update(pdf).digest('hex');
    const key = pdfCacheKey(sha256, MD, { textEngine: 'poppler' })!;
    expect(await readCacheRef(s.api.store, PDF_CACHE_OPERATION, key)).to.equal(null);
    expect(started).to.deep.equal([]);
    await nothingLeft();
  });
});
