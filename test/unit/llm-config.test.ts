import { expect } from 'chai';
import { ConfigError, DEFAULT_LLM_BASE_URL, loadConfig } from '../../core/config/config';

describe('LLM configuration', () => {
  it('is configured by a model and a base URL, without an API key', () => {
    const c = loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:11434/v1/', LLM_MODEL: 'llama3' });
    expect(c.llm).to.deep.equal({
      provider: 'openai',
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: undefined,
      model: 'llama3',
      visionModel: 'llama3',
      vision: true,
      timeoutMs: 120_000,
      maxRetries: 4,
      idempotencyKeys: false,
      prices: {},
    });
  });

  it('is configured by a model and an API key, on the public OpenAI endpoint', () => {
    const c = loadConfig({ LLM_API_KEY: 'sk-x', LLM_MODEL: 'gpt-4o-mini' });
    expect(c.llm?.baseUrl).to.equal(DEFAULT_LLM_BASE_URL);
    expect(c.llm?.apiKey).to.equal('sk-x');
  });

  it('needs LLM_MODEL: a key or a base URL alone configures nothing', () => {
    expect(loadConfig({ LLM_API_KEY: 'sk-x' }).llm).to.equal(null);
    expect(loadConfig({ OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' }).llm).to.equal(null);
    expect(loadConfig({ LLM_PROVIDER: 'openai', LLM_MODEL: 'm' }).llm).to.equal(null);
  });

  it('uses the local model server when no endpoint or key is configured, and none with LLM_PROVIDER=none', () => {
    const local = loadConfig({ LLM_MODEL: 'ignored-for-local', LLM_LOCAL_PORT: '9123' });
    expect(local.llmProvider).to.equal('local');
    expect(local.llm).to.include({
      provider: 'local',
      baseUrl: 'http://127.0.0.1:9123/v1',
      model: 'qwen2.5-coder-1.5b-instruct-q4_k_m',
      vision: false,
      contextTokens: 4096,
      timeoutMs: 600_000,
    });
    expect(local.llm?.apiKey).to.equal(undefined);
    expect(loadConfig({ LLM_LOCAL_MODEL_PATH: '/m/other-model.Q8.gguf' }).llm?.model).to.equal('other-model.Q8');
    expect(loadConfig({ LLM_TIMEOUT_MS: '5000' }).llm?.timeoutMs).to.equal(5000);
    expect(loadConfig({ LLM_PROVIDER: 'none' }).llm).to.equal(null);
    expect(loadConfig({ LLM_PROVIDER: ' None ' }).llmProvider).to.equal('none');
    expect(() => loadConfig({ LLM_PROVIDER: 'ollama' })).to.throw(ConfigError, /LLM_PROVIDER/);
  });

  it('lets a configured endpoint win over the implied local model, and LLM_PROVIDER over both', () => {
    expect(loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:1/v1', LLM_MODEL: 'm' }).llm?.provider).to.equal('openai');
    expect(loadConfig({ OPENAI_API_KEY: 'sk-x', LLM_MODEL: 'm' }).llm?.provider).to.equal('openai');
    expect(
      loadConfig({ LLM_PROVIDER: 'local', LLM_BASE_URL: 'http://127.0.0.1:1/v1', LLM_MODEL: 'm' }).llm?.provider,
    ).to.equal('local');
    expect(loadConfig({ LLM_PROVIDER: 'none', LLM_BASE_URL: 'http://127.0.0.1:1/v1', LLM_MODEL: 'm' }).llm).to.equal(
      null,
    );
  });

  it('takes OPENAI_API_KEY and OPENAI_BASE_URL as fallbacks, LLM_* first', () => {
    const fallback = loadConfig({
      OPENAI_API_KEY: 'sk-o',
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      LLM_MODEL: 'm',
    }).llm;
    expect(fallback?.apiKey).to.equal('sk-o');
    expect(fallback?.baseUrl).to.equal('http://127.0.0.1:9/v1');
    const both = loadConfig({
      OPENAI_API_KEY: 'sk-o',
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      LLM_API_KEY: 'sk-l',
      LLM_BASE_URL: 'http://127.0.0.1:8/v1',
      LLM_MODEL: 'm',
    }).llm;
    expect(both?.apiKey).to.equal('sk-l');
    expect(both?.baseUrl).to.equal('http://127.0.0.1:8/v1');
  });

  it('uses LLM_VISION_MODEL for vision, defaulting to LLM_MODEL', () => {
    const env = { LLM_BASE_URL: 'http://127.0.0.1:1/v1', LLM_MODEL: 'chat' };
    expect(loadConfig(env).llm?.visionModel).to.equal('chat');
    expect(loadConfig({ ...env, LLM_VISION_MODEL: 'eyes' }).llm?.visionModel).to.equal('eyes');
  });

  it('reads the timeout and the retry count', () => {
    const c = loadConfig({
      LLM_BASE_URL: 'http://127.0.0.1:1/v1',
      LLM_MODEL: 'm',
      LLM_TIMEOUT_MS: '500',
      LLM_MAX_RETRIES: '0',
    });
    expect(c.llm?.timeoutMs).to.equal(500);
    expect(c.llm?.maxRetries).to.equal(0);
    expect(() => loadConfig({ LLM_TIMEOUT_MS: 'soon' })).to.throw(ConfigError, /LLM_TIMEOUT_MS/);
    expect(() => loadConfig({ LLM_MAX_RETRIES: '-1' })).to.throw(ConfigError, /LLM_MAX_RETRIES/);
  });

  it('parses LLM_PRICES as model → price per 1k input and output tokens', () => {
    const c = loadConfig({
      LLM_PRICES: '{"gpt-4o": {"input": 0.0025, "output": 0.01}, "local": {"input": 0, "output": 0}}',
    });
    expect(c.LLM_PRICES).to.deep.equal({ 'gpt-4o': { input: 0.0025, output: 0.01 }, local: { input: 0, output: 0 } });
  });

  it('rejects LLM_PRICES of the wrong shape, naming the variable only', () => {
    for (const bad of [
      '[1,2]',
      '"x"',
      '{"m": {"input": 1}}',
      '{"m": {"input": -1, "output": 1}}',
      '{"m": {"input": "1", "output": 1}}',
    ]) {
      try {
        loadConfig({ LLM_PRICES: bad });
        expect.fail(`should reject ${bad}`);
      } catch (e) {
        expect(e, bad).to.be.instanceOf(ConfigError);
        expect((e as Error).message)
          .to.include('LLM_PRICES')
          .and.not.include(bad);
      }
    }
  });

  it('rejects a base URL that is not http(s), without echoing it', () => {
    for (const [name, value] of [
      ['LLM_BASE_URL', 'ftp://user:hunter2@example.org'],
      ['OPENAI_BASE_URL', 'not a url hunter2'],
    ]) {
      try {
        loadConfig({ [name]: value });
        expect.fail('should throw');
      } catch (e) {
        expect(e).to.be.instanceOf(ConfigError);
        expect((e as Error).message)
          .to.include(name)
          .and.not.include('hunter2');
      }
    }
  });
});
