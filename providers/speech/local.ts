import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../../core/config/config';
import { AppError } from '../../core/errors';
import { localSpeechModelName } from '../../core/config/speech-model';
import { type EngineAnswer, EngineProcess, type EngineRequestOptions, SpeechEngineError } from './engine/process';
import type { SpeechProvider, Transcript, TranscribeOptions } from '../../domain/engines/speech';

export { SpeechEngineError };

/** The speaker model's folder under `<cache>/models` (scripts/engines-speech.mjs puts Resemblyzer's weights there). */
export const SPEAKER_MODEL_DIR = 'resemblyzer-0.1.4';

export interface LocalSpeechOptions {
  /** The python of the speech venv (faster-whisper installed). */
  python: string;
  /** A CTranslate2 Whisper model directory (model.bin, config.json, tokenizer.json, vocabulary.json). */
  modelDir: string;
  /** Resemblyzer's GE2E speaker encoder weights (`pretrained.pt`), for `diarize`. */
  speakerModel?: string;
  /** Reported as `Transcript.model`, e.g. `whisper-base`. */
  model: string;
  /** Engine processes, each with the model loaded once: the most transcriptions at once. */
  processes: number;
  /** CTranslate2 threads per process (at least 1). */
  threads: number;
  /**
   * A process silent this long while it loads or transcribes is killed (`ENGINE_STALL_TIMEOUT_MS`; see EngineProcess).
   */
  stallTimeoutMs?: number;
}

/**
 * The options from the configuration: the engine cache of scripts/engines.mjs unless `SPEECH_PYTHON` /
 * `SPEECH_MODEL_DIR` say otherwise, one process per media slot, and the cores shared among the processes.
 */
export function localSpeechOptions(config: Config): LocalSpeechOptions {
  const cache = path.resolve(config.DOCPROC_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'docproc'));
  const named = config.SPEECH_MODEL === 'base' || config.SPEECH_MODEL === 'small';
  const modelDir = path.resolve(
    config.SPEECH_MODEL_DIR ??
      (named ? path.join(cache, 'models', `whisper-${config.SPEECH_MODEL}`) : config.SPEECH_MODEL),
  );
  const cores = os.availableParallelism();
  const processes = config.MEDIA_CONCURRENCY || Math.max(1, cores);
  return {
    python: config.SPEECH_PYTHON ?? path.join(cache, 'speech-venv', 'bin', 'python'),
    modelDir,
    // The API names the model the same way (core/config/speech-model.ts) to find the audio cache entries.
    speakerModel: path.join(cache, 'models', SPEAKER_MODEL_DIR, 'pretrained.pt'),
    model: localSpeechModelName(config),
    processes,
    threads: config.SPEECH_THREADS || Math.max(1, Math.floor(cores / processes)),
    stallTimeoutMs: config.ENGINE_STALL_TIMEOUT_MS,
  };
}

const abortReason = (signal: AbortSignal): Error =>
  signal.reason instanceof Error ? signal.reason : new DOMException('The operation was aborted', 'AbortError');

interface Slot {
  proc: EngineProcess | null;
  busy: boolean;
}

/**
 * Speech to text with faster-whisper in long-lived Python processes (providers/speech/engine/whisper_engine.py):
 * started lazily, one per slot, each loading the model once. A call takes an idle slot (or waits for one); aborting
 * it kills that slot's process, which a later call starts again, as it does a process that died.
 */
export class LocalSpeechProvider implements SpeechProvider {
  private readonly slots: Slot[];
  private readonly waiting: { take: (slot: Slot) => void }[] = [];

  constructor(readonly options: LocalSpeechOptions) {
    this.slots = Array.from({ length: Math.max(1, options.processes) }, () => ({ proc: null, busy: false }));
  }

  describe(): { provider: 'local'; model: string } {
    return { provider: 'local', model: this.options.model };
  }

  async transcribe(audioPath: string, opts: TranscribeOptions = {}): Promise<Transcript> {
    const language = opts.language && opts.language !== 'auto' ? opts.language : null;
    const t0 = performance.now();
    const answer = await this.call(
      audioPath,
      language,
      { vad: opts.vad, prompt: opts.prompt, ...(opts.speakers ? { speakers: true } : {}) },
      opts.signal,
    );
    const raw = answer.segments ?? [];
    const segments = raw.map((s) => ({
      start: s.start,
      end: s.end,
      text: s.text.trim(),
      ...(s.words ? { words: s.words } : {}),
    }));
    return {
      language: answer.language ?? language ?? 'und',
      languageProbability: language ? undefined : answer.language_probability,
      duration: answer.duration ?? 0,
      // Whisper's segment texts carry their own leading space where the language puts one (not in Chinese).
      text: raw
        .map((s) => s.text)
        .join('')
        .trim(),
      segments,
      model: this.options.model,
      durationMs: Math.round(performance.now() - t0),
      ...(opts.speakers ? { speakerWindows: answer.speaker_windows ?? [] } : {}),
    };
  }

  async detectLanguage(
    audioPath: string,
    opts: Pick<TranscribeOptions, 'signal' | 'vad'> = {},
  ): Promise<{ language: string; probability: number | null; duration: number; model: string }> {
    const answer = await this.call(audioPath, null, { vad: opts.vad, op: 'detect_language' }, opts.signal);
    return {
      language: answer.language ?? 'und',
      probability: answer.language_probability ?? null,
      duration: answer.duration ?? 0,
      model: this.options.model,
    };
  }

  /** One request on an idle slot's process; an abort kills that process. */
  private async call(
    audioPath: string,
    language: string | null,
    request: EngineRequestOptions,
    signal?: AbortSignal,
  ): Promise<EngineAnswer> {
    signal?.throwIfAborted();
    const slot = await this.acquire(signal);
    try {
      signal?.throwIfAborted();
      const proc = this.processFor(slot);
      const onAbort = () => void proc.kill();
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        const answer = await proc.request(audioPath, language, request);
        if (answer.error) throw toError(answer.error, audioPath);
        return answer;
      } catch (err) {
        throw signal?.aborted ? abortReason(signal) : err;
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
    } finally {
      this.release(slot);
    }
  }

  /**
   * Every slot's process started, its model loaded and one short generated clip decoded, with voice detection (its
   * model loads on first use) and without (a real decode: a tone is no speech to the detector). The slots at once:
   * while the others are busy each call takes a slot of its own.
   */
  async warm(): Promise<void> {
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'speech-warm-'));
    try {
      const wav = path.join(dir, 'warm.wav');
      await fs.promises.writeFile(wav, warmClip());
      for (const vad of [false, true])
        await Promise.all(this.slots.map(() => this.transcribe(wav, { language: 'en', vad })));
    } finally {
      await fs.promises.rm(dir, { recursive: true, force: true });
    }
  }

  /** Kills every engine process; later calls start them again. */
  async close(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.proc?.kill()));
  }

  /** Process ids of the live engine processes (tests kill them). */
  pids(): number[] {
    return this.slots.flatMap((s) => (s.proc && !s.proc.dead && s.proc.child.pid ? [s.proc.child.pid] : []));
  }

  private processFor(slot: Slot): EngineProcess {
    if (slot.proc && !slot.proc.dead) return slot.proc;
    const { python, modelDir, threads, stallTimeoutMs, speakerModel } = this.options;
    if (!fs.existsSync(python) || !fs.existsSync(path.join(modelDir, 'model.bin'))) {
      throw new AppError(
        'PROVIDER_NOT_CONFIGURED',
        'The local speech engine is not provisioned (npm start or npm test set it up)',
        {
          provider: 'speech',
          reason: fs.existsSync(python) ? 'model_missing' : 'engine_missing',
        },
      );
    }
    slot.proc = new EngineProcess({ python, modelDir, threads, stallTimeoutMs, speakerModel });
    return slot.proc;
  }

  private acquire(signal?: AbortSignal): Promise<Slot> {
    const free = this.slots.find((s) => !s.busy && s.proc && !s.proc.dead) ?? this.slots.find((s) => !s.busy);
    if (free) {
      free.busy = true;
      return Promise.resolve(free);
    }
    return new Promise<Slot>((resolve, reject) => {
      const waiter = {
        take: (slot: Slot) => {
          signal?.removeEventListener('abort', onAbort);
          slot.busy = true;
          resolve(slot);
        },
      };
      const onAbort = () => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(abortReason(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private release(slot: Slot): void {
    slot.busy = false;
    this.waiting.shift()?.take(slot);
  }
}

function toError(error: { kind: string; message: string }, audioPath: string): Error {
  if (error.kind === 'undecodable_audio') {
    return new AppError(
      'UNPROCESSABLE_INPUT',
      'The audio could not be decoded',
      { reason: 'undecodable_audio' },
      { cause: new Error(error.message) },
    );
  }
  if (error.kind === 'speaker_model_missing') {
    return new AppError(
      'PROVIDER_NOT_CONFIGURED',
      'The speaker model for diarize is not provisioned (npm start or npm test set it up)',
      { provider: 'speech', reason: 'speaker_model_missing' },
      { cause: new Error(error.message) },
    );
  }
  return new SpeechEngineError(`the speech engine could not transcribe ${audioPath}: ${error.message}`);
}

/** The local provider for a configuration. */
export function createLocalSpeechProvider(config: Config): LocalSpeechProvider {
  return new LocalSpeechProvider(localSpeechOptions(config));
}

/**
 * Two seconds of 16 kHz mono 16-bit WAV: a 220 Hz tone whose loudness rises and falls four times a second (syllables'
 * rhythm), for `warm`. Nothing is read from disk or downloaded.
 */
function warmClip(): Buffer {
  const rate = 16_000;
  const n = rate * 2;
  const out = Buffer.alloc(44 + n * 2);
  out.write('RIFF', 0);
  out.writeUInt32LE(36 + n * 2, 4);
  out.write('WAVEfmt ', 8);
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20);
  out.writeUInt16LE(1, 22);
  out.writeUInt32LE(rate, 24);
  out.writeUInt32LE(rate * 2, 28);
  out.writeUInt16LE(2, 32);
  out.writeUInt16LE(16, 34);
  out.write('data', 36);
  out.writeUInt32LE(n * 2, 40);
  for (let i = 0; i < n; i++) {
    const t = i / rate;
    const level = 0.5 - 0.5 * Math.cos(2 * Math.PI * 4 * t);
    out.writeInt16LE(Math.round(8000 * level * Math.sin(2 * Math.PI * 220 * t)), 44 + i * 2);
  }
  return out;
}
