import { expect } from 'chai';
import '../support/servers/stack';
import type { Stack } from '../support/servers/stack';
import { useLlmStack } from '../support/servers/llm-env';
import type { LlmReply, LlmServer } from '../support/servers/llm-server';

// A model endpoint that is out for a while (503 with Retry-After) is waited out: the provider's own retries are
// spent, the error boundary has Temporal try the step again after the Retry-After, the step's journal keeps every
// call that already answered, and the job completes once the endpoint is back. A permanent error (400, 401) fails the
// job at once; an outage longer than PROVIDER_OUTAGE_MAX_MS fails it with UPSTREAM_ERROR saying so. The real API and
// worker, the shared Temporal dev server and the OpenAI-compatible test server over loopback HTTP.

const OUT: LlmReply = {
  status: 503,
  body: { error: { message: 'The server is overloaded.', type: 'server_error' } },
  headers: { 'Retry-After': '1' },
};
const paragraph = (tag: string) => `${tag} ${'Der Rat hat lange über den Haushalt beraten. '.repeat(20)}`;
/** Three chunks of about 9,000 characters each (the chunk size is 12,000): three map calls and one reduce call. */
const THREE_CHUNKS = [0, 1, 2]
  .map((c) => Array.from({ length: 10 }, (_, i) => paragraph(`[chunk ${c} part ${i}]`)).join('\n\n'))
  .join('\n\n');
const userText = (r: { json: any }) =>
  String(r.json.messages.find((m: { role: string }) => m.role === 'user')?.content ?? '');

async function createJob(s: Stack, parameters: Record<string, unknown>): Promise<string> {
  const r = await s.call('POST', '/api/jobs/', {
    job_type: 'transformer',
    parameters: { use_cache: false, ...parameters },
  });
  expect(r.status, JSON.stringify(r.body)).to.be.oneOf([200, 201, 202]);
  return r.body.data.job_id;
}

describe('a provider outage', function () {
  this.timeout(180_000);

  describe('within the outage window', () => {
    let s: Stack;
    let llm: LlmServer;
    // One retry inside the provider (two requests per step attempt); a short synchronous wait for the 504 test.
    useLlmStack(
      (stack, server) => {
        s = stack;
        llm = server;
      },
      { LLM_MAX_RETRIES: '1', PROVIDER_OUTAGE_MAX_MS: '600000', SYNC_WAIT_MS: '2000' },
    );

    it('is waited out: the summary job completes, and no call that answered is asked again', async () => {
      // The three chunk calls answer; the reduce call meets five 503s (the provider's two requests per attempt are
      // spent twice over, so the step is retried by Temporal twice), then answers.
      let n = 0;
      llm.respond(() => {
        n += 1;
        return n >= 4 && n <= 8 ? OUT : { content: `Kurzfassung ${n}.` };
      });
      const jobId = await createJob(s, { operation: 'summarize', text: THREE_CHUNKS, max_length: 500 });
      const job = await s.waitJob(jobId, 120_000);
      expect(job.status, JSON.stringify(job.error)).to.equal('completed');
      expect(job.results.summary).to.equal('Kurzfassung 9.');
      const users = llm.chatRequests().map(userText);
      expect(users, 'three chunk calls, five refused reduce calls, one answered').to.have.length(9);
      const asked = new Map<string, number>();
      for (const u of users) asked.set(u, (asked.get(u) ?? 0) + 1);
      expect([...asked.values()].sort(), 'each chunk asked once, the reduce call six times').to.deep.equal([
        1, 1, 1, 6,
      ]);
    });

    it('holds a synchronous caller only up to its wait: 504 with the job id, and the job completes afterwards', async () => {
      llm.enqueue(OUT, OUT, OUT, OUT, OUT);
      const r = await s.call('POST', '/api/transformer/summarize', {
        text: 'Ein kurzer Text über den Haushalt.',
        use_cache: false,
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(504);
      expect(r.body.error.code).to.equal('TIMEOUT');
      const jobId: string = r.body.error.details.job_id;
      expect(jobId).to.match(/^job-/);
      const job = await s.waitJob(jobId, 120_000);
      expect(job.status, JSON.stringify(job.error)).to.equal('completed');
      expect(job.results.summary).to.match(/^Echo: /);
      expect(llm.chatRequests(), 'five refused, one answered').to.have.length(6);
    });

    it('a model that refuses the request (400) fails the job at once with UPSTREAM_ERROR after one call', async () => {
      llm.respond(() => ({
        status: 400,
        body: { error: { message: 'max_tokens is too large', type: 'invalid_request_error' } },
      }));
      const jobId = await createJob(s, {
        operation: 'text',
        text: 'Guten Morgen',
        source_language: 'de',
        target_language: 'en',
      });
      const job = await s.waitJob(jobId, 60_000);
      expect(job.status).to.equal('failed');
      expect(job.error.code).to.equal('UPSTREAM_ERROR');
      expect(job.error.details).to.include({ status: 400 });
      expect(job.error.details).to.not.have.property('outage');
      expect(llm.chatRequests(), 'a 400 is asked once: one provider attempt in one step attempt').to.have.length(1);
    });

    it('a model that refuses the key (401) fails a template job at once with UPSTREAM_ERROR after one call', async () => {
      llm.respond(() => ({
        status: 401,
        body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } },
      }));
      const jobId = await createJob(s, {
        operation: 'template',
        text: 'Ada Lovelace schreibt.',
        template_content: 'Person: {{person|the person named}}',
      });
      const job = await s.waitJob(jobId, 60_000);
      expect([job.status, job.error.code, job.error.details.status]).to.deep.equal(['failed', 'UPSTREAM_ERROR', 401]);
      expect(llm.chatRequests()).to.have.length(1);
    });
  });

  describe('longer than PROVIDER_OUTAGE_MAX_MS', () => {
    let s: Stack;
    let llm: LlmServer;
    useLlmStack(
      (stack, server) => {
        s = stack;
        llm = server;
      },
      { LLM_MAX_RETRIES: '1', PROVIDER_OUTAGE_MAX_MS: '3000' },
    );

    it('fails the job with UPSTREAM_ERROR whose details say it was given up after the outage window', async () => {
      llm.respond(() => OUT);
      const jobId = await createJob(s, { operation: 'summarize', text: 'Ein Text, den niemand zusammenfasst.' });
      const job = await s.waitJob(jobId, 60_000);
      expect(job.status).to.equal('failed');
      expect(job.error.code).to.equal('UPSTREAM_ERROR');
      expect(job.error.message).to.match(/HTTP 503.*given up after waiting out the provider outage/);
      const outage = job.error.details.outage;
      expect(outage).to.include({ gave_up: 'window', window_ms: 3000 });
      expect(job.error.details).to.include({ provider: 'llm', status: 503 });
      expect(llm.chatRequests(), 'two requests (LLM_MAX_RETRIES=1) in each step attempt').to.have.length(
        2 * outage.attempts,
      );
    });
  });
});
