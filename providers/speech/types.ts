/** One stretch of speech, times in seconds from the start of the audio given to the engine. */
export interface SpeechSegment {
  start: number;
  end: number;
  text: string;
}

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
}

export interface TranscribeOptions {
  /** ISO 639-1 code; undefined (or `auto`) lets the engine detect it. */
  language?: string;
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
  describe(): { provider: 'local' | 'openai'; model: string };
  /** Stops engine processes; later calls start them again. */
  close(): Promise<void>;
}
