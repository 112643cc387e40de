import { openAsBlob } from 'node:fs';
import path from 'node:path';
import type OpenAI from 'openai';
import { lazyOpenAiClient } from '../llm/openai-sdk';
import type { SpeechApiConfig } from '../../core/config/config';
import { isoLanguage } from '../../core/jobs/speech-languages';
import {
  type BackoffPolicy,
  type Classified,
  DEFAULT_BACKOFF,
  MalformedAnswerError,
  redact,
  type RetryWait,
  UpstreamError,
  withRetries,
} from '../llm/retry';
import type {
  SpeechProvider,
  SpeechSegment,
  SpeechWord,
  TranscribeOptions,
  Transcript,
} from '../../domain/engines/speech';

export interface OpenAiSpeechOptions {
  /** Retries after the first attempt, of 408/409/429/5xx, network errors, timeouts and malformed answers; default 4. */
  maxRetries?: number;
  /** Overrides of the backoff (base 500 ms ×2, cap 20 s, `Retry-After` cap 60 s); tests shrink it. */
  backoff?: Partial<BackoffPolicy>;
  /** Called before every wait for another attempt, for logging (holds no secret). */
  onRetry?: (wait: RetryWait) => void;
}

export { isoLanguage, languageName } from '../../core/jobs/speech-languages';

const MIME: Record<string, string> = {
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
  '.m4a': 'audio/mp4',
  '.mp4': 'audio/mp4',
  '.ogg': 'audio/ogg',
  '.oga': 'audio/ogg',
  '.opus': 'audio/ogg',
  '.flac': 'audio/flac',
  '.webm': 'audio/webm',
};

const finite = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n);
const snippet = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n)}…` : s);

const isWord = (w: unknown): w is { word: string; start: number; end: number; probability?: unknown } => {
  const x = w as { word?: unknown; start?: unknown; end?: unknown } | null;
  return typeof x === 'object' && x !== null && typeof x.word === 'string' && finite(x.start) && finite(x.end);
};

/**
 * Maps a `verbose_json` answer; an answer without `text` is malformed (a retryable failure). Word timings (OpenAI gives
 * them in one top-level `words` list, some servers per segment) go into the segment whose span holds their middle, in
 * order; `probability` is kept when the server gives one, else null (OpenAI reports none).
 */
export function fromVerboseJson(
  answer: unknown,
  requestedLanguage: string | undefined,
): Pick<Transcript, 'language' | 'duration' | 'text' | 'segments'> {
  const r = answer as {
    text?: unknown;
    language?: unknown;
    duration?: unknown;
    segments?: unknown;
    words?: unknown;
  } | null;
  if (typeof r !== 'object' || r === null || typeof r.text !== 'string') {
    throw new MalformedAnswerError('answer without a transcript');
  }
  const raw = Array.isArray(r.segments)
    ? (r.segments as { start?: unknown; end?: unknown; text?: unknown; words?: unknown }[])
    : [];
  const toWord = (w: { word: string; start: number; end: number; probability?: unknown }): SpeechWord => ({
    word: w.word,
    start: w.start,
    end: w.end,
    probability: finite(w.probability) ? w.probability : null,
  });
  const segments: SpeechSegment[] = raw
    .filter((s) => finite(s?.start) && finite(s.end) && typeof s.text === 'string')
    .map((s) => ({
      start: s.start as number,
      end: s.end as number,
      text: (s.text as string).trim(),
      ...(Array.isArray(s.words) ? { words: s.words.filter(isWord).map(toWord) } : {}),
    }));
  const text = r.text.trim();
  const duration = finite(r.duration) ? r.duration : (segments.at(-1)?.end ?? 0);
  if (!segments.length && text) segments.push({ start: 0, end: duration, text });
  if (Array.isArray(r.words)) {
    const words = r.words.filter(isWord).map(toWord);
    for (const s of segments) s.words = [];
    for (const w of words) {
      const mid = (w.start + w.end) / 2;
      const home = segments.find((s) => mid <= s.end) ?? segments.at(-1);
      home?.words?.push(w);
    }
  }
  return { language: isoLanguage(r.language) ?? requestedLanguage ?? 'und', duration, text, segments };
}

/**
 * Speech-to-text over any OpenAI-compatible `POST /audio/transcriptions` (OpenAI, Groq, faster-whisper-server,
 * whisper.cpp server, vLLM): one multipart request per audio file asking for `verbose_json` with segment timestamps.
 * The SDK's retries are off; `withRetries` retries 408/409/429/5xx, network errors and timeouts honouring
 * `Retry-After`, then fails with a retryable `UpstreamError`; other 4xx fail at once, not retryable. The API key
 * never appears in an error.
 */
export class OpenAiSpeechProvider implements SpeechProvider {
  private readonly client: () => Promise<OpenAI>;
  private readonly backoff: BackoffPolicy;

  constructor(
    private readonly config: SpeechApiConfig,
    private readonly options: OpenAiSpeechOptions = {},
  ) {
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    // Everything the SDK would read from process.env is given (core/config/config is the only reader).
    const unset = { adminAPIKey: null, organization: null, project: null, webhookSecret: null };
    this.client = lazyOpenAiClient({
      baseURL: config.baseUrl,
      apiKey: config.apiKey ?? 'none',
      ...unset,
      maxRetries: 0,
      logLevel: 'off',
    });
  }

  describe(): { provider: 'openai'; model: string } {
    return { provider: 'openai', model: this.config.model };
  }

  async close(): Promise<void> {
    // Nothing held between requests.
  }

  async transcribe(audioPath: string, opts: TranscribeOptions = {}): Promise<Transcript> {
    const started = Date.now();
    const language = opts.language && opts.language !== 'auto' ? opts.language : undefined;
    const blob = await openAsBlob(audioPath, {
      type: MIME[path.extname(audioPath).toLowerCase()] ?? 'application/octet-stream',
    });
    const file = new File([blob], path.basename(audioPath), { type: blob.type });
    const maxAttempts = Math.max(0, this.options.maxRetries ?? 4) + 1;
    const heard = await withRetries(
      async () => {
        const answer = await (
          await this.client()
        ).audio.transcriptions.create(
          {
            file,
            model: this.config.model,
            response_format: 'verbose_json',
            timestamp_granularities: opts.words ? ['segment', 'word'] : ['segment'],
            ...(language ? { language } : {}),
            ...(opts.prompt ? { prompt: opts.prompt } : {}),
          },
          { signal: opts.signal, timeout: this.config.timeoutMs },
        );
        return fromVerboseJson(answer, language);
      },
      {
        maxAttempts,
        backoff: this.backoff,
        signal: opts.signal,
        onRetry: this.options.onRetry,
        fail: (f, n) => this.failure(f, n),
      },
    );
    return { ...heard, model: this.config.model, durationMs: Date.now() - started };
  }

  /**
   * The protocol has no language detection of its own: the audio given (the caller cuts the first 30 s) is
   * transcribed and the language the endpoint reports is answered, without a probability.
   */
  async detectLanguage(
    audioPath: string,
    opts: Pick<TranscribeOptions, 'signal'> = {},
  ): Promise<{ language: string; probability: number | null; duration: number; model: string }> {
    const t = await this.transcribe(audioPath, { signal: opts.signal });
    return { language: t.language, probability: null, duration: t.duration, model: t.model };
  }

  private failure(f: Classified, attempts: number): UpstreamError {
    let host = 'unknown';
    try {
      host = new URL(this.config.baseUrl).host;
    } catch {
      // a base URL from config is valid; keep the message anyway
    }
    const said = f.upstreamMessage ? `: ${snippet(redact(f.upstreamMessage, this.config.apiKey))}` : '';
    const message = f.retry
      ? `The speech endpoint (${host}) failed after ${attempts} attempt${attempts === 1 ? '' : 's'} (last: ${f.reason})${said}`
      : `The speech endpoint (${host}) refused the request (${f.reason})${said}`;
    const details = {
      provider: 'speech' as const,
      attempts,
      model: this.config.model,
      reason: f.reason,
      ...(f.status ? { status: f.status } : {}),
      ...(f.retry && f.retryAfterMs !== undefined ? { retry_after_ms: f.retryAfterMs } : {}),
    };
    return new UpstreamError(message, details, f.outage);
  }
}

/** The provider for `SPEECH_PROVIDER=openai`, or null when another provider is chosen (see `Config.speechApi`). */
export function createOpenAiSpeechProvider(
  config: { speechApi: SpeechApiConfig | null },
  options: OpenAiSpeechOptions = {},
): OpenAiSpeechProvider | null {
  return config.speechApi ? new OpenAiSpeechProvider(config.speechApi, options) : null;
}
