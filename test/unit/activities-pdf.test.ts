import { expect } from 'chai';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { readBlobJson, writeBlobJson } from '../../core/stores/blob-store';
import { jobInternalKey } from '../../core/stores/records';
import { activityHarness, failureOf, retryable } from '../support/workflows/activity-harness';
import { fakePdf, type FakePage } from '../support/workflows/in-memory-engines';

// preparePdf and extractPdfPages in MockActivityEnvironment, with in-memory PDF and OCR engines over a real local
// blob store: which pages reach the engine (reuse, cache), which failures are final, heartbeats and cancellation.

type Harness = Awaited<ReturnType<typeof activityHarness>>;

const scanned = (n: number): FakePage[] =>
  Array.from({ length: n }, (_, i) => ({ text: '', scan: `scanned text of page ${i + 1}` }));

/** Uploads a document as the API does and answers the prepared job's input. */
async function prepared(h: Harness, jobId: string, bytes: Buffer, parameters: Record<string, unknown> = {}) {
  const ref = await h.store.put(`uploads/${jobId}.pdf`, bytes, { mime: 'application/pdf' });
  const r = await h.run(h.activities.preparePdf, [{ jobId, parameters: { file_key: ref.key, ...parameters } }]);
  return { ...r, jobId, parameters };
}

/** A page group's input as the pdf pipeline schedules it: the job's options from its parameters. */
const extract = (
  doc: { jobId: string; inputKey: string; sha256: string; parameters?: Record<string, unknown> },
  pages: number[],
  method: 'native' | 'local_ocr' | 'vision_llm' | 'combined' = 'local_ocr',
  languages?: string,
) => ({
  jobId: doc.jobId,
  inputKey: doc.inputKey,
  sha256: doc.sha256,
  pages,
  method,
  languages,
  useCache: doc.parameters?.use_cache !== false,
  markdown: doc.parameters?.output_format === 'markdown',
});

describe('activities: preparePdf (in-memory PDF engine)', () => {
  let h: Harness;
  beforeEach(async () => (h = await activityHarness({ env: { MAX_PDF_PAGES: '5' } })));
  afterEach(() => h.remove());

  it('describes the uploaded document once and answers its metadata and the pages of the asked range', async () => {
    const bytes = fakePdf(scanned(4), { title: 'Minutes', author: 'Clerk' });
    const r = await prepared(h, 'job-p1', bytes, { page_start: 2, page_end: 3 });
    expect(r).to.include({ pageCount: 4, title: 'Minutes', author: 'Clerk', inputKey: 'uploads/job-p1.pdf' });
    expect(r.pages).to.deep.equal([2, 3]);
    expect(r.mediaSlots).to.be.a('number').and.at.least(1);
    expect(h.pdf.calls.describe).to.equal(1);
  });

  for (const [what, bytes, code] of [
    ['bytes that are no PDF', Buffer.from('GIF89a not a pdf'), 'INVALID_FORMAT'],
    ['a damaged PDF', Buffer.from('%FAKEPDF\n{"pages": [tru'), 'UNPROCESSABLE_INPUT'],
    ['a PDF without pages', fakePdf([]), 'UNPROCESSABLE_INPUT'],
  ] as const) {
    it(`${what} fails non-retryable with ${code}`, async () => {
      const f = await failureOf(prepared(h, 'job-p2', bytes));
      expect(f).to.be.instanceOf(ApplicationFailure);
      expect([(f as ApplicationFailure).type, retryable(f)]).to.deep.equal([code, false]);
    });
  }

  it('a document over MAX_PDF_PAGES, or a range outside it, fails non-retryable with VALIDATION_ERROR', async () => {
    const tooLong = (await failureOf(prepared(h, 'job-p3', fakePdf(scanned(6))))) as ApplicationFailure;
    expect([tooLong.type, retryable(tooLong)]).to.deep.equal(['VALIDATION_ERROR', false]);
    expect(tooLong.details?.[0]).to.include({ limit: 5, page_count: 6 });
    const outside = (await failureOf(
      prepared(h, 'job-p4', fakePdf(scanned(3)), { page_start: 4, page_end: 9 }),
    )) as ApplicationFailure;
    expect([outside.type, retryable(outside)]).to.deep.equal(['VALIDATION_ERROR', false]);
    expect(outside.details?.[0]).to.include({ page_count: 3 });
  });

  it('a crash of the engine stays retryable', async () => {
    h.pdf.describeMisbehaves = 'crash';
    const f = await failureOf(prepared(h, 'job-p5', fakePdf(scanned(2))));
    expect(retryable(f)).to.equal(true);
    expect(String(f)).to.match(/SIGSEGV/);
    h.pdf.describeMisbehaves = undefined;
    expect((await prepared(h, 'job-p5', fakePdf(scanned(2)))).pageCount).to.equal(2);
  });

  it('heartbeats while the engine reads a slow document', async () => {
    h.pdf.describeDelayMs = 1300;
    const ref = await h.store.put('uploads/slow.pdf', fakePdf(scanned(2)));
    const { env, beats } = h.environment();
    await env.run(h.activities.preparePdf, { jobId: 'job-p6', parameters: { file_key: ref.key } });
    expect(beats.length).to.be.at.least(1);
  });

  it("a cancel reaches the engine through the activity's signal and ends the attempt as cancelled", async () => {
    h.pdf.describeMisbehaves = 'hang';
    const ref = await h.store.put('uploads/hang.pdf', fakePdf(scanned(2)));
    const { env } = h.environment();
    const running = env.run(h.activities.preparePdf, { jobId: 'job-p7', parameters: { file_key: ref.key } });
    while (h.pdf.signals.length === 0) await new Promise((r) => setTimeout(r, 5));
    env.cancel();
    expect(await failureOf(running)).to.be.instanceOf(CancelledFailure);
    expect(h.pdf.signals[0].aborted).to.equal(true);
  });
});

describe('activities: extractPdfPages (in-memory PDF and OCR engines)', () => {
  let h: Harness;
  beforeEach(async () => (h = await activityHarness()));
  afterEach(() => h.remove());

  it("renders and recognises each page once, keeps each page's text under the job and heartbeats the page cursor", async () => {
    const doc = await prepared(h, 'job-e1', fakePdf(scanned(3)));
    const { run, beats } = h.environment();
    const r = await run(h.activities.extractPdfPages, extract(doc, [1, 2, 3], 'local_ocr', 'de'));
    expect(h.ocr.recognized).to.deep.equal([1, 2, 3]);
    expect(h.pdf.calls.renderPages).to.deep.equal([1, 2, 3]);
    expect(h.ocr.languagesAsked).to.deep.equal([['deu'], ['deu'], ['deu']]);
    expect(r.pages.map((p) => [p.page, p.method, p.reused])).to.deep.equal([
      [1, 'local_ocr', false],
      [2, 'local_ocr', false],
      [3, 'local_ocr', false],
    ]);
    expect(beats.filter((b) => b !== undefined)).to.deep.equal([{ page: 1 }, { page: 2 }, { page: 3 }]);
    const kept = await readBlobJson<Record<string, unknown>>(h.store, jobInternalKey('job-e1', 'pages/2.json'));
    expect(kept).to.include({ page: 2, text: 'scanned text of page 2', method: 'local_ocr', confidence: 90 });
  });

  it('a retry after an engine crash reuses the pages already recognised and sends only the rest to the engine', async () => {
    const doc = await prepared(h, 'job-e2', fakePdf(scanned(4)));
    h.ocr.crashOn.add(3);
    const f = await failureOf(h.run(h.activities.extractPdfPages, [extract(doc, [1, 2, 3, 4])]));
    expect(retryable(f)).to.equal(true);
    expect(h.ocr.recognized).to.deep.equal([1, 2]);
    h.ocr.crashOn.clear();
    const r = await h.run(h.activities.extractPdfPages, [extract(doc, [1, 2, 3, 4])], { attempt: 2 });
    expect(r.attempt).to.equal(2);
    expect(h.ocr.recognized).to.deep.equal([1, 2, 3, 4]);
    expect(h.pdf.calls.renderPages).to.deep.equal([1, 2, 3, 3, 4]);
    expect(r.pages.map((p) => p.reused)).to.deep.equal([true, true, false, false]);
  });

  it('a page in the page cache (the same document, method and languages) skips the engine; other languages do not', async () => {
    const bytes = fakePdf(scanned(2));
    const first = await prepared(h, 'job-e3', bytes);
    await h.run(h.activities.extractPdfPages, [extract(first, [1, 2], 'local_ocr', 'de')]);
    expect(h.ocr.recognized).to.deep.equal([1, 2]);
    const second = await prepared(h, 'job-e4', bytes);
    const r = await h.run(h.activities.extractPdfPages, [extract(second, [1, 2], 'local_ocr', 'de')]);
    expect(r.pages.map((p) => [p.reused, p.chars])).to.deep.equal([
      [true, 'scanned text of page 1'.length],
      [true, 'scanned text of page 2'.length],
    ]);
    expect(h.ocr.recognized).to.deep.equal([1, 2]);
    expect(h.pdf.calls.renderPages).to.deep.equal([1, 2]);
    await h.run(h.activities.extractPdfPages, [extract(second, [1, 2], 'local_ocr', 'en')]);
    expect(h.ocr.recognized).to.deep.equal([1, 2, 1, 2]);
  });

  it("a job prepared with use_cache false reads no cached page, yet a retry of it reuses the job's own pages", async () => {
    const bytes = fakePdf(scanned(2));
    await h.run(h.activities.extractPdfPages, [extract(await prepared(h, 'job-e5', bytes), [1, 2])]);
    const fresh = await prepared(h, 'job-e6', bytes, { use_cache: false });
    const r = await h.run(h.activities.extractPdfPages, [extract(fresh, [1, 2])]);
    expect(r.pages.map((p) => p.reused)).to.deep.equal([false, false]);
    expect(h.ocr.recognized).to.deep.equal([1, 2, 1, 2]);
    const again = await h.run(h.activities.extractPdfPages, [extract(fresh, [1, 2])], { attempt: 2 });
    expect(again.pages.map((p) => p.reused)).to.deep.equal([true, true]);
    expect(h.ocr.recognized).to.have.length(4);
  });

  it('a group scheduled before the options travelled in its input reads the note its run wrote (pdf-options.json)', async () => {
    const bytes = fakePdf(scanned(2));
    await h.run(h.activities.extractPdfPages, [extract(await prepared(h, 'job-e7', bytes), [1, 2])]);
    const old = await prepared(h, 'job-e8', bytes);
    // What preparePdf wrote for a job with use_cache false before the page groups carried it.
    await writeBlobJson(h.store, jobInternalKey('job-e8', 'pdf-options.json'), { use_cache: false });
    const { useCache, markdown, ...before } = extract(old, [1, 2]);
    expect([useCache, markdown]).to.deep.equal([true, false]);
    const r = await h.run(h.activities.extractPdfPages, [before]);
    expect(r.pages.map((p) => p.reused)).to.deep.equal([false, false]);
    expect(h.ocr.recognized).to.deep.equal([1, 2, 1, 2]);
    // Without the note (the default), an old group reads the page cache.
    const plain = await prepared(h, 'job-e9', bytes);
    const { useCache: _u, markdown: _m, ...beforePlain } = extract(plain, [1, 2]);
    const again = await h.run(h.activities.extractPdfPages, [beforePlain]);
    expect(again.pages.map((p) => p.reused)).to.deep.equal([true, true]);
    expect(h.ocr.recognized).to.have.length(4);
  });

  it("preparePdf writes no side channel: the options travel in the page groups' input", async () => {
    const doc = await prepared(h, 'job-e10', fakePdf(scanned(1)), { use_cache: false, output_format: 'markdown' });
    expect(await h.store.stat(jobInternalKey(doc.jobId, 'pdf-options.json'))).to.equal(null);
    expect(extract(doc, [1])).to.include({ useCache: false, markdown: true });
  });

  it('combined OCRs only the pages whose text layer is unusable and that paint an image', async () => {
    const layer = 'A text layer long enough to be taken as it is, with words and sentences.';
    const doc = await prepared(
      h,
      'job-e7',
      fakePdf([{ text: layer }, { text: '' }, { text: '', scan: 'the scanned second half' }]),
    );
    const r = await h.run(h.activities.extractPdfPages, [extract(doc, [1, 2, 3], 'combined')]);
    expect(r.pages.map((p) => [p.page, p.method])).to.deep.equal([
      [1, 'native'],
      [2, 'native'],
      [3, 'local_ocr'],
    ]);
    expect(h.ocr.recognized).to.deep.equal([3]);
    expect(h.pdf.calls.readPageTexts).to.deep.equal([[1, 2, 3]]);
    expect(h.pdf.calls.pagesWithImages).to.deep.equal([[1, 2, 3]]);
  });

  it('an OCR language that is not installed fails non-retryable with UNPROCESSABLE_INPUT before any page is read', async () => {
    const doc = await prepared(h, 'job-e8', fakePdf(scanned(2)));
    const f = (await failureOf(
      h.run(h.activities.extractPdfPages, [extract(doc, [1, 2], 'local_ocr', 'fr')]),
    )) as ApplicationFailure;
    expect([f.type, retryable(f), (f.details?.[0] as { reason?: string }).reason]).to.deep.equal([
      'UNPROCESSABLE_INPUT',
      false,
      'language_not_installed',
    ]);
    expect(h.pdf.calls.renderPages).to.deep.equal([]);
  });

  it("a page the engine refuses fails non-retryable with the engine's code, keeping the pages read before it", async () => {
    const doc = await prepared(h, 'job-e9', fakePdf(scanned(2)));
    const f = (await failureOf(h.run(h.activities.extractPdfPages, [extract(doc, [1, 2, 5])]))) as ApplicationFailure;
    expect([f.type, retryable(f)]).to.deep.equal(['VALIDATION_ERROR', false]);
    expect(await h.store.stat(jobInternalKey('job-e9', 'pages/2.json'))).to.not.equal(null);
  });

  it('vision_llm without a language model fails non-retryable with PROVIDER_NOT_CONFIGURED', async () => {
    const doc = await prepared(h, 'job-e10', fakePdf(scanned(1)));
    const f = (await failureOf(
      h.run(h.activities.extractPdfPages, [extract(doc, [1], 'vision_llm')]),
    )) as ApplicationFailure;
    expect([f.type, retryable(f)]).to.deep.equal(['PROVIDER_NOT_CONFIGURED', false]);
    expect(h.pdf.calls.renderPagePng).to.deep.equal([]);
  });

  it('heartbeats while one page takes the engine a long time', async () => {
    const doc = await prepared(h, 'job-e11', fakePdf(scanned(1)));
    h.ocr.delayMs = 1300;
    const { env, beats } = h.environment();
    await env.run(h.activities.extractPdfPages, extract(doc, [1]));
    // The step's own beat (no details) came while the engine worked, before the cursor of the finished page.
    expect(beats.indexOf(undefined)).to.be.at.least(0);
    expect(beats.indexOf(undefined)).to.be.below(beats.findIndex((b) => b !== undefined));
  });

  it('a cancel kills the running recognition, ends the attempt as cancelled and keeps the pages finished before it', async () => {
    const doc = await prepared(h, 'job-e12', fakePdf(scanned(3)));
    h.ocr.hangOn.add(2);
    const { env } = h.environment();
    h.ocr.onStart = (page) => {
      if (page === 2) setImmediate(() => env.cancel());
    };
    const f = await failureOf(env.run(h.activities.extractPdfPages, extract(doc, [1, 2, 3])));
    expect(f).to.be.instanceOf(CancelledFailure);
    expect(h.ocr.signals.at(-1)?.aborted).to.equal(true);
    expect(h.ocr.recognized).to.deep.equal([1]);
    h.ocr.onStart = undefined;
    h.ocr.hangOn.clear();
    const r = await h.run(h.activities.extractPdfPages, [extract(doc, [1, 2, 3])], { attempt: 2 });
    expect(r.pages.map((p) => p.reused)).to.deep.equal([true, false, false]);
    expect(h.ocr.recognized).to.deep.equal([1, 2, 3]);
  });
});

describe('activities: how many pdftotext processes read a text layer (idleCores)', () => {
  it('splits across the cores the last minute left idle, at least one process, at most one per core', async () => {
    const { idleCores } = await import('../../activities/pdf.activities');
    expect(idleCores(2, 0)).to.equal(2);
    expect(idleCores(2, 0.4)).to.equal(2);
    expect(idleCores(2, 1)).to.equal(1);
    expect(idleCores(2, 10)).to.equal(1);
    expect(idleCores(8, 3.2)).to.equal(5);
  });
});
