import { JOB_DEFAULTS } from '../../core/jobs/job-defaults';
import { expect } from 'chai';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { chunkKey } from '../../activities/audio-results';
import type { AudioPrepared, ChunkTranscript } from '../../activities/audio-types';
import { readBlobJson } from '../../core/stores/blob-store';
import { AppError } from '../../core/errors';
import { loadConfig } from '../../core/config/config';
import { createOpenAiSpeechProvider } from '../../providers/speech/openai';
import { activityHarness, failureOf, retryable } from '../support/workflows/activity-harness';
import { fakeRecording, type FakeRecording, type InMemorySpeechEngine } from '../support/workflows/in-memory-engines';

// prepareAudio and transcribeChunk in MockActivityEnvironment, with in-memory media and speech engines over a real
// local blob store: what reaches the engines (the kept plan and chunks, the result cache), which failures are final,
// heartbeats and cancellation.

type Harness = Awaited<ReturnType<typeof activityHarness>>;

const RECORDING: FakeRecording = { format: 'wav', duration: 95 };

/** Uploads a recording as the API does and runs `prepareAudio` for a job on it. */
async function prepare(
  h: Harness,
  jobId: string,
  r: FakeRecording = RECORDING,
  parameters: Record<string, unknown> = {},
  attempt = 1,
): Promise<AudioPrepared> {
  const ref = await h.store.put(`uploads/${jobId}.media`, fakeRecording(r));
  return h.run(h.activities.prepareAudio, [{ jobId, parameters: { ...RECORDED, file_key: ref.key, ...parameters } }], {
    attempt,
  });
}

/** The languages every audio job records at creation (the API applies the defaults). */
const RECORDED = { ...JOB_DEFAULTS.transcription };

const chunk = (jobId: string, p: AudioPrepared, index: number, language?: string) => ({
  jobId,
  wavKey: p.wavKey,
  wavSha256: p.wavSha256,
  index,
  start: p.chunks[index].start,
  end: p.chunks[index].end,
  language,
});

describe('activities: prepareAudio (in-memory media engine)', () => {
  let h: Harness;
  beforeEach(async () => (h = await activityHarness({ env: { AUDIO_CHUNK_SECONDS: '30', MAX_MEDIA_SECONDS: '600' } })));
  afterEach(() => h.remove());

  it('diarize with the hosted speech provider is refused at once, naming the option (422), before any engine runs', async () => {
    const hosted = await activityHarness({
      env: { SPEECH_PROVIDER: 'openai', SPEECH_BASE_URL: 'http://127.0.0.1:9/v1' },
      speech: createOpenAiSpeechProvider(
        loadConfig({ SPEECH_PROVIDER: 'openai', SPEECH_BASE_URL: 'http://127.0.0.1:9/v1' }),
      ),
    });
    try {
      const err = await failureOf(prepare(hosted, 'job-dz', RECORDING, { diarize: true }));
      expect(retryable(err)).to.equal(false);
      expect((err as ApplicationFailure).type).to.equal('UNPROCESSABLE_INPUT');
      expect((err as ApplicationFailure).message).to.include('diarize');
      expect(hosted.media.calls).to.deep.equal({ probe: 0, decodeToWav: 0, planChunks: 0, cutChunk: [] });
    } finally {
      await hosted.remove();
    }
    // The local engine takes it.
    expect((await prepare(h, 'job-dz2', RECORDING, { diarize: true })).chunks.length).to.equal(4);
  });

  it('probes, decodes and plans the recording once; a retry or restart reuses the kept plan without the engine', async () => {
    const p = await prepare(h, 'job-a1');
    expect(p.fromCache).to.equal(false);
    expect(p.duration).to.equal(95);
    expect(p.chunks).to.deep.equal([
      { start: 0, end: 30 },
      { start: 30, end: 60 },
      { start: 60, end: 90 },
      { start: 90, end: 95 },
    ]);
    expect(await h.store.stat(p.wavKey)).to.include({ sha256: p.wavSha256 });
    const calls = { probe: 1, decodeToWav: 1, planChunks: 1, cutChunk: [] };
    expect(h.media.calls).to.deep.equal(calls);
    const again = await prepare(h, 'job-a1', RECORDING, {}, 2);
    expect(again).to.deep.equal(p);
    expect(h.media.calls).to.deep.equal(calls);
  });

  it('a recording in the result cache (a finished job on the same file) answers without the engines', async () => {
    const p = await prepare(h, 'job-a2');
    for (let i = 0; i < p.chunks.length; i++) await h.run(h.activities.transcribeChunk, [chunk('job-a2', p, i)]);
    await h.run(h.activities.finishAudio, [
      {
        jobId: 'job-a2',
        parameters: RECORDED,
        chunks: p.chunks,
        duration: p.duration,
        fromCache: false,
        cacheKey: p.cacheKey,
      },
    ]);
    const speech = h.speech as InMemorySpeechEngine;
    expect(speech.transcribed).to.have.length(4);
    const hit = await prepare(h, 'job-a3');
    expect(hit).to.include({ fromCache: true, duration: 95, cacheKey: p.cacheKey });
    expect(h.media.calls.probe).to.equal(1);
    expect(h.media.calls.decodeToWav).to.equal(1);
    // use_cache false: the engines run again for this job.
    const fresh = await prepare(h, 'job-a4', RECORDING, { use_cache: false });
    expect(fresh.fromCache).to.equal(false);
    expect(h.media.calls.decodeToWav).to.equal(2);
  });

  for (const [what, r, code] of [
    ['a format outside the list', { format: 'tty', duration: 5 }, 'INVALID_FORMAT'],
    ['a file without sound', { format: 'wav', duration: 5, audio: false }, 'INVALID_FORMAT'],
    ['a recording longer than MAX_MEDIA_SECONDS', { format: 'wav', duration: 601 }, 'UNPROCESSABLE_INPUT'],
    ['a stream that decodes to nothing', { format: 'wav', duration: 5, silent: true }, 'UNPROCESSABLE_INPUT'],
  ] as const) {
    it(`${what} fails non-retryable with ${code}`, async () => {
      const f = await failureOf(prepare(h, 'job-a5', r));
      expect(f).to.be.instanceOf(ApplicationFailure);
      expect([(f as ApplicationFailure).type, retryable(f)]).to.deep.equal([code, false]);
    });
  }

  it('a crash of the decoder stays retryable and keeps no plan: the next attempt decodes again', async () => {
    h.media.decodeMisbehaves = 'crash';
    const f = await failureOf(prepare(h, 'job-a6'));
    expect(retryable(f)).to.equal(true);
    expect(String(f)).to.match(/SIGSEGV/);
    h.media.decodeMisbehaves = undefined;
    const p = await prepare(h, 'job-a6', RECORDING, {}, 2);
    expect(p.chunks).to.have.length(4);
    expect(h.media.calls.decodeToWav).to.equal(2);
  });

  it('heartbeats while a long decode runs', async () => {
    h.media.decodeDelayMs = 1300;
    const ref = await h.store.put('uploads/long.media', fakeRecording(RECORDING));
    const { run, beats } = h.environment();
    await run(h.activities.prepareAudio, { jobId: 'job-a7', parameters: { ...RECORDED, file_key: ref.key } });
    expect(beats.length).to.be.at.least(1);
  });

  it('a cancel reaches the decoder through the signal, ends the attempt as cancelled and keeps no plan', async () => {
    h.media.decodeMisbehaves = 'hang';
    const ref = await h.store.put('uploads/hang.media', fakeRecording(RECORDING));
    const { env, run } = h.environment();
    const running = run(h.activities.prepareAudio, { jobId: 'job-a8', parameters: { ...RECORDED, file_key: ref.key } });
    while (h.media.calls.decodeToWav === 0) await new Promise((r) => setTimeout(r, 5));
    env.cancel();
    expect(await failureOf(running)).to.be.instanceOf(CancelledFailure);
    expect(h.media.signals.at(-1)?.aborted).to.equal(true);
    h.media.decodeMisbehaves = undefined;
    await prepare(h, 'job-a8', RECORDING, {}, 2);
    expect(h.media.calls.decodeToWav).to.equal(2);
  });
});

describe('activities: transcribeChunk (in-memory media and speech engines)', () => {
  let h: Harness;
  let speech: InMemorySpeechEngine;
  let p: AudioPrepared;
  beforeEach(async () => {
    h = await activityHarness({ env: { AUDIO_CHUNK_SECONDS: '30' } });
    speech = h.speech as InMemorySpeechEngine;
    p = await prepare(h, 'job-t');
  });
  afterEach(() => h.remove());

  it('cuts the chunk from the prepared WAV, transcribes it and keeps it; a retry or restart reuses it without the engines', async () => {
    expect(await h.run(h.activities.transcribeChunk, [chunk('job-t', p, 1, 'de')])).to.deep.equal({ reused: false });
    expect(h.media.calls.cutChunk).to.deep.equal([[30, 60]]);
    expect(speech.transcribed).to.deep.equal([30]);
    const kept = await readBlobJson<ChunkTranscript>(h.store, chunkKey('job-t', 1));
    expect(kept).to.include({ index: 1, start: 30, end: 60, language: 'de', text: 'words from 30 to 60' });
    expect(kept.model).to.equal('in-memory-whisper');
    const again = await h.run(h.activities.transcribeChunk, [chunk('job-t', p, 1, 'de')], { attempt: 2 });
    expect(again).to.deep.equal({ reused: true });
    expect(h.media.calls.cutChunk).to.have.length(1);
    expect(speech.transcribed).to.deep.equal([30]);
  });

  it("'auto' lets the engine detect the language; a code is passed on", async () => {
    await h.run(h.activities.transcribeChunk, [chunk('job-t', p, 0, 'auto')]);
    await h.run(h.activities.transcribeChunk, [chunk('job-t', p, 1, 'en')]);
    expect(speech.languages).to.deep.equal([undefined, 'en']);
  });

  it('without a speech engine it fails non-retryable with PROVIDER_NOT_CONFIGURED', async () => {
    const none = await activityHarness({ speech: null });
    try {
      const q = await prepare(none, 'job-t2');
      const f = (await failureOf(
        none.run(none.activities.transcribeChunk, [chunk('job-t2', q, 0)]),
      )) as ApplicationFailure;
      expect([f.type, retryable(f)]).to.deep.equal(['PROVIDER_NOT_CONFIGURED', false]);
    } finally {
      await none.remove();
    }
  });

  it('audio the engine cannot decode fails non-retryable with its code, and nothing is kept', async () => {
    speech.misbehaves = new AppError('UNPROCESSABLE_INPUT', 'The audio cannot be decoded', { reason: 'undecodable' });
    const f = (await failureOf(h.run(h.activities.transcribeChunk, [chunk('job-t', p, 0)]))) as ApplicationFailure;
    expect([f.type, retryable(f)]).to.deep.equal(['UNPROCESSABLE_INPUT', false]);
    expect(await h.store.stat(chunkKey('job-t', 0))).to.equal(null);
  });

  it('an engine crash and a provider outage stay retryable; the next attempt transcribes the chunk', async () => {
    speech.misbehaves = 'crash';
    const crash = await failureOf(h.run(h.activities.transcribeChunk, [chunk('job-t', p, 0)]));
    expect(retryable(crash)).to.equal(true);
    speech.misbehaves = new AppError(
      'UPSTREAM_ERROR',
      'The endpoint answered 503',
      { status: 503 },
      { retryable: true },
    );
    const outage = (await failureOf(
      h.run(h.activities.transcribeChunk, [chunk('job-t', p, 0)], { attempt: 2 }),
    )) as ApplicationFailure;
    expect([outage.type, retryable(outage)]).to.deep.equal(['UPSTREAM_ERROR', true]);
    expect(await h.store.stat(chunkKey('job-t', 0))).to.equal(null);
    speech.misbehaves = undefined;
    expect(await h.run(h.activities.transcribeChunk, [chunk('job-t', p, 0)], { attempt: 3 })).to.deep.equal({
      reused: false,
    });
    expect(speech.transcribed).to.deep.equal([0]);
  });

  it('heartbeats while the engine transcribes', async () => {
    speech.delayMs = 1300;
    const { run, beats } = h.environment();
    await run(h.activities.transcribeChunk, chunk('job-t', p, 2));
    expect(beats.length).to.be.at.least(1);
  });

  it('a cancel reaches the engine through the signal, ends the attempt as cancelled and keeps no transcript', async () => {
    speech.misbehaves = 'hang';
    const { env, run } = h.environment();
    const running = run(h.activities.transcribeChunk, chunk('job-t', p, 3));
    while (speech.signals.length === 0) await new Promise((r) => setTimeout(r, 5));
    env.cancel();
    expect(await failureOf(running)).to.be.instanceOf(CancelledFailure);
    expect(speech.signals[0].aborted).to.equal(true);
    expect(await h.store.stat(chunkKey('job-t', 3))).to.equal(null);
  });
});
