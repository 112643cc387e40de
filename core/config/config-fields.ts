import { z } from 'zod';

/** The value types of the configuration's variables (core/config/config.ts builds its schema from them). */

export const bool = (fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      const s = v.trim().toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(s)) return true;
      if (['0', 'false', 'no', 'off'].includes(s)) return false;
      ctx.addIssue({ code: 'custom', message: 'expected true or false' });
      return z.NEVER;
    });

export const int = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `expected an integer from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });

/** A number (fractions allowed) from `min` to `max`. */
export const decimal = (fallback: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback;
      const n = Number(v);
      if (!Number.isFinite(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `expected a number from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });

export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

export const httpUrl = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === '') return undefined;
    try {
      const u = new URL(v.trim());
      if (u.protocol === 'http:' || u.protocol === 'https:') return u.toString().replace(/\/+$/, '');
    } catch {
      // reported below
    }
    ctx.addIssue({ code: 'custom', message: 'expected an http(s) URL' });
    return z.NEVER;
  });

/** Price of one model per 1,000 tokens (any currency; `cost` values are in the same unit). */
export interface LlmPrice {
  input: number;
  output: number;
}
export type LlmPrices = Record<string, LlmPrice>;

const isPrice = (p: unknown): p is LlmPrice => {
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return false;
  const { input, output } = p as Record<string, unknown>;
  const ok = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n >= 0;
  return ok(input) && ok(output);
};

/** `LLM_PRICES`: a JSON object `{"<model>": {"input": <per 1k input tokens>, "output": <per 1k output tokens>}}`. */
export const llmPrices = z
  .string()
  .optional()
  .transform((v, ctx): LlmPrices => {
    if (v === undefined || v.trim() === '') return {};
    let data: unknown;
    try {
      data = JSON.parse(v);
    } catch {
      ctx.addIssue({
        code: 'custom',
        message: 'expected JSON: {"<model>": {"input": <price>, "output": <price>}} per 1k tokens',
      });
      return z.NEVER;
    }
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      ctx.addIssue({ code: 'custom', message: 'expected a JSON object keyed by model name' });
      return z.NEVER;
    }
    const prices: LlmPrices = {};
    for (const [model, price] of Object.entries(data)) {
      if (!isPrice(price)) {
        ctx.addIssue({
          code: 'custom',
          message: 'every model needs non-negative numbers "input" and "output" (per 1k tokens)',
        });
        return z.NEVER;
      }
      prices[model] = { input: price.input, output: price.output };
    }
    return prices;
  });
