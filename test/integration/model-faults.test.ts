import { expect } from 'chai';
import '../support/servers/stack';
import type { Stack } from '../support/servers/stack';
import { useLlmStack } from '../support/servers/llm-env';
import type { LlmServer } from '../support/servers/llm-server';
import { postPdf } from '../support/clients/pdf-http';
import { buildPdf } from '../support/documents/pdf-factory';

// Models as real ones behave: slow answers, refused keys, rate limits. Every model call of a job lives in a step
// whose options fit it (heartbeats while the model thinks), its answered calls are kept under the job, and the
// activity error boundary makes permanent errors non-retryable with their code.

const ONE_PAGE = buildPdf({ pages: [{ kind: 'lines', lines: ['Ein kurzer Bericht über das Jahr.'] }] });
const paragraph = (tag: string) => `${tag} ${'Der Rat hat lange über den Haushalt beraten. '.repeat(20)}`;
/** Three chunks of about 9,000 characters each (the chunk size is 12,000): three map calls and one reduce call. */
const THREE_CHUNKS = [0, 1, 2]
  .map((c) => Array.from({ length: 10 }, (_, i) => paragraph(`[chunk ${c} part ${i}]`)).join('\n\n'))
  .join('\n\n');

function expectError(r: { status: number; body: any }, status: number, code: string): void {
  expect(r.status, JSON.stringify(r.body).slice(0, 400)).to.equal(status);
  expect(r.body.error.code).to.equal(code);
}

describe('slow and failing language models', function () {
  this.timeout(180_000);
  let s: Stack;
  let llm: LlmServer;

  // A generous request timeout (a real model thinks for minutes); one transport retry inside the provider; outages
  // not waited out (PROVIDER_OUTAGE_MAX_MS=0: test/integration/provider-outage.test.ts waits them out), so a failing
  // model fails the step once the provider's retries are spent.
  useLlmStack(
    (stack, server) => {
      s = stack;
      llm = server;
    },
    { LLM_TIMEOUT_MS: '300000', LLM_MAX_RETRIES: '1', LLM_VISION_MODEL: 'vision-test', PROVIDER_OUTAGE_MAX_MS: '0' },
  );

  it('a model that answers after 15 s is asked exactly once and the summary completes', async () => {
    llm.latency(15_000);
    const t0 = Date.now();
    const r = await s.call('POST', '/api/transformer/summarize', {
      text: 'Ein Text, über den das Modell lange nachdenkt.',
      use_cache: false,
    });
    const wall = Date.now() - t0;
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.data.summary).to.match(/^Echo: /);
    expect(llm.chatRequests(), 'one model call').to.have.length(1);
    expect(wall).to.be.at.least(15_000);
  });

  it('a restarted summary job asks again only for the call that never answered', async () => {
    // The reduce call (the fourth) fails twice: the first attempt and the provider's one retry, so the job fails
    // with 502. Its restart reads the three chunk calls that answered from the job's journal; only the reduce
    // call is asked again.
    let n = 0;
    llm.respond(() => {
      n += 1;
      return n === 4 || n === 5
        ? { status: 500, body: { error: { message: 'overloaded' } } }
        : { content: `Kurzfassung ${n}.` };
    });
    const r = await s.call('POST', '/api/transformer/summarize', {
      text: THREE_CHUNKS,
      max_length: 500,
      use_cache: false,
    });
    expectError(r, 502, 'UPSTREAM_ERROR');
    const jobId: string = r.body.error.details.job_id;
    expect((await s.call('POST', `/api/event-job/${jobId}/restart`)).status).to.equal(200);
    const job = await s.waitJob(jobId, 60_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    const users = llm
      .chatRequests()
      .map((q) => String(q.json.messages.find((m: { role: string }) => m.role === 'user')?.content ?? ''));
    const asked = new Map<string, number>();
    for (const u of users) asked.set(u, (asked.get(u) ?? 0) + 1);
    expect(
      users,
      'three chunk calls, then the reduce call: failed twice, then answered after the restart',
    ).to.have.length(6);
    expect([...asked.values()].sort(), 'each chunk asked once, the reduce call three times').to.deep.equal([
      1, 1, 1, 3,
    ]);
    expect(users[3]).to.equal(users[5]);
  });

  it('a model that refuses the key fails a PDF template job at once with 502 UPSTREAM_ERROR after one call', async () => {
    llm.respond(() => ({ status: 401, body: { error: { message: 'Incorrect API key provided' } } }));
    const r = await postPdf(s, { template: 'PdfMetadata', useCache: 'false' }, ONE_PAGE);
    expectError(r, 502, 'UPSTREAM_ERROR');
    expect(r.body.error.details.status).to.equal(401);
    expect(llm.chatRequests(), 'a 401 is not retried').to.have.length(1);
  });

  it('a model that refuses the key fails vision_llm at once with 502 UPSTREAM_ERROR after one call', async () => {
    llm.respond(() => ({ status: 403, body: { error: { message: 'forbidden' } } }));
    const r = await postPdf(s, { extraction_method: 'vision_llm', useCache: 'false' }, ONE_PAGE);
    expectError(r, 502, 'UPSTREAM_ERROR');
    expect(llm.chatRequests(), 'a 403 is not retried').to.have.length(1);
  });

  it('a rate-limited model is asked again after the Retry-After it gave, and the job completes', async () => {
    llm.fail429(2, 1);
    const r = await s.call('POST', '/api/transformer/text', {
      text: 'Guten Tag',
      source_language: 'de',
      target_language: 'en',
      use_cache: false,
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const reqs = llm.chatRequests();
    expect(reqs).to.have.length(2);
    expect(reqs[1].receivedAt - reqs[0].receivedAt).to.be.at.least(1900);
  });

  it('a model that keeps failing answers 502 UPSTREAM_ERROR once the provider has retried, without further rounds', async () => {
    llm.respond(() => ({ status: 503, body: { error: { message: 'overloaded' } } }));
    const r = await s.call('POST', '/api/transformer/text', {
      text: 'Guten Abend',
      source_language: 'de',
      target_language: 'en',
      use_cache: false,
    });
    expectError(r, 502, 'UPSTREAM_ERROR');
    expect(llm.chatRequests(), 'the first attempt and one provider retry (LLM_MAX_RETRIES=1)').to.have.length(2);
  });
});
