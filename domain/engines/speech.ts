import type { SpeakerWindow } from '../../core/results/diarize';

/** One word with its timing and the model's confidence in it (0..1). `word` keeps its leading space. */
export interface SpeechWord {
  word: string;
  start: number;
  end: number;
  /** Null when the provider reports none (OpenAI's endpoint). */
  probability: number | null;
}

/** One stretch of speech, times in seconds from the start of the audio given to the engine. */
export interface SpeechSegment {
  start: number;
  end: number;
  text: string;
  /** The segment's words in order, when the engine gave them (the local engine always does). */
  words?: SpeechWord[];
}

/** One window of speech (times as the segments') and its speaker embedding (unit length; cosine = dot product). */
export type { SpeakerWindow };

/** What a speech engine heard in one audio file (one chunk of a longer recording, or the whole of a short one). */
export interface Transcript {
  /** ISO 639-1 code, given or detected. */
  language: string;
  /** The detector's confidence when the language was detected. */
  languageProbability?: number;
  /** Seconds of audio. */
  duration: number;
  text: string;
  segments: SpeechSegment[];
  /** The model that transcribed (e.g. `whisper-base`, or the remote model name). */
  model: string;
  /** Wall time of the engine call. */
  durationMs: number;
  /** With `speakers` (the local engine only): speaker embeddings of the speech, clustered by core/results/diarize.ts. */
  speakerWindows?: SpeakerWindow[];
}

export interface TranscribeOptions {
  /** ISO 639-1 code; undefined (or `auto`) lets the engine detect it. */
  language?: string;
  /** Voice activity detection: skip what is not speech (default true; the local engine's Silero VAD). */
  vad?: boolean;
  /** Names and terms the recording uses, to steer spelling. */
  prompt?: string;
  /** Ask for word timings (the local engine always computes them; a remote endpoint is asked only then). */
  words?: boolean;
  /**
   * Speaker embeddings of the speech (`Transcript.speakerWindows`), for `diarize`. Only the local engine has a
   * speaker model: a remote provider refuses the option before any work (422 naming `diarize`).
   */
  speakers?: boolean;
  /** Aborts the call: a local engine process is killed (and restarted for the next call), a request aborted. */
  signal?: AbortSignal;
}

/**
 * A speech-to-text engine behind one interface, chosen by `SPEECH_PROVIDER`: `local` (faster-whisper in a long-lived
 * Python process per media slot) or `openai` (any OpenAI-compatible `/audio/transcriptions` endpoint). Failures a
 * client may see are `AppError`s (`UNPROCESSABLE_INPUT` for undecodable audio, `UPSTREAM_ERROR` for a remote
 * endpoint's refusal, with `retryable` set for 429/5xx/timeouts), so the activity error boundary maps them.
 */
export interface SpeechProvider {
  /** Transcribes a 16 kHz mono WAV (or any format the engine decodes) at `audioPath`. */
  transcribe(audioPath: string, opts?: TranscribeOptions): Promise<Transcript>;
  /**
   * The spoken language from the first 30 s of speech, without transcribing the rest. `probability` is null when the
   * provider does not report one.
   */
  detectLanguage(
    audioPath: string,
    opts?: Pick<TranscribeOptions, 'signal' | 'vad'>,
  ): Promise<{ language: string; probability: number | null; duration: number; model: string }>;
  describe(): { provider: 'local' | 'openai'; model: string };
  /**
   * Starts the engine's processes and has each do one real unit of work (its model loaded, one short decode with and
   * one without voice detection), so the first request after start pays none of it (issue 38: ready means warm).
   * Absent for a remote provider.
   */
  warm?(): Promise<void>;
  /** Stops engine processes; later calls start them again. */
  close(): Promise<void>;
}
