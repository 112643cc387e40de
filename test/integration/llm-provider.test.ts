import { expect } from 'chai';
import { loadConfig } from '../../core/config/config';
import { AppError } from '../../core/errors';
import {
  createLlmProvider,
  imagePart,
  OpenAiLlmProvider,
  requireLlm,
  type OpenAiLlmOptions,
} from '../../providers/llm/openai.provider';
import { UpstreamError } from '../../providers/llm/retry';
import type { LlmProvider, LlmRetryInfo } from '../../domain/engines/llm';
import { UsageRecorder } from '../../providers/llm/usage';
import { freePort } from '../../scripts/services.mjs';
import { startLlmServer, type LlmServer } from '../support/servers/llm-server';

const KEY = 'sk-test-0123456789-very-secret';
/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

async function failure(p: Promise<unknown>): Promise<UpstreamError> {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(UpstreamError);
    const err = e as UpstreamError;
    expect(err.status).to.equal(502);
    expect(err.code).to.equal('UPSTREAM_ERROR');
    expect(err.details.provider).to.equal('llm');
    expect(`${err.message} ${JSON.stringify(err.details)} ${err.stack}`).to.not.include(KEY);
    return err;
  }
  return expect.fail('expected an UpstreamError');
}

describe('LLM provider against an OpenAI-compatible test server', function () {
  this.timeout(60_000);
  let server: LlmServer;
  const retries: LlmRetryInfo[] = [];

  const provider = (env: Record<string, string> = {}, opts: OpenAiLlmOptions = {}): LlmProvider => {
    const config = loadConfig({
      LLM_BASE_URL: server.url,
      LLM_API_KEY: KEY,
      LLM_MODEL: 'chat-model',
      LLM_VISION_MODEL: 'vision-model',
      LLM_MAX_RETRIES: '2',
      LLM_TIMEOUT_MS: '5000',
      LLM_PRICES: JSON.stringify({
        'chat-model': { input: 0.5, output: 1.5 },
        'vision-model': { input: 1, output: 2 },
      }),
      ...env,
    });
    return createLlmProvider(config, { backoff: { baseMs: 20 }, onRetry: (i) => retries.push(i), ...opts })!;
  };

  before(async () => {
    server = await startLlmServer({ apiKey: KEY });
  });
  beforeEach(() => {
    server.reset();
    retries.length = 0;
  });
  after(() => server.close());

  it('asks for a JSON object with the model, a system and a user message, and the key as Bearer', async () => {
    const { value, usage } = await provider().chatJson({
      purpose: 'template',
      system: 'Fill the fields.',
      user: 'Text: Ada lives in Paris.\nFields:\n- name: the person\n- city: where they live',
      schemaHint: '{"name": string, "city": string}',
      maxTokens: 200,
    });
    expect(value).to.deep.equal({ name: 'name value', city: 'city value' });
    const [req] = server.chatRequests();
    expect(req.path).to.equal('/v1/chat/completions');
    expect(req.headers.authorization).to.equal(`Bearer ${KEY}`);
    expect(req.json.model).to.equal('chat-model');
    expect(req.json.response_format).to.deep.equal({ type: 'json_object' });
    expect(req.json.max_tokens).to.equal(200);
    expect(req.json.stream ?? false).to.equal(false);
    expect(req.json.messages.map((m: { role: string }) => m.role)).to.deep.equal(['system', 'user']);
    expect(req.json.messages[0].content)
      .to.include('Fill the fields.')
      .and.include('JSON')
      .and.include('"city": string');
    expect(req.json.messages[1].content).to.include('Ada lives in Paris.');
    expect(usage.model).to.equal('chat-model');
    expect(usage.purpose).to.equal('template');
    expect(usage.tokens).to.be.greaterThan(0);
  });

  it('reports the usage fields and the cost from LLM_PRICES', async () => {
    server.enqueue({ content: '{"ok": true}', usage: { prompt_tokens: 1000, completion_tokens: 500 } });
    const { usage } = await provider().chatJson({ purpose: 'summarize', system: 's', user: 'u' });
    expect(usage).to.include({
      model: 'chat-model',
      purpose: 'summarize',
      prompt_tokens: 1000,
      completion_tokens: 500,
      tokens: 1500,
    });
    expect(usage.cost).to.equal(1.25);
    expect(usage.duration_ms).to.be.a('number').and.at.least(0);

    server.enqueue({ content: 'hi', usage: { prompt_tokens: 1000, completion_tokens: 1000 } });
    const unpriced = await provider({ LLM_PRICES: '{}' }).chatText({ purpose: 'translate', system: 's', user: 'u' });
    expect(unpriced.usage.cost).to.equal(0);
    expect(unpriced.usage.tokens).to.equal(2000);
  });

  it('sends vision messages as image_url data URLs to LLM_VISION_MODEL', async () => {
    const { text, usage } = await provider().chatText({
      purpose: 'vision_ocr',
      system: 'Transcribe the page.',
      user: [{ type: 'text', text: 'Page 1' }, imagePart(PNG)],
    });
    expect(text).to.equal('Echo: Page 1 [1 image]');
    expect(usage.model).to.equal('vision-model');
    const [req] = server.chatRequests();
    expect(req.json.model).to.equal('vision-model');
    expect(req.json.response_format).to.equal(undefined);
    const parts = req.json.messages[1].content;
    expect(parts[0]).to.deep.equal({ type: 'text', text: 'Page 1' });
    expect(parts[1].type).to.equal('image_url');
    expect(parts[1].image_url.url).to.equal(`data:image/png;base64,${PNG.toString('base64')}`);
  });

  it('uses the chat model for text, and the vision model when asked explicitly', async () => {
    await provider().chatText({ purpose: 'translate', system: 's', user: 'Hallo' });
    await provider().chatJson({ purpose: 'vision', system: 's', user: 'u', vision: true });
    expect(server.chatRequests().map((r) => r.json.model)).to.deep.equal(['chat-model', 'vision-model']);
  });

  it('waits for Retry-After after a 429, then succeeds', async () => {
    server.fail429(1);
    const t0 = Date.now();
    const { value } = await provider().chatJson({ purpose: 'p', system: 's', user: 'Fields: a' });
    const elapsed = Date.now() - t0;
    expect(value).to.deep.equal({ a: 'a value' });
    expect(server.chatRequests()).to.have.length(2);
    expect(elapsed).to.be.at.least(900);
    expect(retries).to.have.length(1);
    expect(retries[0]).to.include({ attempt: 1, maxAttempts: 3, status: 429, reason: 'HTTP 429' });
    expect(retries[0].delayMs).to.be.at.least(1000);
  });

  it('retries two 500s, then succeeds', async () => {
    server.fail500(2);
    const { text } = await provider().chatText({ purpose: 'p', system: 's', user: 'hello' });
    expect(text).to.equal('Echo: hello');
    expect(server.chatRequests()).to.have.length(3);
    expect(retries.map((r) => r.status)).to.deep.equal([500, 500]);
  });

  it('answers UPSTREAM_ERROR after maxRetries + 1 attempts when the endpoint keeps failing', async () => {
    server.respond(() => ({ status: 500, body: { error: { message: 'boom', type: 'server_error' } } }));
    const err = await failure(provider().chatJson({ purpose: 'p', system: 's', user: 'u' }));
    expect(err.details).to.include({ attempts: 3, status: 500 });
    expect(err.retryable).to.equal(true);
    expect(err.message)
      .to.match(/after 3 attempts/)
      .and.include('HTTP 500');
    expect(server.chatRequests()).to.have.length(3);
  });

  it('retries a 200 whose body is not JSON', async () => {
    server.enqueue({ status: 200, body: '{"choices": [' });
    const { text } = await provider().chatText({ purpose: 'p', system: 's', user: 'again' });
    expect(text).to.equal('Echo: again');
    expect(server.chatRequests()).to.have.length(2);
  });

  it('asks again with a correction when the answer is not JSON, and succeeds on the third', async () => {
    server.invalidJson(2);
    const { value, usage } = await provider().chatJson({ purpose: 'p', system: 's', user: 'Fields: name, city' });
    expect(value).to.deep.equal({ name: 'name value', city: 'city value' });
    const reqs = server.chatRequests();
    expect(reqs).to.have.length(3);
    const roles = reqs[2].json.messages.map((m: { role: string }) => m.role);
    expect(roles).to.deep.equal(['system', 'user', 'assistant', 'user', 'assistant', 'user']);
    expect(reqs[2].json.messages[5].content).to.include('JSON object');
    expect(reqs[2].json.response_format).to.deep.equal({ type: 'json_object' });
    expect(retries.map((r) => r.reason)).to.deep.equal([
      'invalid JSON (not valid JSON)',
      'invalid JSON (not valid JSON)',
    ]);
    const single = Math.ceil('{"name":"name value","city":"city value"}'.length / 4);
    expect(usage.completion_tokens).to.be.greaterThan(single);
  });

  it('answers UPSTREAM_ERROR when the answer is never JSON', async () => {
    server.respond(() => ({ content: 'no JSON here, sorry' }));
    const err = await failure(provider().chatJson({ purpose: 'p', system: 's', user: 'u' }));
    expect(err.details).to.include({ attempts: 3, reason: 'invalid_json' });
    expect(err.message).to.include('JSON');
    expect(server.chatRequests()).to.have.length(3);
  });

  it('does not send again a request that timed out at an endpoint that ignores idempotency keys', async () => {
    // The request went out and no answer came: the endpoint may still be computing it (and charging for it). The
    // call ends in doubt (a retryable outage) after one request; the step's next attempt decides.
    server.respond(() => ({ hang: true }));
    const t0 = Date.now();
    const err = await failure(
      provider({ LLM_TIMEOUT_MS: '500', LLM_MAX_RETRIES: '1' }).chatText({ purpose: 'p', system: 's', user: 'u' }),
    );
    const elapsed = Date.now() - t0;
    expect(err.details).to.include({ attempts: 1, reason: 'timeout', in_doubt: true });
    expect(err.retryable).to.equal(true);
    expect(server.chatRequests()).to.have.length(1);
    expect(elapsed).to.be.at.least(450).and.below(15_000);
  });

  it('sends a timed-out request again with its idempotency key, waiting twice as long, where keys are honoured', async () => {
    server.respond(() => ({ hang: true }));
    const t0 = Date.now();
    const err = await failure(
      provider({ LLM_TIMEOUT_MS: '500', LLM_MAX_RETRIES: '1', LLM_IDEMPOTENCY_KEYS: 'true' }).chatText({
        purpose: 'p',
        system: 's',
        user: 'u',
        idempotencyKey: 'docproc-k1',
      }),
    );
    const elapsed = Date.now() - t0;
    expect(err.details).to.include({ attempts: 2, reason: 'timeout', in_doubt: true });
    const reqs = server.chatRequests();
    expect(reqs.map((r) => r.headers['idempotency-key'])).to.deep.equal(['docproc-k1', 'docproc-k1']);
    // 500 ms, then 1000 ms for the second request.
    expect(elapsed).to.be.at.least(1450).and.below(15_000);
  });

  it('waits 2^resends times the timeout for a call sent before without an answer', async () => {
    server.latency(1200);
    const { text } = await provider({ LLM_TIMEOUT_MS: '500', LLM_MAX_RETRIES: '0' }).chatText({
      purpose: 'p',
      system: 's',
      user: 'u',
      idempotencyKey: 'docproc-k2',
      resends: 2,
    });
    expect(text).to.equal('Echo: u');
    expect(server.chatRequests()).to.have.length(1);
  });

  it('retries a refused connection in process: nothing reached the endpoint', async () => {
    const port = await freePort();
    const err = await failure(
      createLlmProvider(
        loadConfig({
          LLM_BASE_URL: `http://127.0.0.1:${port}/v1`,
          LLM_API_KEY: KEY,
          LLM_MODEL: 'chat-model',
          LLM_MAX_RETRIES: '2',
        }),
        { backoff: { baseMs: 20 } },
      )!.chatText({ purpose: 'p', system: 's', user: 'u' }),
    );
    expect(err.details).to.include({ attempts: 3, reason: 'connection failed (ECONNREFUSED)' });
    expect(err.details).to.not.have.property('in_doubt');
    expect(err.retryable).to.equal(true);
  });

  it('fails at once on a 401, without retrying and without the key in the error', async () => {
    const wrong = 'sk-wrong-key-0123456789';
    const err = await failure(provider({ LLM_API_KEY: wrong }).chatJson({ purpose: 'p', system: 's', user: 'u' }));
    expect(err.details).to.include({ attempts: 1, status: 401 });
    expect(err.retryable).to.equal(false);
    expect(err.message).to.include('401').and.not.include(wrong);
    expect(JSON.stringify(err.details)).to.not.include(wrong);
    expect(server.chatRequests()).to.have.length(1);
    expect(retries).to.have.length(0);
  });

  it('does not retry other 4xx answers', async () => {
    server.enqueue({ status: 400, body: { error: { message: 'bad model', type: 'invalid_request_error' } } });
    const err = await failure(provider().chatText({ purpose: 'p', system: 's', user: 'u' }));
    expect(err.details).to.include({ attempts: 1, status: 400 });
    expect(err.message).to.include('bad model');
  });

  it('stops at once when the caller aborts during a backoff wait', async () => {
    server.respond(() => ({ status: 503, headers: { 'Retry-After': '30' }, body: { error: { message: 'busy' } } }));
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('cancelled by test')), 200);
    const t0 = Date.now();
    try {
      await provider().chatText({ purpose: 'p', system: 's', user: 'u', signal: ac.signal });
      expect.fail('should abort');
    } catch (e) {
      expect((e as Error).message).to.equal('cancelled by test');
    }
    // Far below the 30 s Retry-After it would otherwise wait.
    expect(Date.now() - t0).to.be.below(15_000);
  });

  it('names the variables to set when no LLM is configured (503 PROVIDER_NOT_CONFIGURED)', () => {
    expect(createLlmProvider(loadConfig({ LLM_PROVIDER: 'none' }))).to.equal(null);
    try {
      requireLlm(createLlmProvider(loadConfig({ LLM_API_KEY: KEY })));
      expect.fail('should throw');
    } catch (e) {
      expect(e).to.be.instanceOf(AppError);
      const err = e as AppError;
      expect(err.status).to.equal(503);
      expect(err.code).to.equal('PROVIDER_NOT_CONFIGURED');
      for (const v of ['LLM_BASE_URL', 'LLM_API_KEY', 'LLM_MODEL']) expect(err.message).to.include(v);
    }
    const p = provider();
    expect(requireLlm(p)).to.equal(p);
  });

  it('asks the local model server for the JSON schema, hosted endpoints for a JSON object', async () => {
    const schema = {
      type: 'object',
      properties: { title: { type: 'string', description: 'a title' } },
      required: ['title'],
      additionalProperties: false,
    };
    // The local server takes no key: a server of that kind on the port the local provider calls.
    const open = await startLlmServer();
    try {
      const local = createLlmProvider(loadConfig({ LLM_PROVIDER: 'local', LLM_LOCAL_PORT: String(open.port) }))!;
      expect(local.describe()).to.include({
        provider: 'local',
        model: 'qwen2.5-coder-1.5b-instruct-q4_k_m',
        contextTokens: 4096,
        vision: false,
      });
      open.reply('{"title": "T"}');
      const r = await local.chatJson({ purpose: 'template', system: 's', user: 'u', schema });
      expect(r.value).to.deep.equal({ title: 'T' });
      expect(r.usage.model).to.equal('qwen2.5-coder-1.5b-instruct-q4_k_m');
      const [req] = open.chatRequests();
      expect(req.json.model).to.equal('qwen2.5-coder-1.5b-instruct-q4_k_m');
      expect(req.json.response_format).to.deep.equal({ type: 'json_schema', json_schema: { name: 'answer', schema } });
    } finally {
      await open.close();
    }
    server.reply('{"title": "H"}');
    await provider().chatJson({ purpose: 'template', system: 's', user: 'u', schema });
    expect(server.chatRequests()[0].json.response_format).to.deep.equal({ type: 'json_object' });
  });

  it('uses OPENAI_BASE_URL and OPENAI_API_KEY when the LLM_* ones are absent', async () => {
    const config = loadConfig({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: KEY, LLM_MODEL: 'fallback-model' });
    const p = createLlmProvider(config)!;
    expect(p.describe()).to.deep.equal({
      model: 'fallback-model',
      visionModel: 'fallback-model',
      baseUrl: `127.0.0.1:${server.port}`,
      provider: 'openai',
      vision: true,
    });
    await p.chatText({ purpose: 'p', system: 's', user: 'via fallback' });
    const [req] = server.chatRequests();
    expect(req.headers.authorization).to.equal(`Bearer ${KEY}`);
    expect(req.json.model).to.equal('fallback-model');
  });

  it('sends a placeholder key to endpoints that need none', async () => {
    const open = await startLlmServer();
    try {
      const p = new OpenAiLlmProvider(loadConfig({ LLM_BASE_URL: open.url, LLM_MODEL: 'm' }).llm!);
      await p.chatText({ purpose: 'p', system: 's', user: 'x' });
      expect(open.chatRequests()[0].headers.authorization).to.equal('Bearer none');
      const models = (await (await fetch(`${open.url}/models`)).json()) as { data: { id: string }[] };
      expect(models.data.map((m) => m.id)).to.include('m');
    } finally {
      await open.close();
    }
  });

  it('records usage of every call for an llm_info report', async () => {
    const recorder = new UsageRecorder();
    const p = recorder.wrap(provider());
    await p.chatJson({ purpose: 'template', system: 's', user: 'Fields: a' });
    await p.chatText({ purpose: 'vision_ocr', system: 's', user: [imagePart(PNG)] });
    const summary = recorder.summary();
    expect(summary.requests.map((r) => [r.model, r.purpose])).to.deep.equal([
      ['chat-model', 'template'],
      ['vision-model', 'vision_ocr'],
    ]);
    expect(summary.total_tokens).to.equal(recorder.usages.reduce((n, u) => n + u.tokens, 0));
    expect(summary.total_cost).to.be.greaterThan(0);
  });
});
