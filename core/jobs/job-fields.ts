import { z } from 'zod';
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
