import { z } from 'zod';
import { DOCUMENT_METHODS, EXTRACTION_METHODS, JOB_DEFAULTS, OUTPUT_FORMATS, TABLE_FORMATS } from './job-defaults';
import {
  chunkingFields,
  groundingFields,
  httpUrl,
  inputFile,
  refineChunking,
  refineGrounding,
  refineOneInput,
  refinePageRange,
  uploadKey,
  webhookConfig,
  webUrl,
} from './job-fields';

/** Parameters of the job types that read a file: PDFs, images, recordings and videos (`core/jobs/job-params.ts`). */

const pageStart = z.number().int().min(1).optional();
const pageEnd = z.number().int().min(1).optional();

/** `text` or `markdown`; anything else is a 400 that names the value. */
export const outputFormat = z.enum(OUTPUT_FORMATS, {
  error: (issue) => `unknown output_format ${JSON.stringify(issue.input)}: use ${OUTPUT_FORMATS.join(' or ')}`,
});

/** `auto` or `gfm`; anything else is a 400 that names the value. */
export const tableFormat = z.enum(TABLE_FORMATS, {
  error: (issue) => `unknown table_format ${JSON.stringify(issue.input)}: use ${TABLE_FORMATS.join(' or ')}`,
});

/**
 * What the job types that read a file's text take alike (the pdf and document jobs): the input (an upload, a path
 * inside INPUT_ROOTS or an http(s) `url`), the output format, the template with its context, the cache, page images,
 * the parts to read and the OCR languages, and the webhook. Each type extends it with its methods.
 */
const fileTextFields = {
  filename: inputFile.filename,
  file_key: inputFile.file_key,
  /** An http(s) URL the job downloads (SSRF-guarded, at most MAX_UPLOAD_MB). */
  url: httpUrl.optional(),
  original_name: inputFile.original_name,
  /** `markdown` adds `data.markdown` and each part's `markdown` (and a PDF page's `quality`: contract §9). */
  output_format: outputFormat.optional(),
  /** With `markdown`: tables whose cells span as HTML (`auto`, the default) or as GFM (`gfm`): contract §13. */
  table_format: tableFormat.optional(),
  template: z.string().max(200).optional(),
  context: z.record(z.string(), z.unknown()).optional(),
  use_cache: z.boolean().optional(),
  includeImages: z.boolean().optional(),
  /** The parts to read, 1-based: a PDF's pages; a document's pages, slides, sheets or chapters. */
  page_start: pageStart,
  page_end: pageEnd,
  /** OCR languages: of a PDF's scanned pages, of an image, of a rendered document read with OCR. */
  ocr_language: z.string().max(100).optional(),
  webhook: webhookConfig.optional(),
  /** `data.chunks[]` of the Markdown (or the text) with headings, pages and boxes (contract §14). */
  ...chunkingFields,
  /** The template's values checked against the text, with their pages and boxes (contract §14). */
  ...groundingFields,
};

/** The pdf job type (spec §4.2): an upload (`/api/pdf/process`), a path inside INPUT_ROOTS or an http(s) `url`. */
export const pdfParams = z
  .object({
    ...fileTextFields,
    extraction_method: z.enum(EXTRACTION_METHODS).optional(),
    source_language: z
      .string()
      .regex(/^[a-z]{2}$/)
      .optional(),
    /** Internal: the format a document job routed here was detected as (contract §12), in the result cache's key. */
    document_format: z.string().max(20).optional(),
  })
  .superRefine((p, ctx) => {
    refineOneInput(p, ctx);
    refinePageRange(p, ctx);
    refineChunking(p, ctx);
    refineGrounding(p, ctx);
  });

/**
 * The document job type (contract §12): any format of `domain/documents` by content, from an upload
 * (`/api/document/process`), a path inside INPUT_ROOTS or an http(s) `url`. Strict: an option it does not take is a
 * 400 naming it, never ignored.
 */
export const documentParams = z
  .strictObject({
    ...fileTextFields,
    extraction_method: z
      .enum(DOCUMENT_METHODS, {
        error: (i) => `unknown extraction_method ${JSON.stringify(i.input)}: use ${DOCUMENT_METHODS.join(' or ')}`,
      })
      .optional(),
    /** With `render`: how the rendered PDF is read (the PDF endpoint's methods). */
    render_method: z.enum(EXTRACTION_METHODS).optional(),
  })
  .superRefine((p, ctx) => {
    refineOneInput(p, ctx);
    refinePageRange(p, ctx);
    refineChunking(p, ctx);
    refineGrounding(p, ctx);
    if (p.render_method !== undefined && p.render_method !== 'native' && p.extraction_method !== 'render')
      ctx.addIssue({
        code: 'custom',
        path: ['render_method'],
        message: 'render_method needs extraction_method=render',
      });
  });

/** The internal `external_ocr` job (`/api/pdf/process-external-ocr`): an upload, built by the route. */
export const externalOcrParams = z.object({
  file_key: uploadKey,
  original_name: z.string().max(500).optional(),
  file_size: z.number().int().nonnegative().optional(),
  includeImages: z.boolean().optional(),
  includePageImages: z.boolean().optional(),
  use_cache: z.boolean().optional(),
  page_start: pageStart,
  page_end: pageEnd,
});

/**
 * The internal `imageocr` job (`/api/imageocr/*`, and a document job's image: workflows/pipelines/document.pipeline.ts):
 * an upload (`file_key`, `file_sha256`) or an http(s) `url`.
 */
export const imageOcrParams = z
  .object({
    file_key: uploadKey.optional(),
    file_sha256: z.string().optional(),
    url: webUrl.optional(),
    template: z.string().max(200).optional(),
    /** The values the template takes from the caller (a document job's `context`). */
    context: z.record(z.string(), z.unknown()).optional(),
    ocr_language: z.string().max(100).optional(),
    /** `markdown` adds `data.markdown` and `data.blocks` (contract §13: boxes in the image's pixels). */
    output_format: outputFormat.optional(),
    /** Read where `ocr_language` is absent (the pipeline and the cache key): no route sets it. */
    source_language: z.string().max(100).optional(),
    use_cache: z.boolean().optional(),
    /** `data.chunks[]` of the text (or the Markdown, with the blocks' boxes in pixels): contract §14. */
    ...chunkingFields,
  })
  .superRefine(refineChunking);

/** ISO 639-1 code, or `auto` (source only) to let the speech engine detect the language. */
const audioLanguage = z.string().regex(/^([a-z]{2}|auto)$/, 'an ISO 639-1 code such as de or en, or auto');

/** The most speakers `max_speakers` may allow. */
export const MAX_SPEAKERS = 20;

/** The subtitle formats a transcription can write (contract §9). */
export const SUBTITLE_FORMATS = ['srt', 'vtt'] as const;

/**
 * What a transcription takes (audio and video jobs): languages, template, cache use and the webhook; and beyond the
 * spec (contract §9): word timings, subtitles, voice activity detection and a prompt of names and terms. The options
 * beyond the spec are not recorded when absent (their defaults, core/jobs/job-defaults.ts, are assumed), so a job's
 * parameters read as before.
 */
const transcriptionFields = {
  source_language: audioLanguage.optional().default(JOB_DEFAULTS.transcription.source_language),
  /** `auto`: the spoken language, whatever it is (no translation). */
  target_language: audioLanguage.optional().default(JOB_DEFAULTS.transcription.target_language),
  template: z.string().max(200).optional(),
  /** The values the template takes from the caller (`/api/jobs/`; the endpoints have none). */
  context: z.record(z.string(), z.unknown()).optional(),
  use_cache: z.boolean().optional(),
  webhook: webhookConfig.optional(),
  word_timestamps: z.boolean().optional(),
  subtitles: z.enum(SUBTITLE_FORMATS).optional(),
  vad: z.boolean().optional(),
  prompt: z.string().max(1000).optional(),
  /** Speaker labels on segments and words (the local engine's speaker model; a hosted endpoint refuses it). */
  diarize: z.boolean().optional(),
  /** With `diarize`: at most this many speakers (default: as many as the voices differ). */
  max_speakers: z.number().int().min(1).max(MAX_SPEAKERS).optional(),
  /** Internal (`/api/audio/detect-language`): the language of the first 30 s of speech only, no transcript. */
  detect_language: z.boolean().optional(),
  /** `data.chunks[]` of the transcript with their times and speakers (contract §14). */
  ...chunkingFields,
  /** The template's values checked against the transcript, with their times (contract §14). */
  ...groundingFields,
};

/** The audio job type (spec §4.11): an upload (`/api/audio/process`) or a file inside INPUT_ROOTS (`/api/jobs/`). */
export const audioParams = z
  .object({ ...inputFile, url: httpUrl.optional(), ...transcriptionFields })
  .superRefine((p, ctx) => {
    refineOneInput(p, ctx);
    refineSpeakers(p, ctx);
    refineChunking(p, ctx);
    refineGrounding(p, ctx);
  });

/** `max_speakers` means something only with `diarize`: alone, it is refused rather than ignored. */
function refineSpeakers(p: { diarize?: boolean; max_speakers?: number }, ctx: z.RefinementCtx): void {
  if (p.max_speakers !== undefined && p.diarize !== true)
    ctx.addIssue({ code: 'custom', path: ['max_speakers'], message: 'max_speakers needs diarize=true' });
}

/**
 * The video job type (spec §4.7): a file (an upload or a path inside INPUT_ROOTS) or an http(s) `url`, downloaded by
 * the job (SSRF-guarded); with `hosted`, the URL is a page of a video platform, downloaded with yt-dlp.
 */
export const videoParams = z
  .object({ ...inputFile, url: webUrl.optional(), hosted: z.boolean().optional(), ...transcriptionFields })
  .superRefine((p, ctx) => {
    if ([p.filename, p.file_key, p.url].filter((v) => v !== undefined).length !== 1) {
      ctx.addIssue({ code: 'custom', path: ['filename'], message: 'give exactly one of filename and url' });
    }
    if (p.hosted && p.url === undefined)
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'url is required with hosted' });
    refineSpeakers(p, ctx);
    refineChunking(p, ctx);
    refineGrounding(p, ctx);
  });

/** The internal `video_frames` job (`/api/video/frames`): an upload and a frame request checked by the route. */
export const videoFramesParams = z.object({
  file_key: uploadKey,
  file_sha256: z.string().optional(),
  /** The upload's name, as the route records it (shown with the job's parameters). */
  original_name: inputFile.original_name,
  timestamps: z.array(z.number().finite().nonnegative()),
  interval: z.number().finite().positive().nullable(),
});
