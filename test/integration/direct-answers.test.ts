import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import type { Stack } from '../support/servers/stack';
import { useLlmStack } from '../support/servers/llm-env';
import type { LlmServer } from '../support/servers/llm-server';
import { waitFor } from '../support/wait';
import { peekCache } from '../../core/stores/cache';
import { TRANSFORM_CACHE_OPERATION, transformCacheKey } from '../../core/stores/cache-keys';
import { htmlThreadRuns } from '../../providers/html';
import { buildPdf } from '../support/documents/pdf-factory';
import { postMultipart, postPdf } from '../support/clients/pdf-http';
import { pageImage } from '../support/results';

// Issue 24: synchronous requests the API answers itself, without a job: transformer and PDF cache hits (from the entry
// the activity wrote) and small model-free HTML operations (in the API's worker threads). The real API and worker, the
// shared Temporal dev server, the OpenAI-compatible test server. Workflow starts are counted twice: at the API's
// Temporal client (every start passes there) and in the dev server's visibility store.

const MAX = 16_384;
let seq = 0;
const fresh = (what: string) => `${what} ${Date.now()}-${++seq}`;
/** A page of about `bytes` bytes, unique to this call. */
const page = (bytes: number) => {
  const tag = fresh('p');
  const row = `<tr><td>${tag}</td><td>Zelle mit <b>fett</b></td></tr>`;
  return `<h2>${tag}</h2><table><tr><th>K</th><th>V</th></tr>${row.repeat(Math.ceil(bytes / row.length))}</table>`;
};

describe('answers without a job', function () {
  this.timeout(60_000);
  let s: Stack;
  let llm: LlmServer;
  /** The workflow ids the API started in this test, in order, and in the tests before. */
  let started: string[] = [];
  const earlier = new Set<string>();
  useLlmStack(
    (stack, server) => {
      s = stack;
      llm = server;
      const wf = s.api.temporal.client.workflow;
      const start = wf.start.bind(wf);
      // Counts the starts and passes them on unchanged: Temporal runs every one of them.
      wf.start = ((type: never, options: { workflowId: string }) => {
        started.push(options.workflowId);
        earlier.add(options.workflowId);
        return start(type, options as never);
      }) as typeof wf.start;
    },
    { INLINE_TRANSFORM_MAX_BYTES: String(MAX) },
  );
  let since: Date;
  beforeEach(() => {
    started = [];
    since = new Date(Date.now() - 1000);
  });

  const post = (path: string, body: unknown, headers?: Record<string, string>) =>
    s.call('POST', `/api/transformer/${path}`, body, headers);

  /**
   * The jobs this stack's API started since the test began (none of an earlier test's), as Temporal lists them, once it
   * lists `expected`.
   */
  async function listedSince(expected: string[]): Promise<string[]> {
    const before = new Set([...earlier].filter((id) => !expected.includes(id)));
    const query = `WorkflowType = "jobWorkflow" AND TaskQueue = "${s.api.temporal.queues.io}" AND StartTime >= "${since.toISOString()}"`;
    const list = async () => {
      const ids: string[] = [];
      for await (const w of s.api.temporal.client.workflow.list({ query }))
        if (!before.has(w.workflowId)) ids.push(w.workflowId);
      return ids.sort();
    };
    await waitFor(
      async () => ((await list()).filter((id) => expected.includes(id)).length === expected.length ? true : undefined),
      'visibility to list the started jobs',
      30_000,
      200,
    );
    return list();
  }

  it('answers a repeated translation from the cache without starting a workflow; use_cache=false runs a job again', async () => {
    let n = 0;
    llm.respond(() => ({ content: `Version ${++n}` }));
    const body = { text: fresh('Guten Morgen'), source_language: 'de', target_language: 'en' };
    const first = await post('text', body);
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect([first.headers.get('x-cache'), started.length]).to.deep.equal(['miss', 1]);
    const hit = await post('text', body);
    expect(hit.status).to.equal(200);
    expect(hit.headers.get('x-cache')).to.equal('hit');
    expect(hit.body).to.deep.equal(first.body);
    expect(started, 'a hit starts no workflow').to.have.length(1);
    // wait_ms=N asks to wait at most N ms: a hit is there at once.
    expect((await post('text?wait_ms=5000', body)).headers.get('x-cache')).to.equal('hit');
    expect(started).to.have.length(1);
    const forced = await post('text', { ...body, use_cache: false });
    expect([forced.headers.get('x-cache'), forced.body.data.translated_text]).to.deep.equal(['miss', 'Version 2']);
    expect(started, 'use_cache=false runs the job').to.have.length(2);
    expect(llm.chatRequests()).to.have.length(2);
    const after = await post('text', body);
    expect([after.headers.get('x-cache'), after.body.data.translated_text]).to.deep.equal(['hit', 'Version 2']);
    expect(started).to.have.length(2);
    expect(await listedSince(started)).to.deep.equal([...started].sort());
  });

  it('finds the entries of named and inline templates and of summaries, written by the activity, under the same keys', async () => {
    const text = fresh('Ada Lovelace trifft Charles Babbage in London.');
    const bodies: [string, Record<string, unknown>][] = [
      ['template', { text, template: 'Besprechung', target_language: 'en' }],
      ['template', { text, template_content: 'Person: {{person|the person named}}\n\n{{text}}' }],
      ['summarize', { text, max_length: 120 }],
    ];
    for (const [path, body] of bodies) {
      const miss = await post(path, body);
      expect(miss.status, JSON.stringify(miss.body)).to.equal(200);
      expect(miss.headers.get('x-cache')).to.equal('miss');
      const hit = await post(path, body);
      expect(hit.headers.get('x-cache'), path).to.equal('hit');
      expect(hit.body).to.deep.equal(miss.body);
    }
    expect(started).to.have.length(3);
    expect(llm.chatRequests()).to.have.length(3);
    // A client that asks for a job gets one, hit or not.
    const accepted = await post('summarize', { text, max_length: 120 }, { Prefer: 'respond-async' });
    expect(accepted.status).to.equal(202);
    expect(started).to.deep.include(accepted.body.data.job_id);
    expect((await post('summarize?wait_ms=0', { text, max_length: 120 })).status).to.equal(202);
    expect(started).to.have.length(5);
    expect(await listedSince(started)).to.deep.equal([...started].sort());
  });

  it('converts a small page in the API worker threads, without a workflow, to what the activity produces', async () => {
    for (const operation of ['html-to-markdown', 'extract-tables'] as const) {
      const html = page(1000);
      const key = transformCacheKey({ operation, html });
      // The job (asked for with wait_ms): the activity converts it and writes the cache entry.
      const threads = htmlThreadRuns();
      const viaJob = await post(`${operation}?wait_ms=60000`, { html, use_cache: false });
      expect(viaJob.status, JSON.stringify(viaJob.body)).to.equal(200);
      expect(started, operation).to.have.length(1);
      expect(htmlThreadRuns(), 'a small page in the activity converts inline').to.equal(threads);
      const activityEntry = await peekCache(s.api.store, TRANSFORM_CACHE_OPERATION, key);
      // The API itself, again without reading the cache: one more run of the thread pool, no workflow.
      const direct = await post(operation, { html, use_cache: false });
      expect(direct.status, JSON.stringify(direct.body)).to.equal(200);
      expect(direct.headers.get('x-cache')).to.equal('miss');
      expect(started, 'no workflow for a small page').to.have.length(1);
      expect(htmlThreadRuns(), 'converted in a worker thread, not on the event loop').to.equal(threads + 1);
      expect(direct.body).to.deep.equal(viaJob.body);
      expect(await peekCache(s.api.store, TRANSFORM_CACHE_OPERATION, key)).to.deep.equal(activityEntry);
      // Its entry answers the next request, and a job's run of the same request.
      expect((await post(operation, { html })).headers.get('x-cache')).to.equal('hit');
      const job = await s.call('POST', '/api/jobs/', { job_type: 'transformer', parameters: { operation, html } });
      const done = await s.waitJob(job.body.data.job_id);
      expect(done.results.from_cache).to.equal(true);
      started = [];
    }
  });

  it(`sends a page over INLINE_TRANSFORM_MAX_BYTES (${MAX}) through a job, and a deep page under it is a 422 without one`, async () => {
    const big = page(MAX + 2000);
    expect(Buffer.byteLength(big)).to.be.above(MAX);
    const threads = htmlThreadRuns();
    const r = await post('html-to-markdown', { html: big });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(started, 'over the threshold: a job').to.have.length(1);
    expect(htmlThreadRuns()).to.equal(threads);
    expect(r.body.data.markdown).to.match(/\| K +\| V +\|/);
    const small = page(2000);
    const ok = await post('html-to-markdown', { html: small });
    expect(ok.status).to.equal(200);
    expect(started).to.have.length(1);
    expect(htmlThreadRuns()).to.equal(threads + 1);
    const deep = `${'<b>'.repeat(1001)}x${'</b>'.repeat(1001)}`;
    expect(Buffer.byteLength(deep)).to.be.below(MAX);
    const refused = await post('html-to-markdown', { html: deep, use_cache: false });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(422);
    expect(refused.body.error).to.deep.include({ code: 'UNPROCESSABLE_INPUT' });
    expect(refused.body.error.details).to.deep.equal({ max_depth: 1000 });
    expect(started).to.have.length(1);
    // The same page as a job fails with the same error.
    const viaJob = await post('html-to-markdown?wait_ms=60000', { html: deep, use_cache: false });
    expect(viaJob.status).to.equal(422);
    expect(viaJob.body.error.code).to.equal('UNPROCESSABLE_INPUT');
    expect(viaJob.body.error.details.max_depth).to.equal(1000);
    expect(started).to.have.length(2);
    expect(await listedSince(started)).to.deep.equal([...started].sort());
  });

  it("answers a repeated PDF from a job's cache entry without a job, the same bytes; a client asking for a job gets one", async () => {
    const pdf = buildPdf({
      title: 'Direkt',
      pages: [{ kind: 'lines', lines: [fresh('Einmalig – Größe'), 'Zweite Zeile'] }],
    });
    const pdfFile = { bytes: pdf, name: 'doc.pdf', type: 'application/pdf' };
    // `wait_ms` asks for a job: the activity writes the entry (a small native request is otherwise read by the API).
    const first = await postMultipart(
      `${s.url}/api/pdf/process?wait_ms=60000`,
      { extraction_method: 'native' },
      pdfFile,
    );
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect([first.headers.get('x-cache'), started.length]).to.deep.equal(['miss', 1]);
    const hit = await postPdf(s, { extraction_method: 'native' }, pdf);
    expect(hit.status).to.equal(200);
    expect(hit.headers.get('x-cache')).to.equal('hit');
    expect(hit.body).to.deep.equal(first.body);
    expect(started, 'a hit starts no workflow').to.have.length(1);
    // useCache=false and another page range read the document again: in the API (INLINE_PDF_MAX_PAGES), no job.
    const bypass = await postPdf(s, { extraction_method: 'native', useCache: 'false' }, pdf);
    expect([bypass.status, bypass.headers.get('x-cache')]).to.deep.equal([200, 'miss']);
    expect(bypass.body).to.deep.equal(first.body);
    const range = await postPdf(s, { extraction_method: 'native', page_end: '1' }, pdf);
    expect(range.headers.get('x-cache'), 'another page range is another entry').to.equal('miss');
    expect(started).to.have.length(1);
    const accepted = await postMultipart(
      `${s.url}/api/pdf/process?wait_ms=0`,
      { extraction_method: 'native' },
      pdfFile,
    );
    expect(accepted.status, 'a client that asks for a job gets one').to.equal(202);
    expect(started).to.have.length(2);
    expect(await listedSince(started)).to.deep.equal([...started].sort());
  });

  it('answers a repeated image upload from the cache without a job; use_cache=false and another language run one', async () => {
    const image = { bytes: pageImage([fresh('Die Brücke ist gesperrt.')]), name: 'schild.png', type: 'image/png' };
    const post = (fields: Record<string, string> = {}) => postMultipart(`${s.url}/api/imageocr/process`, fields, image);
    const first = await post();
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect([first.headers.get('x-cache'), started.length]).to.deep.equal(['miss', 1]);
    expect(first.body.data.extracted_text).to.include('Brücke');
    const hit = await post();
    expect([hit.status, hit.headers.get('x-cache')]).to.deep.equal([200, 'hit']);
    expect(hit.body).to.deep.equal(first.body);
    expect(started, 'a hit starts no workflow').to.have.length(1);
    expect((await post({ use_cache: 'false' })).headers.get('x-cache')).to.equal('miss');
    expect(started).to.have.length(2);
    expect((await post({ ocr_language: 'en' })).headers.get('x-cache'), 'another language').to.equal('miss');
    expect(started).to.have.length(3);
    expect(await listedSince(started)).to.deep.equal([...started].sort());
  });
});
