import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../core/config/config';
import { AppError } from '../../core/errors';
import { createLogger } from '../../core/runtime/logger';
import { configureEngineWatchdog, engineStallTimeoutMs, EngineStallError } from '../../providers/process/run-tool';
import { EngineProcess } from '../../providers/speech/engine/process';
import { LocalSpeechProvider, SpeechEngineError, localSpeechOptions } from '../../providers/speech/local';
import type { Transcript } from '../../domain/engines/speech';
import { waitFor } from '../support/wait';
import { SENTENCES, speak } from '../support/media/speech-samples';
import { wordErrorRate } from '../support/media/wer';

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Lets the call run up to its request being written to the engine (promise continuations only, no clock). */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('local speech provider (faster-whisper, real Whisper base model)', function () {
  this.timeout(120_000);
  let dir: string;
  let speech: LocalSpeechProvider;
  const audio: Record<'de' | 'en', string> = { de: '', en: '' };
  /** A short clip for the calls that only need a working process. */
  let short = '';
  const transcribeShort = async () => {
    const t = await speech.transcribe(short, { language: 'en' });
    expect(wordErrorRate('Good morning, everyone.', t.text)).to.be.at.most(0.5);
  };

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'speech-local-'));
    audio.de = await speak(SENTENCES.de, 'de', dir, 'de');
    audio.en = await speak(SENTENCES.en, 'en', dir, 'en');
    short = await speak('Good morning, everyone.', 'en', dir, 'short');
    // One engine process, so the tests below know which process a call runs in.
    speech = new LocalSpeechProvider({ ...localSpeechOptions(loadConfig(process.env)), processes: 1 });
  });

  after(async () => {
    await speech?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const expectTranscript = (t: Transcript, lang: 'de' | 'en') => {
    const wer = wordErrorRate(SENTENCES[lang], t.text);
    expect(t.language, t.text).to.equal(lang);
    expect(wer, `WER ${(wer * 100).toFixed(0)} % for: ${t.text}`).to.be.at.most(0.3);
    expect(t.model).to.equal(speech.describe().model);
    expect(t.duration).to.be.greaterThan(3);
    expect(t.segments.length).to.be.greaterThan(0);
    for (const s of t.segments) {
      expect(s.start).to.be.at.least(0);
      expect(s.end).to.be.greaterThan(s.start);
      expect(s.end).to.be.at.most(t.duration + 0.5);
    }
    return wer;
  };

  for (const lang of ['de', 'en'] as const) {
    it(`detects ${lang === 'de' ? 'German' : 'English'} and transcribes it with WER ≤ 30 %`, async () => {
      const before = speech.pids();
      const t = await speech.transcribe(audio[lang]);
      expectTranscript(t, lang);
      if (before.length) expect(speech.pids(), 'one process, its model loaded once').to.deep.equal(before);
      expect(t.languageProbability).to.be.greaterThan(0.5);
    });
  }

  it('transcribes in a given language (no detection: no probability)', async () => {
    const t = await speech.transcribe(audio.de, { language: 'de' });
    expectTranscript(t, 'de');
    expect(t.languageProbability).to.equal(undefined);
    const auto = await speech.transcribe(audio.en, { language: 'auto' });
    expectTranscript(auto, 'en');
  });

  it('refuses undecodable audio with UNPROCESSABLE_INPUT, and the process goes on', async () => {
    const bad = path.join(dir, 'bad.wav');
    await writeFile(bad, 'RIFF this is not audio at all');
    await transcribeShort();
    const [pid] = speech.pids();
    const err = await speech.transcribe(bad).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(AppError);
    expect((err as AppError).code).to.equal('UNPROCESSABLE_INPUT');
    expect((err as AppError).details).to.deep.equal({ reason: 'undecodable_audio' });
    expect(speech.pids()).to.deep.equal([pid]);
  });

  it('speaker windows: unit 256-dim embeddings inside the speech; without the speaker model, PROVIDER_NOT_CONFIGURED and the process goes on', async () => {
    const t = await speech.transcribe(audio.en, { language: 'en', speakers: true });
    expect(t.speakerWindows!.length).to.be.at.least(3);
    for (const w of t.speakerWindows!) {
      expect(w.embedding).to.have.length(256);
      expect(Math.hypot(...w.embedding)).to.be.closeTo(1, 0.01);
      expect(w.start).to.be.at.least(0);
      expect(w.end)
        .to.be.above(w.start)
        .and.at.most(t.duration + 0.01);
    }
    // Not asked: none computed.
    expect((await speech.transcribe(audio.en, { language: 'en' })).speakerWindows).to.equal(undefined);
    const missing = new LocalSpeechProvider({
      ...localSpeechOptions(loadConfig(process.env)),
      processes: 1,
      speakerModel: path.join(dir, 'no-such-model.pt'),
    });
    try {
      const err = await missing.transcribe(audio.en, { language: 'en', speakers: true }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AppError);
      expect((err as AppError).code).to.equal('PROVIDER_NOT_CONFIGURED');
      expect((err as AppError).details).to.deep.equal({ provider: 'speech', reason: 'speaker_model_missing' });
      const [pid] = missing.pids();
      expect((await missing.transcribe(audio.en, { language: 'en' })).text).to.match(/park|children|weather/i);
      expect(missing.pids()).to.deep.equal([pid]);
    } finally {
      await missing.close();
    }
  });

  it('an abort kills the engine process; the next call starts another', async () => {
    await transcribeShort();
    const [pid] = speech.pids();
    const ctrl = new AbortController();
    const call = speech.transcribe(audio.de, { signal: ctrl.signal });
    await nextTurn();
    ctrl.abort(new Error('stop now'));
    const err = await call.catch((e: unknown) => e);
    expect((err as Error).message).to.equal('stop now');
    expect(isAlive(pid)).to.equal(false);
    expect(speech.pids()).to.deep.equal([]);
    await transcribeShort();
    expect(speech.pids()).to.have.length(1).and.not.include(pid);
  });

  it('a process killed between calls is restarted by the next call', async () => {
    await transcribeShort();
    const [pid] = speech.pids();
    process.kill(pid, 'SIGKILL');
    await waitFor(async () => (speech.pids().length === 0 ? true : undefined), 'the provider to see the process end');
    await transcribeShort();
    expect(speech.pids()).to.have.length(1).and.not.include(pid);
  });

  it('a process that dies mid-request fails that request with a retryable error; the next call works', async () => {
    await transcribeShort();
    const [pid] = speech.pids();
    const call = speech.transcribe(audio.de);
    await nextTurn();
    process.kill(pid, 'SIGKILL');
    const err = await call.catch((e: unknown) => e);
    expect(err).to.be.instanceOf(SpeechEngineError);
    expect((err as SpeechEngineError).retryable).to.equal(true);
    expect((err as Error).message).to.include('SIGKILL');
    await transcribeShort();
  });

  it('the engine reports progress lines (one per segment) before its answer, the signs of life the watchdog waits for', async () => {
    const opts = localSpeechOptions(loadConfig(process.env));
    const proc = new EngineProcess({ python: opts.python, modelDir: opts.modelDir, threads: 1 });
    const lines: string[] = [];
    proc.child.stdout.on('data', (d: Buffer) => lines.push(...d.toString('utf8').split('\n').filter(Boolean)));
    try {
      const answer = await proc.request(audio.en, 'en');
      const msgs = lines.map((l) => JSON.parse(l) as { id?: number; progress?: number; segments?: unknown[] });
      const progress = msgs.filter((m) => m.progress !== undefined);
      expect(progress.length).to.equal(answer.segments!.length).and.be.at.least(1);
      expect(progress.every((m) => m.id === answer.id)).to.equal(true);
      expect(progress.at(-1)!.progress).to.equal(answer.segments!.at(-1)!.end);
      // The answer comes last, after every progress line.
      expect(msgs.at(-1)).to.have.property('segments');
    } finally {
      await proc.kill();
    }
  });

  it('a process that stops answering mid-request (SIGSTOP) is killed by the watchdog: a retryable EngineStallError; the next call works', async () => {
    // ENGINE_STALL_TIMEOUT_MS well above the model's load (about a second here), far below the request's 2 h bound.
    const watched = new LocalSpeechProvider({
      ...localSpeechOptions(loadConfig({ ...process.env, ENGINE_STALL_TIMEOUT_MS: '8000' })),
      processes: 1,
    });
    const logged: string[] = [];
    const before = engineStallTimeoutMs();
    configureEngineWatchdog({
      stallTimeoutMs: before,
      logger: createLogger('test', 'info', { write: (l: string) => void logged.push(l) }),
    });
    try {
      await watched.transcribe(short, { language: 'en' });
      const [pid] = watched.pids();
      const call = watched.transcribe(audio.de, { language: 'de' });
      await nextTurn();
      process.kill(pid, 'SIGSTOP');
      const err = await call.catch((e: unknown) => e);
      expect(err).to.be.instanceOf(EngineStallError);
      expect((err as EngineStallError).retryable).to.equal(true);
      expect((err as Error).message).to.match(/^speech engine \(faster-whisper\) made no progress for 8000 ms/);
      expect(isAlive(pid)).to.equal(false);
      expect(logged).to.have.length(1);
      expect(JSON.parse(logged[0]!)).to.include({
        level: 'warn',
        engine: 'speech engine (faster-whisper)',
        pid,
        stallTimeoutMs: 8000,
      });
      const t = await watched.transcribe(short, { language: 'en' });
      expect(wordErrorRate('Good morning, everyone.', t.text)).to.be.at.most(0.5);
      expect(watched.pids()).to.have.length(1).and.not.include(pid);
    } finally {
      configureEngineWatchdog({ stallTimeoutMs: before, logger: createLogger('worker', 'silent') });
      await watched.close();
    }
  });

  it('close() ends the processes; a later call starts one again', async () => {
    await transcribeShort();
    const [pid] = speech.pids();
    await speech.close();
    expect(isAlive(pid)).to.equal(false);
    expect(speech.pids()).to.deep.equal([]);
    await transcribeShort();
  });
});
