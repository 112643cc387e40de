import { expect } from 'chai';
import '../support/servers/stack';
import { llmEnv, LLM_KEY } from '../support/servers/llm-env';
import { startLlmServer, type LlmRequest, type LlmServer } from '../support/servers/llm-server';
import { useStack, type Stack } from '../support/servers/stack';

// A model slower than the client's timeout (LLM_TIMEOUT_MS) used to be paid again at every timeout: the provider
// re-sent the request at once (LLM_MAX_RETRIES), Temporal re-ran the step, and each request was computed (and
// charged) by the endpoint, none ever answered in time, until the outage window failed the job. Now every request of
// a call carries the call's Idempotency-Key (recorded in the job's journal before it is sent): an endpoint that
// honours keys (as the local model server does) answers every repeat from its first computation, and against one
// that does not, a timed-out request is not re-sent at once and each re-send waits twice as long. The real API and
// worker, the shared Temporal dev server, the OpenAI-compatible test server on loopback counting what it computed.

const header = (r: LlmRequest) => String(r.headers['idempotency-key'] ?? '');

async function runJob(s: Stack, parameters: Record<string, unknown>): Promise<any> {
  const r = await s.call('POST', '/api/jobs/', {
    job_type: 'transformer',
    parameters: { use_cache: false, ...parameters },
  });
  expect(r.status, JSON.stringify(r.body)).to.be.oneOf([200, 201, 202]);
  return s.waitJob(r.body.data.job_id, 90_000);
}

describe('model calls are paid once', function () {
  this.timeout(150_000);

  describe('an endpoint that honours idempotency keys, slower than the timeout', () => {
    let s: Stack;
    let llm: LlmServer;
    before(async () => {
      llm = await startLlmServer({ apiKey: LLM_KEY, idempotencyKeys: true });
    });
    // 1.5 s per request, one retry in the provider; an outage window that ends a job that is never answered.
    useStack(
      (stack) => (s = stack),
      () =>
        llmEnv(llm, {
          LLM_TIMEOUT_MS: '1500',
          LLM_MAX_RETRIES: '1',
          LLM_IDEMPOTENCY_KEYS: 'true',
          PROVIDER_OUTAGE_MAX_MS: '60000',
        }),
    );
    after(() => llm?.close());
    beforeEach(() => llm.reset());

    it('a template job completes with one computation for its call, across a timeout in process and a step retry', async () => {
      // The model takes 8 s: the first request times out (1.5 s), the provider's retry (3 s) too, the step fails
      // and Temporal runs it again; its request (3 s, the call was sent once before) finds the answer.
      llm.respond(() => ({ delayMs: 8000 }));
      const job = await runJob(s, {
        operation: 'template',
        text: 'Ada Lovelace schreibt aus London.',
        template_content: 'Person: {{person|the person named}}\nCity: {{city|the city}}',
      });
      expect(job.status, JSON.stringify(job.error)).to.equal('completed');
      expect(job.results.template_fields).to.deep.equal({ person: 'person value', city: 'city value' });
      const sent = llm.chatRequests();
      expect(sent.length, 'requests sent: the timeouts happened').to.be.at.least(3);
      expect(new Set(sent.map(header)).size, 'one key for the call').to.equal(1);
      expect(header(sent[0])).to.match(/^docproc-[0-9a-f]{40}$/);
      expect(llm.paidRequests(), 'computed (paid) once').to.have.length(1);
    });

    it('a translation in three pieces is paid once per piece', async () => {
      llm.respond(() => ({ delayMs: 4000 }));
      const piece = (n: number) => `Teil ${n}. ${'Der Rat hat lange über den Haushalt beraten. '.repeat(230)}`;
      const job = await runJob(s, {
        operation: 'text',
        text: [1, 2, 3].map(piece).join('\n\n'),
        source_language: 'de',
        target_language: 'en',
      });
      expect(job.status, JSON.stringify(job.error)).to.equal('completed');
      const sent = llm.chatRequests();
      const keys = new Set(sent.map(header));
      expect(keys.size, 'three calls').to.equal(3);
      expect(sent.length, 'timeouts happened').to.be.greaterThan(3);
      expect(llm.paidRequests().length / keys.size, 'paid per answer').to.equal(1);
    });
  });

  describe('an endpoint that ignores idempotency keys, slower than the timeout', () => {
    let s: Stack;
    let llm: LlmServer;
    before(async () => {
      llm = await startLlmServer({ apiKey: LLM_KEY });
    });
    useStack(
      (stack) => (s = stack),
      () => llmEnv(llm, { LLM_TIMEOUT_MS: '2000', LLM_MAX_RETRIES: '1', PROVIDER_OUTAGE_MAX_MS: '30000' }),
    );
    after(() => llm?.close());
    beforeEach(() => llm.reset());

    it('a timed-out request is not re-sent at once, and its re-send waits twice as long: paid twice, not until the window', async () => {
      // The model takes 3 s: the first request times out at 2 s and stays in doubt (no re-send in the provider);
      // the step's next attempt waits 4 s for its request, which is answered.
      llm.respond(() => ({ delayMs: 3000 }));
      const job = await runJob(s, {
        operation: 'text',
        text: 'Guten Morgen, Köln.',
        source_language: 'de',
        target_language: 'en',
      });
      expect(job.status, JSON.stringify(job.error)).to.equal('completed');
      expect(job.results.translated_text).to.equal('Echo: Guten Morgen, Köln.');
      const sent = llm.chatRequests();
      expect(sent, 'one request per step attempt, two attempts').to.have.length(2);
      expect(header(sent[0])).to.equal(header(sent[1]));
      expect(sent[1].receivedAt - sent[0].receivedAt, 'the second after the first timed out').to.be.at.least(1900);
    });
  });
});
