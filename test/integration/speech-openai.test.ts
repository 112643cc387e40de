import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../core/config/config';
import type { RetryWait } from '../../providers/llm/retry';
import { UpstreamError } from '../../providers/llm/retry';
import {
  createOpenAiSpeechProvider,
  fromVerboseJson,
  isoLanguage,
  type OpenAiSpeechOptions,
} from '../../providers/speech/openai';
import type { SpeechProvider } from '../../domain/engines/speech';
import { speechError, startSpeechServer, type SpeechServer } from '../support/servers/speech-server';
import { ffmpeg } from '../support/media/media-factory';

const KEY = 'sk-speech-0123456789-very-secret';

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  return expect.fail('expected a rejection');
}

/** The call's rejection, checked to be a speech `UpstreamError` (502) that does not hold the key anywhere. */
async function failure(p: Promise<unknown>): Promise<UpstreamError> {
  const err = (await rejection(p)) as UpstreamError;
  expect(err).to.be.instanceOf(UpstreamError);
  expect([err.status, err.code, err.details.provider]).to.deep.equal([502, 'UPSTREAM_ERROR', 'speech']);
  expect(`${err.message} ${JSON.stringify(err.details)} ${err.stack}`).to.not.include(KEY);
  return err;
}

describe('speech: OpenAI-compatible /audio/transcriptions against a test server', function () {
  this.timeout(30_000);
  let server: SpeechServer;
  let dir: string;
  let wav: string;
  const waits: RetryWait[] = [];

  const provider = (env: Record<string, string> = {}, opts: OpenAiSpeechOptions = {}): SpeechProvider => {
    const config = loadConfig({
      SPEECH_PROVIDER: 'openai',
      SPEECH_BASE_URL: server.url,
      SPEECH_API_KEY: KEY,
      SPEECH_MODEL: 'whisper-large-v3',
      SPEECH_TIMEOUT_MS: '5000',
      ...env,
    });
    return createOpenAiSpeechProvider(config, {
      maxRetries: 2,
      backoff: { baseMs: 20 },
      onRetry: (w) => waits.push(w),
      ...opts,
    })!;
  };

  before(async () => {
    server = await startSpeechServer({ apiKey: KEY, detectedLanguage: 'French', segmentSeconds: 2 });
    dir = await mkdtemp(path.join(os.tmpdir(), 'speech-openai-'));
    wav = path.join(dir, 'chunk-0001.wav');
    await ffmpeg(
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:sample_rate=16000:duration=5',
      '-ac',
      '1',
      '-fflags',
      '+bitexact',
      wav,
    );
  });
  beforeEach(() => {
    server.reset();
    waits.length = 0;
  });
  after(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('posts the WAV as multipart asking for verbose_json with segment timestamps, and maps the answer', async () => {
    const t = await provider().transcribe(wav, { language: 'de' });
    const [req] = server.requests;
    expect(req.path).to.equal('/v1/audio/transcriptions');
    expect(req.headers.authorization).to.equal(`Bearer ${KEY}`);
    expect(req.headers['content-type']).to.match(/^multipart\/form-data; boundary=/);
    expect(req.fields).to.deep.include({
      model: ['whisper-large-v3'],
      response_format: ['verbose_json'],
      'timestamp_granularities[]': ['segment'],
      language: ['de'],
    });
    const bytes = await readFile(wav);
    expect(req.file).to.deep.equal({
      name: 'chunk-0001.wav',
      type: 'audio/wav',
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
    // The server answered `german`, 5 s cut into 2 s segments.
    expect(t.language).to.equal('de');
    expect(t.duration).to.equal(5);
    expect(t.segments).to.deep.equal([
      { start: 0, end: 2, text: 'Segment 1 of chunk-0001.wav.' },
      { start: 2, end: 4, text: 'Segment 2 of chunk-0001.wav.' },
      { start: 4, end: 5, text: 'Segment 3 of chunk-0001.wav.' },
    ]);
    expect(t.text).to.equal(t.segments.map((s) => s.text).join(' '));
    expect(t.model).to.equal('whisper-large-v3');
    expect(t.durationMs).to.be.a('number').and.at.least(0);
  });

  it('asks for word timings and sends the prompt when given, and puts OpenAI’s top-level words into their segments', async () => {
    const t = await provider().transcribe(wav, { language: 'de', words: true, prompt: 'Kowalczyk' });
    const [req] = server.requests;
    expect(req.fields).to.deep.include({ 'timestamp_granularities[]': ['segment', 'word'], prompt: ['Kowalczyk'] });
    expect(t.segments).to.have.length(3);
    for (const seg of t.segments) {
      expect(seg.words!.map((w) => w.word).join(' ')).to.equal(seg.text);
      for (const w of seg.words!) {
        expect(w.start).to.be.at.least(seg.start);
        expect(w.end).to.be.at.most(seg.end + 1e-9);
        expect(w.probability).to.equal(null);
      }
    }
  });

  it('sends no language when none (or auto) is given, and maps the detected language name to its code', async () => {
    const p = provider();
    expect(p.describe()).to.deep.equal({ provider: 'openai', model: 'whisper-large-v3' });
    const detected = await p.transcribe(wav);
    const auto = await p.transcribe(wav, { language: 'auto' });
    for (const req of server.requests) expect(req.fields).to.not.have.property('language');
    expect(detected.language).to.equal('fr');
    expect(auto.language).to.equal('fr');
  });

  it('reads language names, codes and locales, and tolerates answers without segments', () => {
    expect(['german', 'English', 'es', 'pt-BR', 'castilian', 'cantonese', 'jw'].map(isoLanguage)).to.deep.equal([
      'de',
      'en',
      'es',
      'pt',
      'es',
      'yue',
      'jv',
    ]);
    expect(isoLanguage('klingon')).to.equal(undefined);
    expect(fromVerboseJson({ text: ' Hallo. ', language: 'klingon', duration: 1.5 }, 'de')).to.deep.equal({
      language: 'de',
      duration: 1.5,
      text: 'Hallo.',
      segments: [{ start: 0, end: 1.5, text: 'Hallo.' }],
    });
  });

  it('fails at once on 401 with a non-retryable UPSTREAM_ERROR that does not hold the key', async () => {
    const err = await failure(provider({ SPEECH_API_KEY: `${KEY}-wrong` }).transcribe(wav));
    expect(err.retryable).to.equal(false);
    expect(err.details).to.include({ provider: 'speech', status: 401, attempts: 1 });
    expect(err.message).to.include('refused').and.include('Incorrect API key');
    expect(server.requests).to.have.length(1);
    expect(waits).to.have.length(0);
  });

  it('does not retry other 4xx (a file the endpoint cannot decode)', async () => {
    const bad = path.join(dir, 'not-audio.wav');
    await writeFile(bad, 'not a RIFF file');
    const err = await failure(provider().transcribe(bad));
    expect(err.message).to.include('Invalid file format');
    expect(err.retryable).to.equal(false);
    expect(err.details).to.include({ status: 400, attempts: 1 });
    expect(err.details).to.not.have.property('retry_after_ms');
  });

  it('retries a 429 after the Retry-After delay', async () => {
    server.script(speechError(429, 'Rate limit reached.', { 'Retry-After': '1' }));
    const t = await provider().transcribe(wav, { language: 'de' });
    expect(t.segments).to.have.length(3);
    const [first, second] = server.requests;
    expect(server.requests).to.have.length(2);
    expect(second.receivedAt - first.receivedAt).to.be.at.least(1000);
    expect(waits).to.deep.equal([{ attempt: 1, maxAttempts: 3, delayMs: 1000, status: 429, reason: 'HTTP 429' }]);
  });

  it('answers after two 500s, and gives a retryable UPSTREAM_ERROR with retry_after_ms when the retries run out', async () => {
    server.script(speechError(500, 'The server had an error.'), 2);
    const t = await provider().transcribe(wav);
    expect(t.language).to.equal('fr');
    expect(server.requests).to.have.length(3);
    expect(waits.map((w) => w.status)).to.deep.equal([500, 500]);

    server.reset();
    server.script(speechError(503, 'Overloaded.', { 'Retry-After': '0.05' }), 3);
    const err = await failure(provider().transcribe(wav));
    expect(err.retryable).to.equal(true);
    expect(err.details).to.include({ status: 503, attempts: 3, retry_after_ms: 50 });
    expect(err.message).to.include('failed after 3 attempts');
  });

  it('retries a request that times out and a 200 without a transcript', async () => {
    server.script({ hang: true });
    server.script({ status: 200, body: { result: 'no text here' } });
    const t = await provider({ SPEECH_TIMEOUT_MS: '2000' }).transcribe(wav);
    expect(t.segments).to.have.length(3);
    expect(waits.map((w) => w.reason)).to.deep.equal(['timeout', 'answer without a transcript']);
  });

  it('aborts a request in flight and a backoff wait through the signal', async () => {
    server.script({ hang: true });
    const inFlight = new AbortController();
    const call = provider().transcribe(wav, { signal: inFlight.signal });
    while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    inFlight.abort(new Error('cancelled by the test'));
    expect((await rejection(call)).message).to.equal('cancelled by the test');

    server.reset();
    server.script(speechError(429, 'Rate limit reached.', { 'Retry-After': '30' }));
    const waiting = new AbortController();
    const backoff = provider({}, { onRetry: () => waiting.abort(new Error('cancelled while waiting')) }).transcribe(
      wav,
      {
        signal: waiting.signal,
      },
    );
    expect((await rejection(backoff)).message).to.equal('cancelled while waiting');
    expect(server.requests).to.have.length(1);
  });

  it('needs SPEECH_BASE_URL for SPEECH_PROVIDER=openai, naming the variable and never the key', () => {
    expect(() => loadConfig({ SPEECH_PROVIDER: 'openai', SPEECH_API_KEY: KEY }))
      .to.throw(ConfigError, 'SPEECH_BASE_URL')
      .with.property('message')
      .that.does.not.include(KEY);
    const config = loadConfig({ SPEECH_PROVIDER: 'openai', SPEECH_BASE_URL: 'http://gpu:8000/v1/' });
    expect(config.speechApi).to.deep.equal({
      baseUrl: 'http://gpu:8000/v1',
      apiKey: undefined,
      model: 'whisper-1',
      timeoutMs: 300_000,
    });
    expect(loadConfig({ SPEECH_BASE_URL: 'http://gpu:8000/v1' }).speechApi).to.equal(null);
    expect(createOpenAiSpeechProvider(loadConfig({}))).to.equal(null);
  });
});
