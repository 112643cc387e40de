import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { startStack, type Stack } from '../support/servers/stack';
import { LLM_KEY, llmEnv, message, useLlmStack } from '../support/servers/llm-env';
import { startLlmServer, type LlmServer } from '../support/servers/llm-server';

// The result cache of the transformer endpoints (`X-Cache`, `use_cache`) and the handling of model faults, on the
// real API and worker, the shared Temporal dev server and the OpenAI-compatible test server over loopback HTTP.

const TEMPLATE = { template_content: 'Person: {{person|the person named in the text}}\n\n{{text}}' };
let seq = 0;
/** A text no other test (or earlier run on the same data) has asked about, so the first request is a miss. */
const fresh = (what: string) => `${what} ${Date.now()}-${++seq}`;

function expectUpstream(r: { status: number; body: any }): void {
  expect(r.status, JSON.stringify(r.body)).to.equal(502);
  expect(r.body.status).to.equal('error');
  expect(r.body.error.code).to.equal('UPSTREAM_ERROR');
  expect(r.body.error.details.job_id).to.match(/^job-/);
  expect(JSON.stringify(r.body)).to.not.include(LLM_KEY);
}

describe('transformer result cache', function () {
  this.timeout(30_000);
  let s: Stack;
  let llm: LlmServer;
  const post = (path: string, body: unknown) => s.call('POST', `/api/transformer/${path}`, body);

  // Outages not waited out (PROVIDER_OUTAGE_MAX_MS=0): a failing model fails the request once the provider's own
  // retries are spent (test/integration/provider-outage.test.ts has the outage window).
  useLlmStack(
    (stack, server) => {
      s = stack;
      llm = server;
    },
    { PROVIDER_OUTAGE_MAX_MS: '0' },
  );

  it('answers a repeated request from the cache with X-Cache hit, the same data and no model call', async () => {
    const body = { text: fresh('Ada Lovelace schreibt.'), ...TEMPLATE };
    const first = await post('template', body);
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.headers.get('x-cache')).to.equal('miss');
    expect(llm.chatRequests()).to.have.length(1);
    const second = await post('template', body);
    expect(second.status).to.equal(200);
    expect(second.headers.get('x-cache')).to.equal('hit');
    expect(second.body.data).to.deep.equal(first.body.data);
    expect(llm.chatRequests()).to.have.length(1);
  });

  it('calls the model again with use_cache false and writes the fresh result, which the next default request reads', async () => {
    let n = 0;
    llm.respond(() => ({ content: `Version ${++n}` }));
    const body = { text: fresh('Guten Tag'), source_language: 'de', target_language: 'en' };
    const first = await post('text', body);
    expect([first.headers.get('x-cache'), first.body.data.translated_text]).to.deep.equal(['miss', 'Version 1']);
    const forced = await post('text', { ...body, use_cache: false });
    expect(forced.status).to.equal(200);
    expect([forced.headers.get('x-cache'), forced.body.data.translated_text]).to.deep.equal(['miss', 'Version 2']);
    expect(llm.chatRequests()).to.have.length(2);
    const after = await post('text', body);
    expect([after.headers.get('x-cache'), after.body.data.translated_text]).to.deep.equal(['hit', 'Version 2']);
    expect(llm.chatRequests()).to.have.length(2);
  });

  it('never caches an error: once the model recovers, the same request is a miss that succeeds', async () => {
    llm.respond(() => ({ status: 500, body: { error: { message: 'down for maintenance', type: 'server_error' } } }));
    const body = { text: fresh('Ein Text, der zusammengefasst wird.'), max_length: 100 };
    expectUpstream(await post('summarize', body));
    expect(llm.chatRequests()).to.have.length(2);
    llm.respond(null);
    const again = await post('summarize', body);
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    expect(again.headers.get('x-cache')).to.equal('miss');
    expect(again.body.data.summary).to.match(/^Echo: Ein Text/);
    expect((await post('summarize', body)).headers.get('x-cache')).to.equal('hit');
  });

  it('misses for another target_language and for another max_length', async () => {
    const text = fresh('Der Rhein fließt durch Köln.');
    const calls = async (path: string, body: unknown) => {
      const r = await post(path, body);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      return r.headers.get('x-cache');
    };
    expect(await calls('text', { text, source_language: 'de', target_language: 'en' })).to.equal('miss');
    expect(await calls('text', { text, source_language: 'de', target_language: 'fr' })).to.equal('miss');
    expect(message(llm.chatRequests()[1], 'system')).to.include('French (fr)');
    expect(await calls('summarize', { text, max_length: 100 })).to.equal('miss');
    expect(await calls('summarize', { text, max_length: 150 })).to.equal('miss');
    expect(llm.chatRequests()).to.have.length(4);
    expect(await calls('text', { text, source_language: 'de', target_language: 'fr' })).to.equal('hit');
    expect(await calls('summarize', { text, max_length: 100 })).to.equal('hit');
    expect(llm.chatRequests()).to.have.length(4);
  });

  it('caches the model-free HTML conversions too, and skips the cache read with use_cache false', async () => {
    const html = `<h2>${fresh('Cache')}</h2><p>x</p>`;
    const first = await post('html-to-markdown', { html });
    const second = await post('html-to-markdown', { html });
    const forced = await post('html-to-markdown', { html, use_cache: false });
    expect([first, second, forced].map((r) => r.headers.get('x-cache'))).to.deep.equal(['miss', 'hit', 'miss']);
    expect(second.body.data).to.deep.equal(first.body.data);
    expect(forced.body.data).to.deep.equal(first.body.data);
    const tables = `<table><tr><th>${fresh('k')}</th></tr><tr><td>v</td></tr></table>`;
    expect((await post('extract-tables', { html: tables })).headers.get('x-cache')).to.equal('miss');
    expect((await post('extract-tables', { html: tables })).headers.get('x-cache')).to.equal('hit');
  });
});

describe('transformer endpoints when the model fails', function () {
  this.timeout(30_000);
  let s: Stack;
  let llm: LlmServer;
  const post = (path: string, body: unknown) => s.call('POST', `/api/transformer/${path}`, body);

  before(async function () {
    this.timeout(120_000);
    llm = await startLlmServer({ apiKey: LLM_KEY });
    // Outages not waited out: a 500 or a hang on every attempt is a 502 once the provider's retries are spent.
    s = await startStack(llmEnv(llm, { LLM_TIMEOUT_MS: '500', LLM_MAX_RETRIES: '1', PROVIDER_OUTAGE_MAX_MS: '0' }));
  });
  after(async () => {
    await s?.stop();
    await llm?.close();
  });
  beforeEach(() => llm.reset());

  it('waits for Retry-After after a 429 and then answers 200', async () => {
    llm.fail429(1, 1);
    const r = await post('template', { text: fresh('Grace Hopper'), ...TEMPLATE, use_cache: false });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.data.template_fields).to.deep.equal({ person: 'person value' });
    const [a, b, ...more] = llm.chatRequests();
    expect(more).to.have.length(0);
    expect(b.receivedAt - a.receivedAt).to.be.at.least(950);
  });

  it('answers 502 UPSTREAM_ERROR with the job id and a clear, key-free message after a 500 on every attempt', async () => {
    llm.respond(() => ({
      status: 500,
      body: { error: { message: `internal failure for key ${LLM_KEY}`, type: 'server_error' } },
    }));
    const r = await post('text', { text: fresh('Hallo'), source_language: 'de', target_language: 'en' });
    expectUpstream(r);
    expect(r.body.error.message).to.match(/LLM endpoint .* failed after 2 attempts \(last: HTTP 500\)/);
    expect(llm.chatRequests()).to.have.length(2);
    const job = await s.call('GET', `/api/jobs/${r.body.error.details.job_id}`);
    expect(job.body.data.status).to.equal('failed');
    expect(JSON.stringify(job.body)).to.not.include(LLM_KEY);
  });

  it('answers 502 when the model never answers a template with a JSON object, after the corrective requests', async () => {
    llm.respond(() => ({ content: 'Sure! The person is Grace Hopper.' }));
    const r = await post('template', { text: fresh('Grace Hopper'), ...TEMPLATE });
    expectUpstream(r);
    expect(r.body.error.message).to.match(/did not answer with a JSON object/);
    const reqs = llm.chatRequests();
    expect(reqs).to.have.length(3);
    expect(reqs[2].json.messages.at(-1).content).to.match(/not valid JSON/);
  });

  it('answers 502 within a bounded time when the model hangs past LLM_TIMEOUT_MS, without sending it again', async () => {
    llm.respond(() => ({ hang: true }));
    const t0 = Date.now();
    const r = await post('summarize', { text: fresh('Ein hängender Text.') });
    const took = Date.now() - t0;
    expectUpstream(r);
    expect(r.body.error.message).to.match(/timeout/);
    expect(took).to.be.within(450, 8000);
    // The request timed out in flight: the endpoint (no idempotency keys) may still be computing it, so it is not
    // sent again in the provider (docs/model-calls.md).
    expect(llm.chatRequests()).to.have.length(1);
  });
});
