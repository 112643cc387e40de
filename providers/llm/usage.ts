import type { LlmPrices } from '../../core/config/config';
import type { ChatJsonOptions, LlmProvider, LlmUsage, LlmUsageSummary } from '../../domain/engines/llm';

/** Rounds away float noise (1e-10) without losing the small costs of small calls. */
const tidy = (n: number): number => Math.round(n * 1e10) / 1e10;

/** Cost of a call from `LLM_PRICES` (per 1k tokens); 0 when the model has no price. */
export function computeCost(prices: LlmPrices, model: string, promptTokens: number, completionTokens: number): number {
  const price = prices[model];
  if (!price) return 0;
  return tidy((promptTokens / 1000) * price.input + (completionTokens / 1000) * price.output);
}

/** Adds up the usages of several requests made for one call. */
export function addUsage(a: LlmUsage, b: Omit<LlmUsage, 'model' | 'purpose'>): LlmUsage {
  return {
    ...a,
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    tokens: a.tokens + b.tokens,
    cost: tidy(a.cost + b.cost),
    duration_ms: a.duration_ms + b.duration_ms,
  };
}

/**
 * Collects the usage of every LLM call made for one request or job, and gives the spec's usage record
 * (`{total_tokens, total_cost, requests}`). Not shared between jobs: create one per unit of work.
 */
export class UsageRecorder {
  private readonly list: LlmUsage[] = [];

  record(usage: LlmUsage): LlmUsage {
    this.list.push(usage);
    return usage;
  }

  get usages(): readonly LlmUsage[] {
    return this.list;
  }

  get empty(): boolean {
    return this.list.length === 0;
  }

  summary(): LlmUsageSummary {
    return {
      total_tokens: this.list.reduce((n, u) => n + u.tokens, 0),
      total_cost: tidy(this.list.reduce((n, u) => n + u.cost, 0)),
      requests: this.list.map((u) => ({
        model: u.model,
        purpose: u.purpose,
        tokens: u.tokens,
        duration_ms: u.duration_ms,
      })),
    };
  }

  /** A provider that records the usage of every successful call into this recorder. */
  wrap(provider: LlmProvider): LlmProvider {
    return {
      chatJson: async <T>(opts: ChatJsonOptions) => {
        const r = await provider.chatJson<T>(opts);
        this.record(r.usage);
        return r;
      },
      chatText: async (opts) => {
        const r = await provider.chatText(opts);
        this.record(r.usage);
        return r;
      },
      describe: () => provider.describe(),
    };
  }
}
