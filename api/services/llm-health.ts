import type { Config } from '../../core/config/config';
import type { Check } from './health';

const TIMEOUT_MS = 2500;

/**
 * The language model's entry in the health report (`checks.providers.llm`): the provider and model; for the local
 * model server, its own health (model, context, slots, queue). Hosted endpoints are not called (that costs and needs
 * the key); `LLM_PROVIDER=none` or an endpoint without `LLM_MODEL` reads `unavailable`: model operations answer 503.
 */
export function llmHealth(config: Pick<Config, 'llm' | 'llmProvider'>): () => Promise<Record<string, Check>> {
  return async () => {
    const llm = config.llm;
    if (!llm) {
      const message =
        config.llmProvider === 'none'
          ? 'LLM_PROVIDER=none: operations that need a model answer 503'
          : 'no LLM_MODEL for the configured endpoint';
      return { llm: { status: 'unavailable', provider: config.llmProvider, message } };
    }
    if (llm.provider === 'openai') {
      return {
        llm: {
          status: 'ok',
          provider: 'openai',
          model: llm.model,
          vision_model: llm.visionModel,
          endpoint: new URL(llm.baseUrl).host,
        },
      };
    }
    const base = { provider: 'local', model: llm.model, endpoint: new URL(llm.baseUrl).host };
    const t0 = performance.now();
    try {
      const res = await fetch(new URL('/health', llm.baseUrl), { signal: AbortSignal.timeout(TIMEOUT_MS) });
      const body = (await res.json()) as Record<string, unknown>;
      const latency_ms = Math.round(performance.now() - t0);
      if (!res.ok)
        return {
          llm: { status: 'unavailable', ...base, message: `the local model server answered ${res.status}`, latency_ms },
        };
      const { context_size, slots, active, queued, queue_size } = body;
      return { llm: { status: 'ok', ...base, latency_ms, context_size, slots, active, queued, queue_size } };
    } catch (err) {
      const reason = err instanceof Error ? err.message.slice(0, 200) : 'unreachable';
      return { llm: { status: 'unavailable', ...base, message: `the local model server does not answer: ${reason}` } };
    }
  };
}
