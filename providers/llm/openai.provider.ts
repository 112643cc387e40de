import type OpenAI from 'openai';
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { LlmConfig } from '../../core/config/config';
import { AppError } from '../../core/errors';
import {
  type BackoffPolicy,
  type Classified,
  DEFAULT_BACKOFF,
  MalformedAnswerError,
  redact,
  UpstreamError,
  withRetries,
} from './retry';
import type {
  ChatJsonOptions,
  ChatMessage,
  ChatTextOptions,
  ContentPart,
  LlmDescription,
  LlmProvider,
  LlmRetryInfo,
  LlmUsage,
} from '../../domain/engines/llm';
import { lazyOpenAiClient } from './openai-sdk';
import { addUsage, computeCost } from './usage';

export interface OpenAiLlmOptions {
  /** Called before every wait for another attempt (transport retries and JSON corrections), for logging. */
  onRetry?: (info: LlmRetryInfo) => void;
  /** Overrides of the backoff (base 500 ms ×2, cap 20 s, `Retry-After` cap 60 s); tests shrink it. */
  backoff?: Partial<BackoffPolicy>;
  /** Extra requests after an answer that is not a JSON object; default 2. */
  jsonRetries?: number;
  /** Name of the output limit field: `max_tokens` (widest support, default) or `max_completion_tokens`. */
  maxTokensParam?: 'max_tokens' | 'max_completion_tokens';
}

type RequestUsage = Omit<LlmUsage, 'model' | 'purpose'>;

const JSON_INSTRUCTION = 'Answer with exactly one JSON object and nothing else.';
const snippet = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n)}…` : s);
const hasImage = (user: string | ContentPart[]) => Array.isArray(user) && user.some((p) => p.type === 'image_url');

/** Parses a model answer as one JSON object, tolerating code fences and text around the object. */
export function parseJsonObject(
  content: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  const candidates = [content.trim()];
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(content);
  if (fenced) candidates.push(fenced[1].trim());
  const first = content.indexOf('{');
  const last = content.lastIndexOf('}');
  if (first >= 0 && last > first) candidates.push(content.slice(first, last + 1));
  let error = content.trim() === '' ? 'empty answer' : 'not valid JSON';
  for (const c of candidates) {
    try {
      const v: unknown = JSON.parse(c);
      if (typeof v === 'object' && v !== null && !Array.isArray(v))
        return { ok: true, value: v as Record<string, unknown> };
      error = 'JSON but not an object';
    } catch {
      // next candidate
    }
  }
  return { ok: false, error };
}

/** The longest a request is waited for, however often it was sent before (see `ChatTextOptions.resends`). */
const MAX_WAIT_MS = 3_600_000;

/**
 * LLM provider over any OpenAI-compatible chat-completions endpoint. The SDK's own retries are off: this class
 * retries 408, 409, 429, 5xx, refused connections and malformed answers with exponential backoff, honouring
 * `Retry-After` (seconds or HTTP date) and `retry-after-ms`, so every retry is seen by `onRetry`. A request in doubt
 * (sent, then a timeout or a cut connection: the endpoint may still be computing it and charge for it) is sent again
 * here only when the endpoint honours idempotency keys (`LlmConfig.idempotencyKeys`: it answers the repeated key
 * from its first request); otherwise it ends the call with a retryable `UpstreamError` (`details.in_doubt`), and the
 * step's next attempt sends it once more, waiting twice as long (docs/model-calls.md).
 */
export class OpenAiLlmProvider implements LlmProvider {
  private readonly client: () => Promise<OpenAI>;
  private readonly backoff: BackoffPolicy;

  constructor(
    private readonly config: LlmConfig,
    private readonly options: OpenAiLlmOptions = {},
  ) {
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    // Options the SDK would otherwise read from process.env are given explicitly (core/config/config is the only reader);
    // only OPENAI_CUSTOM_HEADERS is still read by the SDK itself.
    this.client = lazyOpenAiClient({
      baseURL: config.baseUrl,
      apiKey: config.apiKey ?? 'none',
      adminAPIKey: null,
      organization: null,
      project: null,
      webhookSecret: null,
      timeout: config.timeoutMs,
      maxRetries: 0,
      logLevel: 'off',
    });
  }

  describe(): LlmDescription {
    let host: string;
    try {
      host = new URL(this.config.baseUrl).host;
    } catch {
      host = 'unknown';
    }
    return {
      model: this.config.model,
      visionModel: this.config.visionModel,
      baseUrl: host,
      provider: this.config.provider,
      vision: this.config.vision,
      ...(this.config.contextTokens ? { contextTokens: this.config.contextTokens } : {}),
    };
  }

  async chatText(opts: ChatTextOptions): Promise<{ text: string; usage: LlmUsage }> {
    const model = this.modelFor(opts);
    const messages: ChatMessage[] = [
      { role: 'system', content: opts.system },
      { role: 'user', content: opts.user },
    ];
    const r = await this.complete(model, messages, opts, 'text', 1);
    return { text: r.content, usage: { model, purpose: opts.purpose, ...r.usage } };
  }

  async chatJson<T = Record<string, unknown>>(opts: ChatJsonOptions): Promise<{ value: T; usage: LlmUsage }> {
    const model = this.modelFor(opts);
    const hint = opts.schemaHint ? `\n\nThe object has this shape: ${opts.schemaHint}` : '';
    const messages: ChatMessage[] = [
      { role: 'system', content: `${opts.system}\n\n${JSON_INSTRUCTION}${hint}` },
      { role: 'user', content: opts.user },
    ];
    const rounds = 1 + Math.max(0, this.options.jsonRetries ?? 2);
    let usage: LlmUsage | undefined;
    // The local server enforces a schema with its grammar; hosted endpoints get json_object (see ChatJsonOptions).
    const format = opts.schema && this.config.provider === 'local' ? { schema: opts.schema } : 'json_object';
    for (let round = 1; ; round++) {
      const r = await this.complete(model, messages, opts, format, round);
      usage = usage ? addUsage(usage, r.usage) : { model, purpose: opts.purpose, ...r.usage };
      const parsed = parseJsonObject(r.content);
      if (parsed.ok) return { value: parsed.value as T, usage };
      if (round >= rounds) {
        throw new UpstreamError(
          `The LLM did not answer with a JSON object after ${round} attempts (last answer: ${parsed.error})`,
          { provider: 'llm', attempts: round, reason: 'invalid_json', model, purpose: opts.purpose },
          // The model answered (and was paid): no outage, so the step is not tried again.
          false,
        );
      }
      this.options.onRetry?.({
        purpose: opts.purpose,
        model,
        attempt: round,
        maxAttempts: rounds,
        delayMs: 0,
        reason: `invalid JSON (${parsed.error})`,
      });
      messages.push(
        { role: 'assistant', content: snippet(r.content, 4000) },
        { role: 'user', content: `Your answer was ${parsed.error}. ${JSON_INSTRUCTION}` },
      );
    }
  }

  private modelFor(opts: ChatTextOptions): string {
    return (opts.vision ?? hasImage(opts.user)) ? this.config.visionModel : this.config.model;
  }

  /** One chat completion with transport retries; returns the answer text and the request's usage. */
  private async complete(
    model: string,
    messages: ChatMessage[],
    opts: ChatTextOptions,
    format: 'text' | 'json_object' | { schema: Record<string, unknown> },
    round: number,
  ): Promise<{ content: string; usage: RequestUsage }> {
    const responseFormat =
      format === 'text'
        ? {}
        : format === 'json_object'
          ? { response_format: { type: 'json_object' as const } }
          : {
              response_format: { type: 'json_schema' as const, json_schema: { name: 'answer', schema: format.schema } },
            };
    const body: ChatCompletionCreateParamsNonStreaming = {
      model,
      messages: messages as ChatCompletionMessageParam[],
      ...responseFormat,
      ...(opts.maxTokens ? { [this.options.maxTokensParam ?? 'max_tokens']: opts.maxTokens } : {}),
    };
    const maxAttempts = this.config.maxRetries + 1;
    const started = Date.now();
    const key = opts.idempotencyKey && (round > 1 ? `${opts.idempotencyKey}-r${round}` : opts.idempotencyKey);
    const base = this.config.timeoutMs;
    return withRetries(
      async (inDoubtBefore) => {
        const doubling = 2 ** Math.min(20, Math.max(0, opts.resends ?? 0) + inDoubtBefore);
        const res = await (
          await this.client()
        ).chat.completions.create(body, {
          signal: opts.signal,
          timeout: Math.max(base, Math.min(MAX_WAIT_MS, base * doubling)),
          ...(key ? { headers: { 'Idempotency-Key': key } } : {}),
        });
        const choice = Array.isArray(res?.choices) ? res.choices[0] : undefined;
        if (!choice?.message) throw new MalformedAnswerError('answer without choices');
        const content = typeof choice.message.content === 'string' ? choice.message.content : '';
        return { content, usage: this.usageOf(model, res.usage, Date.now() - started) };
      },
      {
        maxAttempts,
        backoff: this.backoff,
        resendInDoubt: this.config.idempotencyKeys,
        signal: opts.signal,
        onRetry: (w) => this.options.onRetry?.({ purpose: opts.purpose, model, ...w }),
        fail: (failure, attempts) => this.toUpstreamError(failure, attempts, model, opts.purpose),
      },
    );
  }

  private usageOf(
    model: string,
    u: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | undefined | null,
    durationMs: number,
  ): RequestUsage {
    const num = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : 0);
    const prompt = num(u?.prompt_tokens);
    const completion = num(u?.completion_tokens);
    return {
      prompt_tokens: prompt,
      completion_tokens: completion,
      tokens: num(u?.total_tokens) || prompt + completion,
      cost: computeCost(this.config.prices, model, prompt, completion),
      duration_ms: durationMs,
    };
  }

  private toUpstreamError(f: Classified, attempts: number, model: string, purpose: string): UpstreamError {
    const said = f.upstreamMessage ? `: ${snippet(redact(f.upstreamMessage, this.config.apiKey))}` : '';
    const host = this.describe().baseUrl;
    const message = f.retry
      ? `The LLM endpoint (${host}) failed after ${attempts} attempt${attempts === 1 ? '' : 's'} (last: ${f.reason})${said}`
      : `The LLM endpoint (${host}) refused the request (${f.reason})${said}`;
    const details = {
      provider: 'llm' as const,
      attempts,
      model,
      purpose,
      reason: f.reason,
      ...(f.status ? { status: f.status } : {}),
      ...(f.inDoubt ? { in_doubt: true } : {}),
      ...(f.retry && f.retryAfterMs !== undefined ? { retry_after_ms: f.retryAfterMs } : {}),
    };
    return new UpstreamError(message, details, f.outage);
  }
}

/** The provider for this configuration, or null when no LLM is configured (see `Config.llm`). */
export function createLlmProvider(
  config: { llm: LlmConfig | null },
  options: OpenAiLlmOptions = {},
): LlmProvider | null {
  return config.llm ? new OpenAiLlmProvider(config.llm, options) : null;
}

/** The provider, or 503 `PROVIDER_NOT_CONFIGURED` naming the variables to set. Call after validation (contract §1). */
export function requireLlm(provider: LlmProvider | null | undefined): LlmProvider {
  if (provider) return provider;
  throw new AppError(
    'PROVIDER_NOT_CONFIGURED',
    'No LLM is configured: set LLM_MODEL and LLM_BASE_URL (an OpenAI-compatible endpoint) and/or LLM_API_KEY ' +
      '(OPENAI_BASE_URL and OPENAI_API_KEY are accepted as fallbacks).',
    { provider: 'llm', variables: ['LLM_BASE_URL', 'LLM_API_KEY', 'LLM_MODEL'] },
  );
}

/** An image as a content part: a `data:` URL of the bytes. */
export function imagePart(bytes: Uint8Array, mime = 'image/png', detail?: 'auto' | 'low' | 'high'): ContentPart {
  const url = `data:${mime};base64,${Buffer.from(bytes).toString('base64')}`;
  return { type: 'image_url', image_url: detail ? { url, detail } : { url } };
}
