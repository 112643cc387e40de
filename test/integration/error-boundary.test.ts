import path from 'node:path';
import { rm } from 'node:fs/promises';
import { expect } from 'chai';
import pino from 'pino';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { errorBoundary } from '../../activities/error-boundary';
import { loadConfig } from '../../core/config';
import { AppError } from '../../core/errors';
import { taskQueues } from '../../core/ids';
import { createLlmProvider, UpstreamError } from '../../providers/llm';
import { PdfError } from '../../providers/pdf/errors';
import { LocalBlobStore } from '../../providers/storage';
import { LLM_KEY, llmEnv } from '../support/llm-env';
import { startLlmServer, type LlmServer } from '../support/llm-server';
import { tempDir } from '../support/servers';

// The activity error boundary (one interceptor on every worker) in MockActivityEnvironment: client-facing errors
// become failures with their contract code, permanent ones non-retryable, transient ones retryable after the
// provider's Retry-After; anything unexpected stays retryable as it was.

async function failureOf(fn: () => Promise<unknown>): Promise<ApplicationFailure | Error> {
  // A logger that keeps the expected failures out of the test output.
  const env = new MockActivityEnvironment(undefined, { interceptors: [errorBoundary], logger: new DefaultLogger('ERROR', () => undefined) });
  try {
    await env.run(fn);
  } catch (e) {
    return e as Error;
  }
  throw new Error('the activity did not fail');
}

describe('the activity error boundary', function () {
  this.timeout(60_000);

  it('a model that refuses the request (401) is a non-retryable UPSTREAM_ERROR with its details', async () => {
    const f = await failureOf(async () => {
      throw new UpstreamError('refused (HTTP 401)', { provider: 'llm', attempts: 1, status: 401 }, false);
    });
    expect(f).to.be.instanceOf(ApplicationFailure);
    const a = f as ApplicationFailure;
    expect(a.type).to.equal('UPSTREAM_ERROR');
    expect(a.nonRetryable).to.equal(true);
    expect(a.details?.[0]).to.deep.include({ provider: 'llm', status: 401 });
  });

  it('a rate-limited or failing model, once the provider has retried, fails with its code and is not retried again', async () => {
    // The provider retried with backoff honouring Retry-After; its last answer is the job's (a retry by Temporal
    // would multiply the attempts and hold a synchronous caller well past the 502).
    const f = (await failureOf(async () => {
      throw new UpstreamError('rate limited after 5 attempts', { provider: 'llm', attempts: 5, status: 429 }, true);
    })) as ApplicationFailure;
    expect([f.type, f.nonRetryable]).to.deep.equal(['UPSTREAM_ERROR', true]);
    expect(f.details?.[0]).to.deep.include({ attempts: 5, status: 429 });
  });

  it('input errors keep their code and details and are not retried', async () => {
    const pdf = (await failureOf(async () => {
      throw new PdfError('INVALID_FORMAT', 'not_pdf', 'The file is not a PDF');
    })) as ApplicationFailure;
    expect([pdf.type, pdf.nonRetryable]).to.deep.equal(['INVALID_FORMAT', true]);
    expect(pdf.details?.[0]).to.deep.equal({ reason: 'not_pdf', error_type: 'not_pdf', supported_formats: ['pdf'] });
    const forbidden = (await failureOf(async () => {
      throw new AppError('FORBIDDEN', 'private address', { host: '10.0.0.1' });
    })) as ApplicationFailure;
    expect([forbidden.type, forbidden.nonRetryable]).to.deep.equal(['FORBIDDEN', true]);
  });

  it('an unexpected error passes through unchanged, so Temporal retries it', async () => {
    const boom = new Error('disk full');
    expect(await failureOf(async () => Promise.reject(boom))).to.equal(boom);
  });

  describe('on a real activity against a model server', () => {
    let llm: LlmServer;
    const dataDir = tempDir('docproc-boundary-');
    before(async () => {
      llm = await startLlmServer({ apiKey: LLM_KEY });
    });
    after(async () => {
      await llm?.close();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('a translation step whose model answers 401 fails non-retryable with UPSTREAM_ERROR after one call', async () => {
      const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...llmEnv(llm) });
      const store = await new LocalBlobStore(path.join(config.dataDir, 'blobs')).init();
      const activities = createActivities({ config, logger: pino({ level: 'silent' }), store, queues: taskQueues('eb'), llm: createLlmProvider(config) });
      llm.respond(() => ({ status: 401, body: { error: { message: 'Incorrect API key' } } }));
      const f = (await failureOf(() =>
        activities.runTransformerStep({ jobId: 'job-eb-1', parameters: { operation: 'text', text: 'Hallo', source_language: 'de', target_language: 'en', use_cache: false } }),
      )) as ApplicationFailure;
      expect([f.type, f.nonRetryable]).to.deep.equal(['UPSTREAM_ERROR', true]);
      expect(llm.chatRequests()).to.have.length(1);
    });
  });
});
