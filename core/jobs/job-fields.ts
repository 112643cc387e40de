import { z } from 'zod';
import { JOB_DEFAULTS, TOKENIZERS } from './job-defaults';
import { pageRange } from './page-range';

/** Fields and checks the job types' schemas share (`core/jobs/job-params-media.ts`, `core/jobs/job-params-text.ts`). */

const isHttpUrl = (u: string): boolean => {
  try {
    return ['http:', 'https:'].includes(new URL(u).protocol);
  } catch {
    return false;
  }
};
/** An absolute http(s) URL (session pages, videos, attachments). */
export const httpUrl = z
  .string({ error: (i) => (i.input === undefined ? 'required' : 'a string') })
  .max(4096)
  .refine(isHttpUrl, 'an absolute http or https URL');

/** An http(s) URL as the video and image routes check it (a URL parser's view, then the scheme). */
export const webUrl = z
  .string()
  .url()
  .max(4096)
  .refine((u) => /^https?:\/\//i.test(u), 'an http or https URL');

export const webhookConfig = z.object({
  url: z.string().url().max(2048),
  token: z.string().max(1024).optional(),
  jobId: z.string().max(256).optional(),
});

/** An upload's blob key. */
export const uploadKey = z.string().regex(/^uploads\/[A-Za-z0-9._\/-]+$/);

/** A job's input file: a path inside INPUT_ROOTS (`/api/jobs/`) or an upload's blob key (a synchronous route). */
export const inputFile = {
  filename: z.string().min(1).max(4096).optional(),
  file_key: uploadKey.optional(),
  original_name: z.string().max(500).optional(),
};

/** Exactly one input: an upload (`file_key`), a path inside INPUT_ROOTS (`filename`) or an http(s) `url`. */
export function refineOneInput(
  p: { filename?: unknown; file_key?: unknown; url?: unknown },
  ctx: z.RefinementCtx,
): void {
  const given = [p.filename, p.file_key, p.url].filter((v) => v !== undefined).length;
  if (given === 0) ctx.addIssue({ code: 'custom', path: ['filename'], message: 'filename is required (or a url)' });
  if (given > 1)
    ctx.addIssue({ code: 'custom', path: ['url'], message: 'give exactly one of filename, an uploaded file and url' });
}

/** The page range rule (`core/jobs/page-range.ts`) as a zod refinement: its issue, if any, joins the others. */
export function refinePageRange(p: { page_start?: unknown; page_end?: unknown }, ctx: z.RefinementCtx): void {
  const r = pageRange(p);
  if (!r.ok) ctx.addIssue({ code: 'custom', path: [r.issue.path], message: r.issue.message });
}

/** An ISO 639-1 code the runtime knows a name for (`xx` is refused). */
export const knownLanguage = z.string().refine((c) => {
  if (!/^[a-z]{2}$/.test(c)) return false;
  try {
    return new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' }).of(c) !== undefined;
  } catch {
    return false;
  }
}, 'a known ISO 639-1 language code such as de or en');

/** The largest chunk a client may ask for, and the smallest (contract §14). */
export const CHUNK_TOKENS_MAX = 8192;
export const CHUNK_TOKENS_MIN = 16;

/**
 * `chunking=true` and its options (contract §14), on the operations that offer them: `data.chunks[]` of at most
 * `chunk_max_tokens` tokens each, counted with `chunk_tokenizer`, `chunk_overlap_tokens` of the chunk before repeated.
 */
export const chunkingFields = {
  chunking: z.boolean().optional(),
  chunk_max_tokens: z.number().int().min(CHUNK_TOKENS_MIN).max(CHUNK_TOKENS_MAX).optional(),
  chunk_overlap_tokens: z
    .number()
    .int()
    .min(0)
    .max(CHUNK_TOKENS_MAX - 1)
    .optional(),
  chunk_tokenizer: z
    .enum(TOKENIZERS, {
      error: (i) => `unknown chunk_tokenizer ${JSON.stringify(i.input)}: use ${TOKENIZERS.join(' or ')}`,
    })
    .optional(),
};

/**
 * A chunk option without `chunking=true`, or an overlap not below the budget, is a 400 naming the field. A chunk
 * option at its default is no request at all: clients generated from the OpenAPI document send the defaults it
 * states with every call (openapi-python-client does), chunking or not.
 */
export function refineChunking(
  p: { chunking?: boolean; chunk_max_tokens?: number; chunk_overlap_tokens?: number; chunk_tokenizer?: string },
  ctx: z.RefinementCtx,
): void {
  if (p.chunking !== true)
    for (const k of ['chunk_max_tokens', 'chunk_overlap_tokens', 'chunk_tokenizer'] as const)
      if (p[k] !== undefined && p[k] !== JOB_DEFAULTS.chunks[k])
        ctx.addIssue({ code: 'custom', path: [k], message: `${k} needs chunking=true` });
  const max = p.chunk_max_tokens ?? JOB_DEFAULTS.chunks.chunk_max_tokens;
  if ((p.chunk_overlap_tokens ?? 0) >= max)
    ctx.addIssue({
      code: 'custom',
      path: ['chunk_overlap_tokens'],
      message: `chunk_overlap_tokens must be below chunk_max_tokens (${max})`,
    });
}

/**
 * The options beyond the spec (contract §9-§14) an operation either offers or refuses: sent to one that does not
 * declare them, each is a 400 naming it, never silently ignored (fields nobody defines stay ignored, as the spec's
 * clients send extra ones).
 */
export const CONTRACT_OPTIONS = [
  'output_format',
  'table_format',
  'chunking',
  'chunk_max_tokens',
  'chunk_overlap_tokens',
  'chunk_tokenizer',
  'grounding',
] as const;

/** The contract options in `raw` that `declared` (a schema's field names) does not hold, as validation issues. */
export function undeclaredOptions(
  raw: unknown,
  declared: ReadonlySet<string> | readonly string[],
  what: string,
): { path: string; message: string }[] {
  if (!raw || typeof raw !== 'object') return [];
  const has = (k: string) => (Array.isArray(declared) ? declared.includes(k) : (declared as Set<string>).has(k));
  return CONTRACT_OPTIONS.filter((k) => (raw as Record<string, unknown>)[k] !== undefined && !has(k)).map((k) => ({
    path: k,
    message: `not offered by ${what}`,
  }));
}

/**
 * `grounding=true` (contract §14) on the operations whose templates it checks: each value is looked for in the text
 * the template was filled from; `data.template_sources` says where, `data.unsupported_fields` which were not there.
 */
export const groundingFields = { grounding: z.boolean().optional() };

/**
 * Grounding needs a template, and values in the text's own language: with a `target_language` other than the
 * `source_language` (the transformer's template) the values would be translations, which no span of the text holds.
 */
export function refineGrounding(
  p: {
    grounding?: boolean;
    template?: string;
    template_content?: string;
    source_language?: string;
    target_language?: string;
  },
  ctx: z.RefinementCtx,
  opts: { translatesValues?: boolean } = {},
): void {
  if (p.grounding !== true) return;
  if (!p.template && p.template_content === undefined)
    ctx.addIssue({ code: 'custom', path: ['grounding'], message: 'grounding needs a template' });
  if (
    opts.translatesValues &&
    p.target_language !== undefined &&
    p.source_language !== undefined &&
    p.target_language !== p.source_language
  )
    ctx.addIssue({
      code: 'custom',
      path: ['grounding'],
      message: `grounding checks values against the text: target_language must be the source_language (${p.source_language}) or absent`,
    });
}
