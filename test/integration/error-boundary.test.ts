// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import '../support/servers/stack';
import path from 'node:path';
import { rm } from 'node:fs/promises';
import { expect } from 'chai';
import pino from 'pino';
import { ApplicationFailure } from '@temporalio/common';
import type { Info } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { errorBoundary, UNEXPECTED_ATTEMPTS } from '../../activities/error-boundary';
import { loadConfig } from '../../core/config/config';
import { AppError } from '../../core/errors';
import { taskQueues } from '../../core/jobs/ids';
import { createLlmProvider, UpstreamError } from '../../providers/llm';
import { PdfError } from '../../domain/pdf/errors';
import { LocalBlobStore } from '../../providers/storage';
import { createEngines } from '../../worker/engines';
import { LLM_KEY, llmEnv } from '../support/servers/llm-env';
import { startLlmServer, type LlmServer } from '../support/servers/llm-server';
import { tempDir } from '../support/servers/engines';

// The activity error boundary (one interceptor on every worker) in MockActivityEnvironment: client-facing errors
// become failures with their contract code, permanent ones non-retryable; a provider outage (a retryable AppError)
// is retried after the provider's Retry-After within PROVIDER_OUTAGE_MAX_MS, then given up; anything unexpected stays
// retryable, up to a handful of attempts where the step's policy has no attempt limit.

const WINDOW = 900_000;
/** The retry policy of the `modelCall` preset, as the worker hands it to the activity (no attempt limit). */
const OUTAGE_POLICY = { initialInterval: 1000, backoffCoefficient: 2, maximumInterval: 120_000 };

async function failureOf(
  fn: () => Promise<unknown>,
  info: Partial<Info> = {},
  outageMaxMs = WINDOW,
): Promise<ApplicationFailure | Error> {
  const now = Date.now();
  const base: Partial<Info> = {
    scheduledTimestampMs: now,
    currentAttemptScheduledTimestampMs: now,
    retryPolicy: OUTAGE_POLICY,
  };
  // A logger that keeps the expected failures out of the test output.
  const env = new MockActivityEnvironment(
    { ...base, ...info },
    {
      interceptors: [errorBoundary({ outageMaxMs })],
      logger: new DefaultLogger('ERROR', () => undefined),
    },
  );
  try {
    await env.run(fn);
  } catch (e) {
    return e as Error;
  }
  throw new Error('the activity did not fail');
}

const outage = (retryAfterMs?: number) =>
  new UpstreamError(
    'The LLM endpoint failed after 5 attempts (last: HTTP 503)',
    {
      provider: 'llm',
      attempts: 5,
      status: 503,
      ...(retryAfterMs !== undefined ? { retry_after_ms: retryAfterMs } : {}),
    },
    true,
  );

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
    expect(a.details?.[0]).to.not.have.property('outage');
  });

  it('a provider outage within the window is retried after the Retry-After the provider gave', async () => {
    const f = (await failureOf(async () => Promise.reject(outage(7000)))) as ApplicationFailure;
    expect([f.type, f.nonRetryable]).to.deep.equal(['UPSTREAM_ERROR', false]);
    expect(f.nextRetryDelay).to.equal(7000);
    expect(f.details?.[0]).to.deep.include({ status: 503, retry_after_ms: 7000 });
  });

  it("without a Retry-After, an outage waits the retry policy's exponential backoff for the attempt", async () => {
    const third = (await failureOf(async () => Promise.reject(outage()), { attempt: 3 })) as ApplicationFailure;
    expect([third.nonRetryable, third.nextRetryDelay]).to.deep.equal([false, 4000]);
    const late = (await failureOf(async () => Promise.reject(outage(500)), { attempt: 9 })) as ApplicationFailure;
    expect(late.nextRetryDelay, 'capped at the maximum interval, and above the short Retry-After').to.equal(120_000);
  });

  it('an outage past the window fails non-retryable with UPSTREAM_ERROR, saying it was given up after the window', async () => {
    const first = Date.now() - WINDOW - 1000;
    const f = (await failureOf(async () => Promise.reject(outage(1000)), {
      attempt: 12,
      scheduledTimestampMs: first,
    })) as ApplicationFailure;
    expect([f.type, f.nonRetryable]).to.deep.equal(['UPSTREAM_ERROR', true]);
    expect(f.message).to.match(
      /HTTP 503\); given up after waiting out the provider outage for 90\d\.\d s \(12 attempts of the step/,
    );
    const d = f.details?.[0] as Record<string, any>;
    expect(d).to.deep.include({ provider: 'llm', status: 503 });
    expect(d.outage).to.deep.include({ gave_up: 'window', window_ms: WINDOW, attempts: 12 });
    expect(d.outage.waited_ms).to.be.at.least(WINDOW + 1000);
  });

  it('an outage whose Retry-After would start the next attempt past the window is given up now', async () => {
    const f = (await failureOf(async () => Promise.reject(outage(WINDOW + 1000)))) as ApplicationFailure;
    expect([f.type, f.nonRetryable]).to.deep.equal(['UPSTREAM_ERROR', true]);
    expect((f.details?.[0] as any).outage).to.include({ gave_up: 'window', attempts: 1 });
  });

  it('with PROVIDER_OUTAGE_MAX_MS=0 an outage fails the step on its first attempt, as the provider left it', async () => {
    const f = (await failureOf(async () => Promise.reject(outage(1000)), {}, 0)) as ApplicationFailure;
    expect([f.type, f.nonRetryable]).to.deep.equal(['UPSTREAM_ERROR', true]);
    expect(f.message).to.include('not waited out (PROVIDER_OUTAGE_MAX_MS=0)');
  });

  it('on a policy with an attempt limit, an outage is given up on its last attempt', async () => {
    const policy = { ...OUTAGE_POLICY, maximumAttempts: 5 };
    const fourth = (await failureOf(async () => Promise.reject(outage()), {
      attempt: 4,
      retryPolicy: policy,
    })) as ApplicationFailure;
    expect(fourth.nonRetryable).to.equal(false);
    const fifth = (await failureOf(async () => Promise.reject(outage()), {
      attempt: 5,
      retryPolicy: policy,
    })) as ApplicationFailure;
    expect(fifth.nonRetryable).to.equal(true);
    expect((fifth.details?.[0] as any).outage).to.include({ gave_up: 'attempts', attempts: 5 });
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
    expect(await failureOf(async () => Promise.reject(boom), { attempt: 4 })).to.equal(boom);
  });

  it('on a step without an attempt limit, an unexpected error on its 5th attempt is not retried again', async () => {
    const f = (await failureOf(async () => Promise.reject(new Error('engine crashed')), {
      attempt: UNEXPECTED_ATTEMPTS,
    })) as ApplicationFailure;
    expect(f).to.be.instanceOf(ApplicationFailure);
    expect([f.type, f.nonRetryable, f.message]).to.deep.equal(['Error', true, 'engine crashed']);
    // A policy with its own limit (bookkeeping: 50 attempts) keeps it.
    const boom = new Error('blob store hiccup');
    expect(
      await failureOf(async () => Promise.reject(boom), {
        attempt: 7,
        retryPolicy: { ...OUTAGE_POLICY, maximumAttempts: 50 },
      }),
    ).to.equal(boom);
    // A policy the server did not send is left to the server.
    expect(await failureOf(async () => Promise.reject(boom), { attempt: 7, retryPolicy: undefined })).to.equal(boom);
  });

  it('a 6th attempt that starts after the outage window (its earlier attempts timed out) is refused before it runs', async () => {
    const now = Date.now();
    let ran = false;
    const work = async () => {
      ran = true;
      return 'ok';
    };
    const f = (await failureOf(work, {
      attempt: 6,
      scheduledTimestampMs: now - WINDOW - 120_000,
      currentAttemptScheduledTimestampMs: now,
    })) as ApplicationFailure;
    expect([f.type, f.nonRetryable, ran]).to.deep.equal(['INTERNAL_ERROR', true, false]);
    expect(f.message).to.match(/given up after 5 attempts/);
    // Within the window it runs (an outage's retries are scheduled within it).
    const env = new MockActivityEnvironment(
      {
        attempt: 9,
        scheduledTimestampMs: now - 60_000,
        currentAttemptScheduledTimestampMs: now,
        retryPolicy: OUTAGE_POLICY,
      },
      { interceptors: [errorBoundary({ outageMaxMs: WINDOW })] },
    );
    expect(await env.run(work)).to.equal('ok');
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
      const activities = createActivities({
        config,
        logger: pino({ level: 'silent' }),
        store,
        queues: taskQueues('eb'),
        llm: createLlmProvider(config),
        ...createEngines(config),
      });
      llm.respond(() => ({ status: 401, body: { error: { message: 'Incorrect API key' } } }));
      const f = (await failureOf(() =>
        activities.runTransformerStep({
          jobId: 'job-eb-1',
          parameters: {
            operation: 'text',
            text: 'Hallo',
            source_language: 'de',
            target_language: 'en',
            use_cache: false,
          },
        }),
      )) as ApplicationFailure;
      expect((f.details?.[0] as Record<string, unknown>).outage).to.equal(undefined);
      expect([f.type, f.nonRetryable]).to.deep.equal(['UPSTREAM_ERROR', true]);
      expect(llm.chatRequests()).to.have.length(1);
    });
  });
});
