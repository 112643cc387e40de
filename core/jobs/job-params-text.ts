import { z } from 'zod';
import { JOB_DEFAULTS } from './job-defaults';
import {
  chunkingFields,
  groundingFields,
  httpUrl,
  knownLanguage,
  refineChunking,
  refineGrounding,
  webhookConfig,
} from './job-fields';

/** Parameters of the job types over text: the transformer, sessions and the summaries (`core/jobs/job-params.ts`). */

export const TRANSFORMER_OPERATIONS = [
  'html-to-markdown',
  'extract-tables',
  'text',
  'template',
  'summarize',
  'blocks',
] as const;

/**
 * The transformer job type (spec §4.3): one operation and its input, with the options of the operation's endpoint
 * (api/routes/transformer.routes.ts, `/api/common/blocks`), typed as the operations read them; the endpoints bound
 * them further (lengths, language codes), the same fields sent to `/api/jobs/` are taken as they come, as before.
 */
export const transformerParams = z
  .object({
    operation: z.enum(TRANSFORMER_OPERATIONS),
    html: z.string().max(10_000_000).optional(),
    text: z.string().max(1_000_000).optional(),
    /** `text`, `blocks`; `template`: the language of the template's variant and of the answer. */
    source_language: z.string().optional(),
    target_language: z.string().optional(),
    /** `template`: a named template (templates/) or its source inline, exactly one. */
    template: z.string().optional(),
    template_content: z.string().optional(),
    additional_field_descriptions: z.record(z.string(), z.string()).optional(),
    context: z.record(z.string(), z.unknown()).optional(),
    /** `template`: the values checked against the text (contract §14). */
    ...groundingFields,
    /** `summarize`: at most this many characters (default 1000). */
    max_length: z.number().optional(),
    /** `blocks`: the page's blocks, each a type and its content (a text or a list of them). */
    blocks: z.array(z.object({ type: z.string(), content: z.unknown() })).optional(),
    use_cache: z.boolean().optional(),
    webhook: webhookConfig.optional(),
  })
  .superRefine((p, ctx) => {
    if ((p.operation === 'html-to-markdown' || p.operation === 'extract-tables') && typeof p.html !== 'string') {
      ctx.addIssue({ code: 'custom', path: ['html'], message: `html is required for ${p.operation}` });
    }
    if (['text', 'template', 'summarize'].includes(p.operation) && typeof p.text !== 'string') {
      ctx.addIssue({ code: 'custom', path: ['text'], message: `text is required for ${p.operation}` });
    }
    if (p.operation === 'template' && (typeof p.template === 'string') === (typeof p.template_content === 'string')) {
      ctx.addIssue({
        code: 'custom',
        path: ['template'],
        message: 'give exactly one of template and template_content',
      });
    }
    if (p.grounding !== undefined && p.operation !== 'template')
      ctx.addIssue({ code: 'custom', path: ['grounding'], message: `not offered by ${p.operation}` });
    refineGrounding(p, ctx, { translatesValues: true });
    if (p.operation === 'blocks' && !Array.isArray(p.blocks)) {
      ctx.addIssue({ code: 'custom', path: ['blocks'], message: 'blocks is required for blocks' });
    }
  });

/** An optional URL: absent, null and '' all mean none (clients send empty fields). */
const optionalUrl = z.preprocess((v) => (v === '' || v === null ? undefined : v), httpUrl.optional());
const name = z
  .string({ error: (i) => (i.input === undefined ? 'required' : 'a string') })
  .trim()
  .min(1, 'required')
  .max(500);
const optionalText = z.preprocess((v) => (v === null ? undefined : v), z.string().max(200).optional());
const stringList = z.preprocess(
  (v) => (v === null ? undefined : typeof v === 'string' ? (v ? [v] : []) : v),
  z.array(z.string().max(2000)).max(200).optional(),
);
const session = JOB_DEFAULTS.session;

/**
 * The session job type (spec §4.6, contract §8): `event`, `session`, `url`, `filename` and `track` are required
 * (each missing one is an issue of its own); URLs are absolute http(s); languages known ISO 639-1 codes.
 */
export const sessionFields = z.object({
  event: name,
  session: name,
  url: httpUrl,
  filename: name,
  track: name,
  day: optionalText,
  starttime: optionalText,
  endtime: optionalText,
  speakers: stringList,
  speakers_url: stringList,
  speakers_image_url: stringList,
  video_url: optionalUrl,
  attachments_url: optionalUrl,
  source_language: knownLanguage.optional().default(session.source_language),
  target_language: knownLanguage.optional().default(session.target_language),
  template: z.string().max(200).optional().default(session.template),
  create_archive: z.boolean().optional().default(session.create_archive),
  use_cache: z.boolean().optional(),
  webhook: webhookConfig.optional(),
});

/**
 * The session job's parameters: the session's fields, `data.chunks[]` of its Markdown and `grounding` of its template
 * (contract §14). The legacy event-job routes take {@link sessionFields} alone (grounding there is a 400 naming it).
 */
export const sessionParams = sessionFields.extend({ ...chunkingFields, ...groundingFields }).superRefine((p, ctx) => {
  refineChunking(p, ctx);
  refineGrounding(p, ctx);
  // The refinement sees the languages with their defaults applied (absent: en into de), so refineGrounding's own
  // language check, whose message says "or absent", is not asked for: this one says what absent means for a session.
  if (p.grounding === true && p.target_language !== p.source_language)
    ctx.addIssue({
      code: 'custom',
      path: ['grounding'],
      message:
        `grounding checks values against the text: target_language must be the source_language ` +
        `(${p.source_language}); a session's target_language is ${session.target_language} when absent`,
    });
});

/**
 * The internal summary jobs over the session store (`track_summary`, `event_summary`, `story`; spec §4.5, §4.8,
 * §4.9), built by their routes: what is summarised (`track` and `mode`, `event`, or `topic` for `target_group`), the
 * answer's template and language, and `chunk_chars`, the most text one model call takes.
 */
export const summaryParams = z.object({
  track: z.string().optional(),
  mode: z.enum(['summary', 'summarize_all']).optional(),
  event: z.string().optional(),
  topic: z.string().optional(),
  target_group: z.string().optional(),
  template: z.string().optional(),
  target_language: z.string().optional(),
  chunk_chars: z.number().int().positive(),
});
