import { expect } from 'chai';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { llmEnv } from '../support/servers/llm-env';
import { startLlmServer, type LlmServer } from '../support/servers/llm-server';
import { ffmpeg } from '../support/media/media-factory';
import { buildPdf, wrapText } from '../support/documents/pdf-factory';
import { startSpeechServer, type SpeechServer } from '../support/servers/speech-server';
import { connectTracked, type TrackedConnection } from '../support/workflows/temporal-calls';
import { sharedBundle } from '../support/workflows/worker';
import { createLocalEnv, startHarness, type Harness } from '../support/workflows/workflow-env';

// A media step whose engine is a remote provider (a hosted speech endpoint, a vision model) waits out the provider's
// outage like a model call: it is scheduled without an attempt limit (the error boundary, tested on its own in
// error-boundary.test.ts, stops other failures after 5 attempts and gives up past PROVIDER_OUTAGE_MAX_MS). A local
// engine's step keeps cpuBound's 5 attempts. Read from the real runs' histories on the dev server.

const SPEECH_KEY = 'sk-speech-remote-media';

describe('retry policies of remote media steps on a local Temporal dev server', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;
  let calls: TrackedConnection;
  let h: Harness | undefined;
  let speech: SpeechServer;
  let llm: LlmServer;
  let dir: string;

  before(async function () {
    this.timeout(120_000);
    env = await createLocalEnv();
    calls = await connectTracked(env.address);
    await sharedBundle();
    speech = await startSpeechServer({ apiKey: SPEECH_KEY });
    llm = await startLlmServer();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'remote-media-'));
  });
  after(async () => {
    await speech?.close();
    await llm?.close();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
    await calls?.closeWhenIdle();
    await env?.teardown();
  });
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  const harness = (extra: Record<string, string>) =>
    startHarness(
      {
        address: env.address,
        client: new Client({ connection: calls.connection }),
        connection: calls.connection,
        nativeConnection: env.nativeConnection,
      },
      { env: extra },
    );

  /** The retry policy each scheduled activity of the job's run carried, by activity type. */
  async function maximumAttempts(jobId: string): Promise<Map<string, number>> {
    const history = await h!.client.workflow.getHandle(jobId).fetchHistory();
    const out = new Map<string, number>();
    for (const e of history.events ?? []) {
      const a = e.activityTaskScheduledEventAttributes;
      if (a) out.set(a.activityType?.name ?? '', a.retryPolicy?.maximumAttempts ?? 0);
    }
    return out;
  }

  async function completed(jobId: string): Promise<void> {
    await h!.client.workflow.getHandle(jobId).result();
  }

  it('schedules a hosted speech endpoint’s chunks without an attempt limit', async () => {
    h = await harness({ SPEECH_PROVIDER: 'openai', SPEECH_BASE_URL: speech.url, SPEECH_API_KEY: SPEECH_KEY });
    const wav = path.join(dir, 'tone.wav');
    await ffmpeg('-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=16000:duration=3', '-ac', '1', wav);
    const ref = await h.store.put('uploads/remote-tone.wav', await fs.readFile(wav), { mime: 'audio/wav' });
    const job = await h.jobs.create({
      jobType: 'audio',
      parameters: {
        file_key: ref.key,
        original_name: 'tone.wav',
        source_language: 'en',
        target_language: 'en',
        use_cache: false,
      },
    });
    await completed(job.state.job_id);
    const attempts = await maximumAttempts(job.state.job_id);
    expect(attempts.get('transcribeChunk'), 'transcribeChunk (0: no limit)').to.equal(0);
    expect(attempts.get('prepareAudio'), 'prepareAudio stays cpuBound').to.equal(5);
  });

  it('schedules vision page groups without an attempt limit and local OCR page groups with five', async () => {
    h = await harness(llmEnv(llm));
    const pdf = buildPdf({
      pages: [{ kind: 'lines' as const, size: 16, lines: wrapText('Remote media retry page.', 50) }],
    });
    const ref = await h.store.put('uploads/remote-media.pdf', pdf, { mime: 'application/pdf' });
    const vision = await h.jobs.create({
      jobType: 'pdf',
      parameters: { file_key: ref.key, extraction_method: 'vision_llm', use_cache: false },
    });
    const ocr = await h.jobs.create({
      jobType: 'pdf',
      parameters: { file_key: ref.key, extraction_method: 'local_ocr', ocr_language: 'en', use_cache: false },
    });
    await completed(vision.state.job_id);
    await completed(ocr.state.job_id);
    expect(
      (await maximumAttempts(vision.state.job_id)).get('extractPdfPages'),
      'vision page groups (0: no limit)',
    ).to.equal(0);
    expect((await maximumAttempts(ocr.state.job_id)).get('extractPdfPages'), 'local OCR page groups').to.equal(5);
  });
});
