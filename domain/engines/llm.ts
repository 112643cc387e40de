/** One part of a multi-part user message (OpenAI chat-completions content parts). */
export type ContentPart =
  { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } };

/** A chat message as sent on the wire. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string | ContentPart[];
}

/**
 * What one provider call cost. For `chatJson` calls that were repeated because the answer was not JSON, the
 * numbers add up every request made for that call; `duration_ms` covers the whole call, retries and waits included.
 */
export interface LlmUsage {
  /** The model asked for (the configured chat or vision model). */
  model: string;
  /** What the call was for (`translate`, `template`, `summarize`, `vision_ocr`, ...), for usage reports. */
  purpose: string;
  prompt_tokens: number;
  completion_tokens: number;
  /** `total_tokens` as reported by the endpoint, else prompt + completion. */
  tokens: number;
  /** From `LLM_PRICES` (per 1k tokens); 0 when the model has no price. */
  cost: number;
  duration_ms: number;
}

export interface ChatTextOptions {
  purpose: string;
  system: string;
  /** Plain text, or parts (text and `image_url` data URLs) for vision. */
  user: string | ContentPart[];
  /** Use the vision model. Defaults to true when `user` holds an image part. */
  vision?: boolean;
  maxTokens?: number;
  /** Aborts the request and any backoff wait; the abort reason is thrown as is (not an UpstreamError). */
  signal?: AbortSignal;
  /**
   * Sent as the `Idempotency-Key` header (a JSON correction round adds `-r<round>`): the same call sent again, by a
   * retry or a crashed worker's successor, carries the same key, and an endpoint that honours keys (the local model
   * server, `LLM_IDEMPOTENCY_KEYS`) answers it from its first request instead of computing it again.
   */
  idempotencyKey?: string;
  /**
   * Earlier requests of this call that were sent and never answered (in doubt). Each doubles how long this request is
   * waited for (`LLM_TIMEOUT_MS` × 2^resends, at most an hour): a model slower than the timeout is paid a bounded
   * number of times, not once per timeout, by an endpoint that does not honour keys.
   */
  resends?: number;
}

export interface ChatJsonOptions extends ChatTextOptions {
  /** A short description of the expected object (keys and meaning), added to the system prompt. */
  schemaHint?: string;
  /**
   * The object's JSON schema. The local model server enforces it with a grammar (`response_format: json_schema`);
   * hosted endpoints get `json_object` (not every OpenAI-compatible server takes a schema).
   */
  schema?: Record<string, unknown>;
}

/** Safe to show and log: never the API key, and the base URL reduced to its host. */
export interface LlmDescription {
  model: string;
  visionModel: string;
  /** Host (and port) of the base URL only, e.g. `api.openai.com`. */
  baseUrl: string;
  /** `local` (the local model server) or `openai` (an OpenAI-compatible endpoint). */
  provider: 'local' | 'openai';
  /** Whether the model reads page images (vision OCR); the local model does not. */
  vision: boolean;
  /** The model's context in tokens when it is small enough that requests must be cut to fit (the local model). */
  contextTokens?: number;
}

/**
 * A chat model behind an OpenAI-compatible endpoint. Every failure that is the endpoint's fault ends as an
 * `UpstreamError` (502 `UPSTREAM_ERROR`) once retries are spent; the API key never appears in an error.
 */
export interface LlmProvider {
  /**
   * Asks for one JSON object (`response_format: {type: 'json_object'}`). An answer that is not a JSON object is
   * asked for again (at most 2 more times) with a corrective message, then fails with an UpstreamError.
   */
  chatJson<T = Record<string, unknown>>(opts: ChatJsonOptions): Promise<{ value: T; usage: LlmUsage }>;
  /** Asks for free text. */
  chatText(opts: ChatTextOptions): Promise<{ text: string; usage: LlmUsage }>;
  describe(): LlmDescription;
}

/** The spec's LLM usage record (`llm_info`-style), as produced by `UsageRecorder.summary()`. */
export interface LlmUsageSummary {
  total_tokens: number;
  total_cost: number;
  requests: { model: string; purpose: string; tokens: number; duration_ms: number }[];
}

/** Passed to the `onRetry` hook before each wait. */
export interface LlmRetryInfo {
  purpose: string;
  model: string;
  /** The attempt that failed (1-based). */
  attempt: number;
  /** Attempts allowed in all (`maxRetries + 1`). */
  maxAttempts: number;
  /** Wait before the next attempt. */
  delayMs: number;
  /** HTTP status when the endpoint answered. */
  status?: number;
  /** Short reason without secrets, e.g. `HTTP 429`, `timeout`, `network error`. */
  reason: string;
}
