import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import type { Stack } from '../support/servers/stack';
import { readBlobBuffer, readBlobJson } from '../../core/stores/blob-store';
import { resultData } from '../../core/results/job-results';
import { jobFieldsKey, jobRecordKey, jobResultsKey } from '../../core/stores/records';
import { createLogger } from '../../core/runtime/logger';
import { createRetentionSweeper } from '../../worker/retention-sweeper';
import { indexedJobIds } from '../../core/stores/job-index';
import { useLlmStack } from '../support/servers/llm-env';
import type { LlmServer } from '../support/servers/llm-server';
import { ffmpeg } from '../support/media/media-factory';
import { buildPdf } from '../support/documents/pdf-factory';
import { postMultipart, postPdf } from '../support/clients/pdf-http';
import { holdModel, recordedJobs, strayUploads, unique } from '../support/results';
import { until } from '../support/jobs';
import { tempDir } from '../support/servers/engines';

// Issue #13, defects 3 and 8, on the real API and worker, the shared Temporal dev server, pdftotext and the local
// blob store: cached answers are streamed from the stored results (the same bytes as the first answer), the text is
// stored once per job (records and cache entries point at it), a bound on heavy requests answers 429, and the
// retention sweeper deletes expired jobs, never a running one. The model is the OpenAI-compatible test server.

const DAY_MS = 24 * 3600_000;

/** A PDF of `pages` pages of distinct text, with characters JSON escapes (quotes, backslashes, umlauts). */
function textPdf(pages: number): Buffer {
  const line = (p: number, i: number) => `Seite ${p} Zeile ${i}: "Zitat" C:\\Pfad Grüße ${unique('x')}`;
  return buildPdf({
    title: 'Gespeichert',
    pages: Array.from({ length: pages }, (_, p) => ({
      kind: 'lines' as const,
      lines: Array.from({ length: 30 }, (_, i) => line(p + 1, i)),
      size: 10,
    })),
  });
}

/** POST /api/pdf/process answered as raw bytes (the envelope is compared byte for byte). */
async function rawPdfCall(
  s: Stack,
  pdf: Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; headers: Headers }> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), 'doc.pdf');
  form.append('extraction_method', 'native');
  const res = await fetch(`${s.url}/api/pdf/process`, {
    method: 'POST',
    headers,
    body: form,
    signal: AbortSignal.timeout(60_000),
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

const jobIdOf = async (s: Stack, since: Set<string>): Promise<string> => {
  const now = (await s.worker.store.list('records/jobs/')).map((b) =>
    b.key.slice('records/jobs/'.length, -'.json'.length),
  );
  const added = now.filter((id) => !since.has(id));
  expect(added, 'one job ran').to.have.length(1);
  return added[0];
};

describe('Stored results: streamed answers, the text stored once, the heavy-request bound, retention', function () {
  this.timeout(60_000);
  let s: Stack;
  let llm: LlmServer;
  useLlmStack(
    (stack, server) => {
      s = stack;
      llm = server;
    },
    // External OCR is configured (its route answers 503 otherwise) at an address where nothing listens: the requests
    // here that reach it are refused before any job exists.
    // INLINE_PDF_MAX_PAGES=0: every PDF request here runs as a job, whose stored results are what is tested
    // (test/integration/direct-pdf.test.ts covers the answers the API gives without one).
    { MAX_HEAVY_REQUESTS: '1', EXTERNAL_OCR_URL: 'http://127.0.0.1:9', INLINE_PDF_MAX_PAGES: '0' },
  );

  it('answers a repeated request from the cache with the very bytes of the first answer, streamed from the stored data', async () => {
    const pdf = textPdf(12);
    let before = await recordedJobs(s.worker.store);
    const miss = await rawPdfCall(s, pdf);
    expect(miss.status, miss.text.slice(0, 300)).to.equal(200);
    expect(miss.headers.get('x-cache')).to.equal('miss');
    const missJob = await jobIdOf(s, before);
    before = await recordedJobs(s.worker.store);
    const hit = await rawPdfCall(s, pdf);
    expect(hit.status, hit.text.slice(0, 300)).to.equal(200);
    expect(hit.headers.get('x-cache')).to.equal('hit');
    // Answered by the API from the entry (issue 24): no job ran.
    expect([...(await recordedJobs(s.worker.store))].filter((id) => !before.has(id))).to.deep.equal([]);
    // A client that asks for a job gets one, and its results come from the cache.
    const accepted = await rawPdfCall(s, pdf, { Prefer: 'respond-async' });
    expect(accepted.status, accepted.text.slice(0, 300)).to.equal(202);
    const hitJob: string = JSON.parse(accepted.text).data.job_id;
    expect((await s.waitJob(hitJob)).status).to.equal('completed');

    expect(hit.text).to.equal(miss.text);
    expect(Number(hit.headers.get('content-length'))).to.equal(Buffer.byteLength(hit.text));
    expect(hit.headers.get('content-type')).to.match(/^application\/json/);
    const body = JSON.parse(hit.text);
    expect(body.data.metadata.page_count).to.equal(12);
    expect(body.data.extracted_text).to.include('"Zitat" C:\\Pfad Grüße');
    // The job's results (GET) carry the same data, and the job fields rebuilt from their references.
    const job = await s.call('GET', `/api/jobs/${hitJob}`);
    expect(job.body.data.results.from_cache).to.equal(true);
    expect(resultData(job.body.data.results)).to.deep.equal(body.data);
    expect(job.body.data.results.structured_data).to.deep.equal({
      extracted_text: body.data.extracted_text,
      metadata: body.data.metadata,
    });
    expect(job.body.data.results.assets).to.deep.equal([`jobs/${hitJob}/out/result.md`]);
    const first = await s.call('GET', `/api/jobs/${missJob}`);
    expect(first.body.data.results.from_cache).to.equal(false);
    expect(resultData(first.body.data.results)).to.deep.equal(body.data);

    // Stored once: the record and the cache entry point at the results instead of holding the text.
    const store = s.worker.store;
    const textBytes = Buffer.byteLength(body.data.extracted_text);
    for (const id of [missJob, hitJob]) {
      const record = await readBlobBuffer(store, jobRecordKey(id));
      expect(record.length, 'record size').to.be.below(textBytes / 2);
      expect((await store.stat(jobFieldsKey(id)))!.size, 'job fields size').to.be.below(textBytes / 2);
      expect((await readBlobBuffer(store, jobResultsKey(id))).toString()).to.equal(JSON.stringify(body.data));
    }
    const entries = await store.list('cache/pdf/');
    expect(entries).to.have.length(1);
    expect(entries[0].size, 'cache entry size').to.be.below(textBytes / 2);
  });

  it('answers 429 RATE_LIMITED with Retry-After while MAX_HEAVY_REQUESTS (1) is taken, and serves again once it is free', async () => {
    const release = holdModel(llm);
    try {
      const held = s.call('POST', '/api/transformer/template', {
        text: unique('Ada Lovelace schreibt.'),
        template_content: 'Person: {{person|the person}}',
      });
      // The held request is inside its job (the model was asked): its slot is taken.
      while (llm.chatRequests().length === 0) await new Promise((r) => setTimeout(r, 20));
      const refused = await postPdf(s, { extraction_method: 'native' }, textPdf(1));
      expect(refused.status, JSON.stringify(refused.body)).to.equal(429);
      expect(refused.body.error.code).to.equal('RATE_LIMITED');
      expect(refused.headers.get('retry-after')).to.equal('2');
      expect(refused.body.error.details.limit).to.equal(1);
      release();
      const done = await held;
      expect(done.status, JSON.stringify(done.body)).to.equal(200);
    } finally {
      release();
    }
    const again = await postPdf(s, { extraction_method: 'native' }, textPdf(1));
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    // The refused request left no upload behind (the jobs that ran keep theirs).
    expect(await strayUploads(s.worker.store)).to.deep.equal([]);
  });

  it('audio and external OCR requests that wait for their job are held to the same bound: 429 while it is taken', async () => {
    const wav = path.join(tempDir('docproc-bound-'), 'tone.wav');
    await ffmpeg('-f', 'lavfi', '-i', 'sine=frequency=440:duration=2', '-ac', '1', '-ar', '16000', wav);
    const release = holdModel(llm);
    try {
      const held = s.call('POST', '/api/transformer/template', {
        text: unique('Grace Hopper schreibt.'),
        template_content: 'Person: {{person|the person}}',
      });
      while (llm.chatRequests().length === 0) await new Promise((r) => setTimeout(r, 20));
      const audio = await postMultipart(
        `${s.url}/api/audio/process`,
        {},
        {
          bytes: await readFile(wav),
          name: 'tone.wav',
          type: 'audio/wav',
        },
      );
      const ocr = await postMultipart(
        `${s.url}/api/pdf/process-external-ocr`,
        { wait_ms: '5000' },
        {
          bytes: textPdf(1),
          name: 'doc.pdf',
          type: 'application/pdf',
        },
      );
      for (const refused of [audio, ocr]) {
        expect(refused.status, JSON.stringify(refused.body)).to.equal(429);
        expect(refused.body.error.code).to.equal('RATE_LIMITED');
        expect(refused.headers.get('retry-after')).to.equal('2');
        expect(refused.body.error.details.limit).to.equal(1);
      }
      release();
      expect((await held).status).to.equal(200);
    } finally {
      release();
    }
    // Refused before any job: no upload left behind.
    expect(await strayUploads(s.worker.store)).to.deep.equal([]);
  });

  it('the retention sweeper deletes expired jobs with their files, uploaded inputs, results and cache entries once Temporal forgot them, never a running job', async () => {
    const store = s.worker.store;
    const before = await recordedJobs(s.worker.store);
    const pdf = textPdf(2);
    expect((await rawPdfCall(s, pdf)).status).to.equal(200);
    const expiredJob = await jobIdOf(s, before);
    expect(await store.list(`jobs/${expiredJob}/`)).to.not.deep.equal([]);
    // The finished job keeps its uploaded input (a restart needs it) until retention removes it with the job.
    const input = (await readBlobJson<{ parameters: { file_key: string } }>(store, jobRecordKey(expiredJob))).parameters
      .file_key;
    expect(await store.stat(input), 'the finished job keeps its input').to.not.equal(null);
    // Uploads no job owns (a request that died before its job started): removed by age.
    const day = new Date().toISOString().slice(0, 10);
    const strays = [`uploads/${day}/${randomUUID()}.pdf`, `uploads/${day}/job-${randomUUID()}.pdf`];
    for (const k of strays) await store.put(k, pdf, { mime: 'application/pdf' });

    // A job still running (its model call held), and one whose failed record is still there while a restart runs it.
    const release = holdModel(llm);
    try {
      const asked = llm.chatRequests().length;
      // Parameters over 32 KiB: the job keeps them in its folder (jobs/<id>/internal/parameters.json).
      const text = unique(`Grace Hopper. ${'Sie schreibt Programme. '.repeat(2000)}`);
      const created = await s.call('POST', '/api/jobs/', {
        job_type: 'transformer',
        parameters: { operation: 'template', text, template_content: 'Person: {{person|the person}}' },
      });
      const runningJob = created.body.data.job_id as string;
      while (llm.chatRequests().length === asked) await new Promise((r) => setTimeout(r, 20));
      const restarting = { job_id: runningJob, status: 'failed', updated_at: new Date().toISOString() };
      const sweeper = createRetentionSweeper({
        store,
        retentionDays: 1,
        client: s.api.temporal.client,
        logger: createLogger('test', 'silent'),
      });
      // Two days on: the pdf job finished two days ago; its record, files, results and cache entry are expired.
      await store.put(jobRecordKey(runningJob), JSON.stringify(restarting), { mime: 'application/json' });
      // Temporal still knows the finished workflow (within the namespace's retention): its record must outlive it.
      await sweeper.sweep(Date.now() + 2 * DAY_MS);
      expect(await store.stat(jobRecordKey(expiredJob)), 'kept while Temporal knows the workflow').to.not.equal(null);
      expect(await store.stat(input), 'its input too').to.not.equal(null);
      for (const k of strays) expect(await store.stat(k), `${k} no job owns`).to.equal(null);
      expect(await store.list('cache/')).to.deep.equal([]);
      // The running job keeps everything.
      expect(await readBlobJson(store, jobRecordKey(runningJob))).to.deep.equal(restarting);
      expect(await store.list(`jobs/${runningJob}/`)).to.not.deep.equal([]);
      await store.delete(jobRecordKey(runningJob));
      release();
      const done = await s.waitJob(runningJob);
      expect(done.status).to.equal('completed');
      expect(done.results.template_fields).to.be.an('object');
    } finally {
      release();
    }
    // Temporal's retention passes for the finished job (what the namespace's retention does, done now): it goes.
    const temporal = s.api.temporal.client;
    await temporal.workflowService.deleteWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: expiredJob },
    });
    await until(
      async () =>
        (await temporal.workflow
          .getHandle(expiredJob)
          .describe()
          .then(
            () => false,
            () => true,
          ))
          ? true
          : undefined,
      'the workflow deleted',
      60_000,
      200,
    );
    const gone = createRetentionSweeper({
      store,
      retentionDays: 1,
      client: temporal,
      logger: createLogger('test', 'silent'),
    });
    expect((await indexedJobIds(store)).has(expiredJob), 'listed before the sweep').to.equal(true);
    expect((await gone.sweep(Date.now() + 2 * DAY_MS)).jobs).to.equal(1);
    expect(await store.stat(jobRecordKey(expiredJob))).to.equal(null);
    expect((await indexedJobIds(store)).has(expiredJob), 'its entry in the job index went too').to.equal(false);
    expect(await store.list(`jobs/${expiredJob}/`)).to.deep.equal([]);
    expect(await store.stat(input), 'the input went with the job').to.equal(null);
    expect((await s.call('GET', `/api/event-job/files/jobs/${expiredJob}/out/result.md`)).status).to.equal(404);
    // The same document again: a miss (its cache entry went by age), the same answer.
    const again = await rawPdfCall(s, pdf);
    expect(again.headers.get('x-cache')).to.equal('miss');
    // Half a day on, nothing of the fresh jobs is expired.
    const sweeper = createRetentionSweeper({
      store,
      retentionDays: 1,
      client: s.api.temporal.client,
      logger: createLogger('test', 'silent'),
    });
    expect(await sweeper.sweep(Date.now() + DAY_MS / 2)).to.deep.equal({ jobs: 0, batches: 0, blobs: 0 });
  });
});
