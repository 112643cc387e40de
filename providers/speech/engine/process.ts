import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { toolEnvironment } from '../../../core/config/config';
import { engineStallTimeoutMs, StallWatchdog, type EngineStallError } from '../../process/run-tool';
import type { SpeakerWindow } from '../../../domain/engines/speech';

/** The engine script, run by the speech venv's python. */
export const ENGINE_SCRIPT = fileURLToPath(new URL('./whisper_engine.py', import.meta.url));

/** One answer line of the engine (see whisper_engine.py). */
export interface EngineAnswer {
  id: number;
  language?: string;
  language_probability?: number;
  duration?: number;
  segments?: {
    start: number;
    end: number;
    text: string;
    /** Since this engine version; absent in an older engine's answer. */
    words?: { word: string; start: number; end: number; probability: number }[];
  }[];
  /** With `speakers`: one speaker embedding per 1.6 s window of the segments' speech (speaker_encoder.py). */
  speaker_windows?: SpeakerWindow[];
  error?: { kind: 'undecodable_audio' | 'bad_request' | 'speaker_model_missing' | 'internal'; message: string };
  /** A progress line while a request is decoded (seconds of audio done), not its answer. */
  progress?: number;
}

/** What a request asks beyond its audio and language (see whisper_engine.py). */
export interface EngineRequestOptions {
  vad?: boolean;
  prompt?: string;
  op?: 'transcribe' | 'detect_language';
  /** Speaker embeddings of the speech too (`speaker_windows`), for diarization. */
  speakers?: boolean;
}

/** The engine process ended (crashed, was killed, or could not start): trying again with a fresh one may help. */
export class SpeechEngineError extends Error {
  readonly retryable = true;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SpeechEngineError';
  }
}

export interface EngineProcessOptions {
  python: string;
  modelDir: string;
  threads: number;
  /** Resemblyzer's `pretrained.pt` (loaded on the first request that asks for speakers). */
  speakerModel?: string;
  /**
   * No progress line, log line or answer for this long while loading or transcribing: killed (default:
   * `ENGINE_STALL_TIMEOUT_MS`).
   */
  stallTimeoutMs?: number;
}

/** The engine's name in stall errors and logs. */
const ENGINE_NAME = 'speech engine (faster-whisper)';

const STDERR_TAIL = 4000;

/**
 * A long-lived faster-whisper process: the model is loaded once, then it answers one request at a time (the pool
 * never sends a second before the first is answered). When it exits, the request in flight is rejected with a
 * `SpeechEngineError` and the process is `dead`; the pool starts another. While it loads the model or answers a
 * request, the engine watchdog waits for its progress lines (one per decoded segment): a process silent for the stall
 * timeout is killed and the request rejected with an `EngineStallError`. An idle process is not watched.
 */
export class EngineProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** Resolves once the model is loaded; rejects when the process ends before. */
  readonly ready: Promise<void>;
  dead = false;
  private stderr = '';
  private nextId = 1;
  private pending: { id: number; resolve: (a: EngineAnswer) => void; reject: (e: Error) => void } | null = null;
  private readonly exited: Promise<void>;
  private readonly watchdog: StallWatchdog;
  private stalled: EngineStallError | null = null;

  constructor(opts: EngineProcessOptions) {
    const args = [ENGINE_SCRIPT, '--model-dir', opts.modelDir, '--threads', String(opts.threads)];
    if (opts.speakerModel) args.push('--speaker-model', opts.speakerModel);
    // The allow-listed environment of every tool: none of the service's keys.
    this.child = spawn(opts.python, args, { stdio: ['pipe', 'pipe', 'pipe'], env: toolEnvironment() });
    this.watchdog = new StallWatchdog(ENGINE_NAME, opts.stallTimeoutMs ?? engineStallTimeoutMs(), (err) => {
      this.stalled = err;
      void this.kill();
    });
    // Loading the model is watched too: a process that hangs before it is ready never takes a request.
    this.watchdog.start(this.child.pid);
    this.child.stdin.on('error', () => {
      /* a write to a process that just died: its exit rejects the request */
    });
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (d: string) => {
      this.watchdog.touch();
      this.stderr = (this.stderr + d).slice(-STDERR_TAIL);
    });
    let onReady!: () => void;
    let onStartFailure!: (e: Error) => void;
    this.ready = new Promise<void>((resolve, reject) => {
      onReady = resolve;
      onStartFailure = reject;
    });
    this.ready.catch(() => undefined);
    const lines = readline.createInterface({ input: this.child.stdout });
    lines.on('line', (line) => this.onLine(line, onReady));
    this.exited = new Promise((resolve) => {
      const ended = (why: string) => {
        if (this.dead) return;
        this.dead = true;
        this.watchdog.stop();
        const err =
          this.stalled ??
          new SpeechEngineError(
            `the speech engine process ${why}${this.stderr ? `: ${this.stderr.trim().slice(-1000)}` : ''}`,
          );
        onStartFailure(err);
        this.pending?.reject(err);
        this.pending = null;
        resolve();
      };
      this.child.once('exit', (code, signal) => ended(`ended (${signal ?? `exit ${code}`})`));
      this.child.once('error', (e) => ended(`could not run ${opts.python} (${e.message})`));
    });
  }

  private onLine(line: string, onReady: () => void): void {
    let msg: (EngineAnswer & { ready?: boolean }) | null = null;
    try {
      msg = JSON.parse(line) as EngineAnswer & { ready?: boolean };
    } catch {
      msg = null;
    }
    if (msg?.ready) {
      this.watchdog.stop();
      onReady();
      return;
    }
    const p = this.pending;
    if (p && msg?.id === p.id && typeof msg.progress === 'number') {
      this.watchdog.touch();
      return;
    }
    if (!p || !msg || msg.id !== p.id) {
      void this.kill(); // out of step with its requests: never trust it again
      return;
    }
    this.pending = null;
    this.watchdog.stop();
    p.resolve(msg);
  }

  /**
   * Sends one request and waits for its answer. `vad` (default true) skips what is not speech; `prompt` primes every
   * window with names and terms; `op: 'detect_language'` answers the language of the first 30 s of speech only.
   */
  async request(audio: string, language: string | null, opts: EngineRequestOptions = {}): Promise<EngineAnswer> {
    await this.ready;
    if (this.dead) throw new SpeechEngineError('the speech engine process has ended');
    const id = this.nextId++;
    return new Promise<EngineAnswer>((resolve, reject) => {
      this.pending = { id, resolve, reject };
      this.watchdog.start(this.child.pid);
      const { vad = true, prompt, op, speakers } = opts;
      const line = {
        id,
        audio,
        language,
        vad,
        ...(prompt ? { prompt } : {}),
        ...(op ? { op } : {}),
        ...(speakers ? { speakers: true } : {}),
      };
      this.child.stdin.write(JSON.stringify(line) + '\n');
    });
  }

  /** SIGKILL; resolves once the process has gone. */
  async kill(): Promise<void> {
    if (!this.dead) this.child.kill('SIGKILL');
    await this.exited;
  }
}
