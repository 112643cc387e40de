import os from 'node:os';
import path from 'node:path';
import type { LlmPrices } from './config-fields';

/** The public OpenAI endpoint, used when only an API key is configured. */
export const DEFAULT_LLM_BASE_URL = 'https://api.openai.com/v1';

/** The local model `npm start` provisions (scripts/engines-llm.mjs) and its server loads by default. */
const LOCAL_LLM_FILE = 'qwen2.5-coder-1.5b-instruct-q4_k_m.gguf';

/** Which model answers: the local model server, an OpenAI-compatible endpoint, or none (503). */
export type LlmProviderName = 'local' | 'openai' | 'none';

/** The LLM endpoint as resolved from `LLM_*` with `OPENAI_*` fallbacks, or the local model server. */
export interface LlmConfig {
  provider: 'local' | 'openai';
  /**
   * `LLM_BASE_URL` ?? `OPENAI_BASE_URL` ?? the public OpenAI endpoint (no trailing slash); local: the loopback server.
   */
  baseUrl: string;
  /** `LLM_API_KEY` ?? `OPENAI_API_KEY`; undefined for endpoints that need none (the local server). */
  apiKey: string | undefined;
  /** `LLM_MODEL`: chat model; local: the model file's name without `.gguf`. */
  model: string;
  /** `LLM_VISION_MODEL`, defaulting to `LLM_MODEL`. */
  visionModel: string;
  /** Whether the model reads page images (vision OCR); the local model does not. */
  vision: boolean;
  /**
   * The model's context in tokens when it is small enough to shape the requests (local: `LLM_LOCAL_CONTEXT`):
   * texts are cut into pieces that fit it with the answer. Undefined: hosted models, pieces of 12,000 characters.
   */
  contextTokens?: number;
  timeoutMs: number;
  /** Retries after the first attempt (so `maxRetries + 1` attempts at most). */
  maxRetries: number;
  /**
   * `LLM_IDEMPOTENCY_KEYS` (default: true for the local model server only): the endpoint answers a request whose
   * `Idempotency-Key` it has seen from that first request, so a request in doubt may be sent again at once.
   */
  idempotencyKeys: boolean;
  prices: LlmPrices;
}

/** The local model server (llm-server/main.ts), started by `npm start` when the provider is local. */
export interface LocalLlmConfig {
  /** `LLM_LOCAL_MODEL_PATH` or the provisioned file in the engine cache. */
  modelPath: string;
  /** Loopback port (`LLM_LOCAL_PORT`). */
  port: number;
  contextSize: number;
  /** llama.cpp threads; 0 in the variable means half the cores (see providers/llm/local/engine.ts). */
  threads: number;
  slots: number;
  queueSize: number;
}

/** The variables this module reads (a subset of the raw configuration). */
interface LlmVariables {
  LLM_PROVIDER?: LlmProviderName;
  LLM_BASE_URL?: string;
  LLM_API_KEY?: string;
  LLM_MODEL?: string;
  LLM_VISION_MODEL?: string;
  LLM_TIMEOUT_MS: number;
  LLM_MAX_RETRIES: number;
  LLM_IDEMPOTENCY_KEYS?: boolean;
  LLM_PRICES: LlmPrices;
  OPENAI_API_KEY?: string;
  OPENAI_BASE_URL?: string;
  LLM_LOCAL_PORT: number;
  LLM_LOCAL_MODEL_PATH?: string;
  LLM_LOCAL_CONTEXT: number;
  LLM_LOCAL_THREADS: number;
  LLM_LOCAL_SLOTS: number;
  LLM_LOCAL_QUEUE: number;
  DOCPROC_CACHE_DIR?: string;
}

/** A local model thinks for seconds to minutes and may wait in the server's queue: its default timeout is longer. */
const LOCAL_TIMEOUT_MS = 600_000;

/**
 * `LLM_PROVIDER` when set; otherwise `openai` when an endpoint or a key is configured (`LLM_BASE_URL`,
 * `OPENAI_BASE_URL`, `LLM_API_KEY`, `OPENAI_API_KEY`), else `local`. scripts/engines-llm.mjs decides the same way.
 */
export function llmProviderOf(raw: LlmVariables): LlmProviderName {
  if (raw.LLM_PROVIDER) return raw.LLM_PROVIDER;
  return raw.LLM_BASE_URL || raw.OPENAI_BASE_URL || raw.LLM_API_KEY || raw.OPENAI_API_KEY ? 'openai' : 'local';
}

export function localLlmConfig(raw: LlmVariables): LocalLlmConfig {
  const cache = path.resolve(raw.DOCPROC_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'docproc'));
  return {
    modelPath: path.resolve(
      raw.LLM_LOCAL_MODEL_PATH ?? path.join(cache, 'models', 'qwen2.5-coder-1.5b-instruct', LOCAL_LLM_FILE),
    ),
    port: raw.LLM_LOCAL_PORT,
    contextSize: raw.LLM_LOCAL_CONTEXT,
    threads: raw.LLM_LOCAL_THREADS,
    slots: raw.LLM_LOCAL_SLOTS,
    queueSize: raw.LLM_LOCAL_QUEUE,
  };
}

/**
 * The model the workers call, or null (`LLM_PROVIDER=none`, or an endpoint without `LLM_MODEL`: there is no
 * default hosted model). `timeoutSet` says whether `LLM_TIMEOUT_MS` was given (the local default is longer).
 */
export function resolveLlm(raw: LlmVariables, timeoutSet: boolean): LlmConfig | null {
  const provider = llmProviderOf(raw);
  if (provider === 'none') return null;
  const common = {
    maxRetries: raw.LLM_MAX_RETRIES,
    idempotencyKeys: raw.LLM_IDEMPOTENCY_KEYS ?? provider === 'local',
    prices: raw.LLM_PRICES,
  };
  if (provider === 'local') {
    const local = localLlmConfig(raw);
    const model = path.basename(local.modelPath).replace(/\.gguf$/i, '');
    return {
      provider,
      baseUrl: `http://127.0.0.1:${local.port}/v1`,
      apiKey: undefined,
      model,
      visionModel: model,
      vision: false,
      contextTokens: local.contextSize,
      timeoutMs: timeoutSet ? raw.LLM_TIMEOUT_MS : LOCAL_TIMEOUT_MS,
      ...common,
    };
  }
  const apiKey = raw.LLM_API_KEY ?? raw.OPENAI_API_KEY;
  const baseUrl = raw.LLM_BASE_URL ?? raw.OPENAI_BASE_URL;
  if (!raw.LLM_MODEL || (!apiKey && !baseUrl)) return null;
  return {
    provider,
    baseUrl: baseUrl ?? DEFAULT_LLM_BASE_URL,
    apiKey,
    model: raw.LLM_MODEL,
    visionModel: raw.LLM_VISION_MODEL ?? raw.LLM_MODEL,
    vision: true,
    timeoutMs: raw.LLM_TIMEOUT_MS,
    ...common,
  };
}
