import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { startStack, type Stack } from '../support/servers/stack';
import { jobOfUpload } from '../../core/jobs/ids';
import { LLM_KEY, llmEnv, useLlmStack } from '../support/servers/llm-env';
import { startLlmServer, type LlmServer } from '../support/servers/llm-server';
import { buildPdf } from '../support/documents/pdf-factory';
import { postPdf } from '../support/clients/pdf-http';
import { holdModel, unique } from '../support/results';
import { startDevServer, type DevServer } from '../support/servers/engines';
import { holds } from '../support/wait';

// Issue 33 item 3: a job's uploaded input lives as long as the job can be restarted. A synchronous upload job that
// failed (a model that refused its first call) is restarted and completes on the very upload it was given; a
// synchronous call answered 503 (Temporal stopped while it waited) leaves the running job its input, and the job
// completes. Real API and worker, real Temporal dev server, pdf.js, the local blob store; the model is the
// OpenAI-compatible test server. (Retention removing the input with the job: stored-results.test.ts.)

const lines = () => [unique('Der Stadtrat tagt am Montag.'), unique('Die Sitzung ist öffentlich.')];
const pdfOf = (pageLines: string[]) => buildPdf({ title: 'Eingabe', pages: [{ kind: 'lines', lines: pageLines }] });

/** Whether the job's uploaded input is in the store. */
const inputThere = async (s: Stack, key: string) => (await s.worker.store.stat(key)) !== null;

describe('a failed upload job restarted', function () {
  this.timeout(120_000);
  let s: Stack;
  let llm: LlmServer;
  // INLINE_PDF_MAX_PAGES=0: the request runs as a job (a small native PDF is otherwise answered by the API itself).
  useLlmStack(
    (stack, server) => {
      s = stack;
      llm = server;
    },
    { INLINE_PDF_MAX_PAGES: '0' },
  );

  it('completes on the same upload: its input outlived the failed run', async () => {
    const text = lines();
    // The first model call is refused for good (a 4xx other than 429: no outage to wait out): the job fails.
    llm.enqueue({ status: 400, body: { error: { message: 'refused once', type: 'invalid_request_error' } } });
    const r = await postPdf(
      s,
      { extraction_method: 'native', template: 'PdfMetadata', useCache: 'false' },
      pdfOf(text),
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(502);
    expect(r.body.error.code).to.equal('UPSTREAM_ERROR');
    const jobId: string = r.body.error.details.job_id;
    const failed = await s.waitJob(jobId);
    expect(failed.status).to.equal('failed');
    const input: string = failed.parameters.file_key;
    expect(await inputThere(s, input), 'the failed job keeps its upload').to.equal(true);

    const restarted = await s.call('POST', `/api/event-job/${jobId}/restart`);
    expect(restarted.status, JSON.stringify(restarted.body)).to.equal(200);
    const done = await s.waitJob(jobId, 60_000);
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect(done.parameters.file_key).to.equal(input);
    // The restarted run read the document again (the model saw its text) and filled the template.
    const sent = JSON.stringify(llm.chatRequests().at(-1)!.json.messages);
    for (const line of text) expect(sent).to.include(line);
    expect(done.results.structured_data.extracted_text).to.match(/^title: title value$/m);
    expect(await inputThere(s, input), 'the completed job still has its input').to.equal(true);
    expect(jobOfUpload(input), 'the upload is named after its job (retention removes it with the job)').to.equal(jobId);
  });
});

describe('a synchronous upload answered 503 while Temporal is stopped', function () {
  this.timeout(180_000);
  let server: DevServer | undefined;
  let llm: LlmServer | undefined;
  let s: Stack | undefined;
  const signal = (sig: NodeJS.Signals) => {
    const pid = (server?.child as unknown as ChildProcess | undefined)?.pid;
    if (pid) process.kill(pid, sig);
  };

  before(async function () {
    this.timeout(120_000);
    server = await startDevServer();
    llm = await startLlmServer({ apiKey: LLM_KEY });
    s = await startStack(llmEnv(llm, { INLINE_PDF_MAX_PAGES: '0' }), { temporal: server });
  });
  after(async () => {
    if (server) signal('SIGCONT');
    await s?.stop();
    await llm?.close();
    await server?.stop();
  });

  it('leaves the running job its input, and the job completes once Temporal is back', async () => {
    const stack = s!;
    const text = lines();
    const release = holdModel(llm!);
    let stopped = false;
    try {
      const answer = postPdf(stack, { extraction_method: 'native', template: 'PdfMetadata' }, pdfOf(text));
      // The job is inside its model call (held) when Temporal stops.
      while (llm!.chatRequests().length === 0) await new Promise((r) => setTimeout(r, 20));
      signal('SIGSTOP');
      stopped = true;
      const r = await answer;
      expect(r.status, JSON.stringify(r.body)).to.equal(503);
      expect(r.body.error.code).to.equal('UNAVAILABLE');
      const jobId: string = r.body.error.details.job_id;
      signal('SIGCONT');
      stopped = false;
      // The API serves again within a few of its one-second probes.
      let running = await stack.call('GET', `/api/jobs/${jobId}`);
      await holds(async () => (running = await stack.call('GET', `/api/jobs/${jobId}`)).status !== 503, 60_000, 200);
      expect(running.body.data.status).to.equal('processing');
      const input: string = running.body.data.parameters.file_key;
      expect(await inputThere(stack, input), 'the running job keeps its upload').to.equal(true);
      release();
      const done = await stack.waitJob(jobId, 120_000);
      expect(done.status, JSON.stringify(done.error)).to.equal('completed');
      expect(JSON.stringify(llm!.chatRequests()[0]!.json.messages)).to.include(text[0]);
      expect(done.results.structured_data.extracted_text).to.match(/^title: title value$/m);
      expect(await inputThere(stack, input), 'the completed job keeps its input').to.equal(true);
    } finally {
      if (stopped) signal('SIGCONT');
      release();
    }
  });
});
