import { expect } from 'chai';
import path from 'node:path';
import { ConfigError, isLoopbackHost, loadConfig } from '../../core/config/config';

describe('configuration', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c.PORT).to.equal(8080);
    expect(c.HOST).to.equal('127.0.0.1');
    expect(c.dataDir).to.equal(path.resolve('.data'));
    expect(c.STORAGE).to.equal('local');
    expect(c.TEMPORAL_DEV_PORT).to.equal(7233);
    expect(c.TEMPORAL_UI_PORT).to.equal(8233);
    expect(c.MAX_UPLOAD_MB).to.equal(500);
    expect(c.ALLOW_LOCALHOST_NO_AUTH).to.equal(false);
    expect(c.loopbackOnly).to.equal(true);
    expect(c.temporalAddress).to.equal('127.0.0.1:7233');
  });

  it('uses TEMPORAL_ADDRESS when set, else the dev server port', () => {
    expect(loadConfig({ TEMPORAL_DEV_PORT: '7999' }).temporalAddress).to.equal('127.0.0.1:7999');
    expect(loadConfig({ TEMPORAL_ADDRESS: 'temporal:7233' }).temporalAddress).to.equal('temporal:7233');
  });

  it('parses booleans strictly and names the variable, never its value, on error', () => {
    expect(loadConfig({ ALLOW_LOCALHOST_NO_AUTH: 'true' }).ALLOW_LOCALHOST_NO_AUTH).to.equal(true);
    expect(loadConfig({ ALLOW_LOCALHOST_NO_AUTH: '0' }).ALLOW_LOCALHOST_NO_AUTH).to.equal(false);
    expect(() => loadConfig({ ALLOW_LOCALHOST_NO_AUTH: 'sometimes' })).to.throw(ConfigError, /ALLOW_LOCALHOST_NO_AUTH/);
    try {
      loadConfig({ PORT: 'secret-looking-value' });
      expect.fail('should throw');
    } catch (e) {
      expect((e as Error).message)
        .to.include('PORT')
        .and.not.include('secret-looking-value');
    }
  });

  it('rejects out-of-range integers', () => {
    expect(() => loadConfig({ PORT: '70000' })).to.throw(ConfigError, /PORT/);
    expect(() => loadConfig({ MAX_UPLOAD_MB: '0' })).to.throw(ConfigError, /MAX_UPLOAD_MB/);
  });

  it('waits out provider outages for 15 minutes by default, not at all with 0, and refuses a negative window', () => {
    expect(loadConfig({}).PROVIDER_OUTAGE_MAX_MS).to.equal(900_000);
    expect(loadConfig({ PROVIDER_OUTAGE_MAX_MS: '0' }).PROVIDER_OUTAGE_MAX_MS).to.equal(0);
    expect(loadConfig({ PROVIDER_OUTAGE_MAX_MS: '3000' }).PROVIDER_OUTAGE_MAX_MS).to.equal(3000);
    expect(() => loadConfig({ PROVIDER_OUTAGE_MAX_MS: '-1' })).to.throw(ConfigError, /PROVIDER_OUTAGE_MAX_MS/);
    expect(() => loadConfig({ PROVIDER_OUTAGE_MAX_MS: '15m' })).to.throw(ConfigError, /PROVIDER_OUTAGE_MAX_MS/);
  });

  it("refuses a BATCH_WINDOW past Temporal's 2,000 pending children per run, naming the variable", () => {
    expect(loadConfig({ BATCH_WINDOW: '2000' }).BATCH_WINDOW).to.equal(2000);
    expect(() => loadConfig({ BATCH_WINDOW: '2001' })).to.throw(
      ConfigError,
      /^BATCH_WINDOW: at most 2000 .*pending child workflows/,
    );
  });

  it("refuses a MAX_PDF_PAGES whose 2-page groups would reach Temporal's 2,000 pending activities per run, naming the variable", () => {
    expect(loadConfig({}).MAX_PDF_PAGES).to.equal(2000);
    expect(loadConfig({ MAX_PDF_PAGES: '3998' }).MAX_PDF_PAGES).to.equal(3998);
    expect(() => loadConfig({ MAX_PDF_PAGES: '3999' })).to.throw(
      ConfigError,
      /^MAX_PDF_PAGES: at most 3998: .*2000 page groups of 2.*2000 pending activities/,
    );
    expect(() => loadConfig({ MAX_PDF_PAGES: '5000' })).to.throw(ConfigError, /MAX_PDF_PAGES/);
  });

  it('watches engines for 10 minutes without progress by default; ENGINE_STALL_TIMEOUT_MS is a whole number of ms, at least 100', () => {
    expect(loadConfig({}).ENGINE_STALL_TIMEOUT_MS).to.equal(600_000);
    expect(loadConfig({ ENGINE_STALL_TIMEOUT_MS: '250' }).ENGINE_STALL_TIMEOUT_MS).to.equal(250);
    for (const bad of ['0', '99', '-5', '1.5', 'ten minutes', '86400001']) {
      expect(() => loadConfig({ ENGINE_STALL_TIMEOUT_MS: bad }), bad).to.throw(ConfigError, /ENGINE_STALL_TIMEOUT_MS/);
    }
  });

  it('requires the S3 settings when STORAGE=s3', () => {
    expect(() => loadConfig({ STORAGE: 's3' })).to.throw(ConfigError, /S3_ENDPOINT, S3_ACCESS_KEY, S3_SECRET_KEY/);
    const c = loadConfig({
      STORAGE: 's3',
      S3_ENDPOINT: 'http://127.0.0.1:9000',
      S3_ACCESS_KEY: 'a',
      S3_SECRET_KEY: 'b',
    });
    expect(c.S3_BUCKET).to.equal('docproc');
  });

  it('parses the docs whitelist as a list', () => {
    expect(loadConfig({ ALLOW_DOC_WHITELIST: ' 10.0.0.0/8, ::1 ,' }).docWhitelist).to.deep.equal(['10.0.0.0/8', '::1']);
  });

  it('knows loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'])
      expect(isLoopbackHost(h), h).to.equal(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', 'example.org']) expect(isLoopbackHost(h), h).to.equal(false);
    expect(loadConfig({ HOST: '0.0.0.0' }).loopbackOnly).to.equal(false);
  });
});

describe('configuration of the LLM endpoint', () => {
  it('has the local model by default, with the documented timeout and retry defaults', () => {
    const c = loadConfig({});
    expect(c.llmProvider).to.equal('local');
    expect(c.llm?.provider).to.equal('local');
    expect(c.LLM_TIMEOUT_MS).to.equal(120_000);
    expect(c.LLM_MAX_RETRIES).to.equal(4);
    expect(c.LLM_PRICES).to.deep.equal({});
  });

  it('names LLM_PRICES, never its value, when it is not JSON', () => {
    try {
      loadConfig({ LLM_PRICES: '{"secret-looking-model": 0.5' });
      expect.fail('should throw');
    } catch (e) {
      expect(e).to.be.instanceOf(ConfigError);
      expect((e as Error).message)
        .to.include('LLM_PRICES')
        .and.not.include('secret-looking-model');
    }
  });
});

describe('configuration of the external OCR endpoint', () => {
  it('has no external OCR provider by default, with the documented model and timeout defaults', () => {
    const c = loadConfig({});
    expect(c.externalOcr).to.equal(null);
    expect(c.EXTERNAL_OCR_MODEL).to.equal('mistral-ocr-latest');
    expect(c.EXTERNAL_OCR_TIMEOUT_MS).to.equal(300_000);
  });

  it('is configured by EXTERNAL_OCR_URL alone, the key and model being optional', () => {
    const c = loadConfig({ EXTERNAL_OCR_URL: 'https://ocr.example.org/' });
    expect(c.externalOcr).to.deep.equal({
      url: 'https://ocr.example.org',
      apiKey: undefined,
      model: 'mistral-ocr-latest',
      timeoutMs: 300_000,
    });
  });

  it('takes the key, model and timeout from their variables', () => {
    const c = loadConfig({
      EXTERNAL_OCR_URL: 'http://127.0.0.1:9999/v1',
      EXTERNAL_OCR_API_KEY: ' key-123 ',
      EXTERNAL_OCR_MODEL: 'my-ocr',
      EXTERNAL_OCR_TIMEOUT_MS: '5000',
    });
    expect(c.externalOcr).to.deep.equal({
      url: 'http://127.0.0.1:9999/v1',
      apiKey: 'key-123',
      model: 'my-ocr',
      timeoutMs: 5000,
    });
  });

  it('stays unconfigured when only an API key is given', () => {
    expect(loadConfig({ EXTERNAL_OCR_API_KEY: 'key-123' }).externalOcr).to.equal(null);
  });

  it('rejects a non-http URL and a bad timeout, naming the variable but not the value', () => {
    try {
      loadConfig({ EXTERNAL_OCR_URL: 'ftp://secret-looking-host/' });
      expect.fail('should throw');
    } catch (e) {
      expect(e).to.be.instanceOf(ConfigError);
      expect((e as Error).message)
        .to.include('EXTERNAL_OCR_URL')
        .and.not.include('secret-looking-host');
    }
    expect(() => loadConfig({ EXTERNAL_OCR_TIMEOUT_MS: '10' })).to.throw(ConfigError, /EXTERNAL_OCR_TIMEOUT_MS/);
    expect(() => loadConfig({ EXTERNAL_OCR_TIMEOUT_MS: 'soon' })).to.throw(ConfigError, /EXTERNAL_OCR_TIMEOUT_MS/);
  });
});
