import { z } from 'zod';
import { pageRange } from './page-range';

/** Parameters of the job types, shared by the API (validation at creation) and the pipelines. */

const isHttpUrl = (u: string): boolean => {
  try {
    return ['http:', 'https:'].includes(new URL(u).protocol);
  } catch {
    return false;
  }
};
/** An absolute http(s) URL (session pages, videos, attachments). */
const httpUrl = z
  .string({ error: (i) => (i.input === undefined ? 'required' : 'a string') })
  .max(4096)
  .refine(isHttpUrl, 'an absolute http or https URL');

export const webhookConfig = z.object({
  url: z.string().url().max(2048),
  token: z.string().max(1024).optional(),
  jobId: z.string().max(256).optional(),
});

export const TRANSFORMER_OPERATIONS = [
  'html-to-markdown',
  'extract-tables',
  'text',
  'template',
  'summarize',
  'blocks',
] as const;

export const transformerParams = z
  .object({
    operation: z.enum(TRANSFORMER_OPERATIONS),
    html: z.string().max(10_000_000).optional(),
    text: z.string().max(1_000_000).optional(),
    use_cache: z.boolean().optional(),
    webhook: webhookConfig.optional(),
  })
  .passthrough()
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
    if (p.operation === 'blocks' && !Array.isArray(p.blocks)) {
      ctx.addIssue({ code: 'custom', path: ['blocks'], message: 'blocks is required for blocks' });
    }
  });

/**
 * Set on jobs whose input is the upload of one synchronous request (`file_key`): the upload is removed when the job
 * finishes, also when the request gave up waiting (504) and the job went on without it.
 */
export const DISCARD_UPLOAD = 'discard_upload';

/** The upload a finished job should remove, if it has one. */
export function uploadToDiscard(p: Record<string, unknown> | undefined): string | null {
  return p && p[DISCARD_UPLOAD] === true && typeof p.file_key === 'string' && p.file_key.startsWith('uploads/')
    ? p.file_key
    : null;
}

/** The page range rule (`core/page-range.ts`) as a zod refinement: its issue, if any, joins the others. */
export function refinePageRange(p: { page_start?: unknown; page_end?: unknown }, ctx: z.RefinementCtx): void {
  const r = pageRange(p);
  if (!r.ok) ctx.addIssue({ code: 'custom', path: [r.issue.path], message: r.issue.message });
}

export const pdfParams = z
  .object({
    /** A path inside INPUT_ROOTS (`/api/pdf/job`), or an uploaded file's blob key (`/api/pdf/process`). */
    filename: z.string().min(1).max(4096).optional(),
    file_key: z
      .string()
      .regex(/^uploads\/[A-Za-z0-9._\/-]+$/)
      .optional(),
    /** An http(s) URL the job downloads (SSRF-guarded, at most MAX_UPLOAD_MB). */
    url: httpUrl.optional(),
    original_name: z.string().max(500).optional(),
    extraction_method: z.enum(['native', 'local_ocr', 'vision_llm', 'combined']).optional(),
    template: z.string().max(200).optional(),
    context: z.record(z.string(), z.unknown()).optional(),
    use_cache: z.boolean().optional(),
    includeImages: z.boolean().optional(),
    page_start: z.number().int().min(1).optional(),
    page_end: z.number().int().min(1).optional(),
    source_language: z
      .string()
      .regex(/^[a-z]{2}$/)
      .optional(),
    ocr_language: z.string().max(100).optional(),
    webhook: webhookConfig.optional(),
  })
  .passthrough()
  .superRefine((p, ctx) => {
    refineOneInput(p, ctx);
    refinePageRange(p, ctx);
  });

/** ISO 639-1 code, or `auto` (source only) to let the speech engine detect the language. */
const audioLanguage = z.string().regex(/^([a-z]{2}|auto)$/, 'an ISO 639-1 code such as de or en, or auto');

/** A job's input file: a path inside INPUT_ROOTS (`/api/jobs/`) or an upload's blob key (a synchronous route). */
const inputFile = {
  filename: z.string().min(1).max(4096).optional(),
  file_key: z
    .string()
    .regex(/^uploads\/[A-Za-z0-9._\/-]+$/)
    .optional(),
  original_name: z.string().max(500).optional(),
};

/** Exactly one input: an upload (`file_key`), a path inside INPUT_ROOTS (`filename`) or an http(s) `url`. */
function refineOneInput(p: { filename?: unknown; file_key?: unknown; url?: unknown }, ctx: z.RefinementCtx): void {
  const given = [p.filename, p.file_key, p.url].filter((v) => v !== undefined).length;
  if (given === 0) ctx.addIssue({ code: 'custom', path: ['filename'], message: 'filename is required (or a url)' });
  if (given > 1)
    ctx.addIssue({ code: 'custom', path: ['url'], message: 'give exactly one of filename, an uploaded file and url' });
}

/** What a transcription takes (audio and video jobs): languages, template, cache use and the webhook. */
const transcriptionFields = {
  source_language: audioLanguage.optional().default('de'),
  target_language: z
    .string()
    .regex(/^[a-z]{2}$/, 'an ISO 639-1 code such as de or en')
    .optional()
    .default('de'),
  template: z.string().max(200).optional(),
  use_cache: z.boolean().optional(),
  webhook: webhookConfig.optional(),
};

/** The audio job type (spec §4.11): an upload (`/api/audio/process`) or a file inside INPUT_ROOTS (`/api/jobs/`). */
export const audioParams = z
  .object({ ...inputFile, url: httpUrl.optional(), ...transcriptionFields })
  .passthrough()
  .superRefine(refineOneInput);

/**
 * The video job type (spec §4.7): a file (an upload or a path inside INPUT_ROOTS) or an http(s) `url`, downloaded by
 * the job (SSRF-guarded); with `hosted`, the URL is a page of a video platform, downloaded with yt-dlp.
 */
export const videoParams = z
  .object({
    ...inputFile,
    url: z
      .string()
      .url()
      .max(4096)
      .refine((u) => /^https?:\/\//i.test(u), 'an http or https URL')
      .optional(),
    hosted: z.boolean().optional(),
    ...transcriptionFields,
  })
  .passthrough()
  .superRefine((p, ctx) => {
    if ([p.filename, p.file_key, p.url].filter((v) => v !== undefined).length !== 1) {
      ctx.addIssue({ code: 'custom', path: ['filename'], message: 'give exactly one of filename and url' });
    }
    if (p.hosted && p.url === undefined)
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'url is required with hosted' });
  });

/** The internal `video_frames` job (`/api/video/frames`): an upload and a frame request checked by the route. */
export const videoFramesParams = z
  .object({
    file_key: z.string().regex(/^uploads\/[A-Za-z0-9._\/-]+$/),
    file_sha256: z.string().optional(),
    timestamps: z.array(z.number().finite().nonnegative()),
    interval: z.number().finite().positive().nullable(),
  })
  .passthrough();

/** Whether `u` parses as an absolute http(s) URL. */
/** An optional URL: absent, null and '' all mean none (clients send empty fields). */
const optionalUrl = z.preprocess((v) => (v === '' || v === null ? undefined : v), httpUrl.optional());
/** An ISO 639-1 code the runtime knows a name for (`xx` is refused). */
export const knownLanguage = z.string().refine((c) => {
  if (!/^[a-z]{2}$/.test(c)) return false;
  try {
    return new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' }).of(c) !== undefined;
  } catch {
    return false;
  }
}, 'a known ISO 639-1 language code such as de or en');
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

/**
 * The session job type (spec §4.6, contract §8): `event`, `session`, `url`, `filename` and `track` are required
 * (each missing one is an issue of its own); URLs are absolute http(s); languages known ISO 639-1 codes.
 */
export const sessionParams = z
  .object({
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
    source_language: knownLanguage.optional().default('en'),
    target_language: knownLanguage.optional().default('de'),
    template: z.string().max(200).optional().default('Session'),
    create_archive: z.boolean().optional().default(false),
    use_cache: z.boolean().optional(),
    webhook: webhookConfig.optional(),
  })
  .passthrough();
export type SessionParams = z.infer<typeof sessionParams>;

export const jobParamsByType = {
  transformer: transformerParams,
  pdf: pdfParams,
  session: sessionParams,
  audio: audioParams,
  video: videoParams,
} as const;

/** Strings longer than this are kept out of workflow history (the full parameters go to the blob store). */
export const INLINE_PARAMS_BYTES = 32 * 1024;

/** A copy for history and listings: long strings replaced by a note of their length. */
export function summariseParameters(p: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) {
    if (typeof v === 'string' && v.length > 1024) out[k] = `[${v.length} characters]`;
    else if (v && typeof v === 'object' && !Array.isArray(v))
      out[k] = summariseParameters(v as Record<string, unknown>);
    else out[k] = v;
  }
  return out;
}

/** Removes the webhook token from parameters shown to clients and operators. */
export function redactParameters(p: Record<string, unknown>): Record<string, unknown> {
  const w = p.webhook as Record<string, unknown> | undefined;
  if (!w || typeof w !== 'object' || !('token' in w)) return p;
  return { ...p, webhook: { ...w, token: '[redacted]' } };
}
