import { EXTRACTION_METHODS, JOB_DEFAULTS } from '../../core/jobs/job-defaults';
import { refinePageRange } from '../../core/jobs/job-params';
import { outputFormat } from '../../core/jobs/job-params-media';
import { z } from '../openapi';
import { uploadedFile } from '../uploads';
import { formBool, formInt, httpUrl } from './form';
import { webhookSchema } from './jobs.schemas';

/** Schemas of the /api/pdf routes (spec §4.2): PDF text, PDF jobs and external OCR. */

/** POST /api/pdf/process (multipart). */
export const processBody = z
  .object({
    file: uploadedFile.optional(),
    url: httpUrl.optional().openapi({
      description:
        'Instead of a file: downloaded by the job (at most MAX_UPLOAD_MB); private and loopback addresses are refused ' +
        'unless allowed',
    }),
    extraction_method: z.enum(EXTRACTION_METHODS).optional().default(JOB_DEFAULTS.pdf.extraction_method),
    output_format: outputFormat.optional().openapi({
      description: '`markdown` adds `data.markdown` and per page `markdown` and `quality` (default `text`)',
    }),
    template: z.string().max(200).optional(),
    context: z.preprocess(
      (v) => {
        if (v === undefined || v === '') return {};
        try {
          return typeof v === 'string' ? JSON.parse(v) : v;
        } catch {
          return v;
        }
      },
      z.record(z.string(), z.unknown()),
    ),
    useCache: formBool(true),
    includeImages: formBool(false),
    page_start: formInt(1, 100_000),
    page_end: formInt(1, 100_000),
    source_language: z
      .string()
      .regex(/^[a-z]{2}$/)
      .optional(),
    ocr_language: z.string().max(100).optional(),
  })
  .superRefine(refinePageRange);

/** POST /api/pdf/job (JSON). */
export const jobBody = z.object({
  filename: z.string().min(1).max(4096),
  extraction_method: z.enum(EXTRACTION_METHODS).optional(),
  output_format: outputFormat.optional(),
  template: z.string().max(200).optional(),
  use_cache: z.boolean().optional(),
  page_start: z.number().int().min(1).optional(),
  page_end: z.number().int().min(1).optional(),
  webhook: webhookSchema.optional(),
});

export const textContent = z.object({
  page: z.number().int(),
  text: z.string(),
  method: z.string(),
  markdown: z.string().optional().openapi({ description: 'With output_format=markdown: the page as Markdown' }),
  quality: z
    .object({ score: z.number(), signals: z.record(z.string(), z.number()), reason: z.string().optional() })
    .optional()
    .openapi({ description: 'With output_format=markdown: how trustworthy the page text is (0..1) and why' }),
});

/** `data` of POST /api/pdf/process (spec §4.2). */
export const pdfProcessResult = z.object({
  extracted_text: z.string(),
  markdown: z.string().optional().openapi({ description: 'With output_format=markdown: the whole document' }),
  metadata: z.object({
    page_count: z.number().int(),
    author: z.string(),
    title: z.string(),
    text_contents: z.array(textContent),
    image_paths: z.array(z.string()),
  }),
  images_archive_filename: z.string().nullable(),
  images_archive_data: z.string().nullable(),
});

/** POST /api/pdf/process-external-ocr (multipart). */
export const externalOcrBody = z.object({
  file: uploadedFile,
  page_start: formInt(1, 100_000),
  page_end: formInt(1, 100_000),
  includeImages: formBool(true),
  includePageImages: formBool(true),
  useCache: formBool(true),
  /** The same as `useCache` (the other endpoints' spelling); either one false bypasses the cache. */
  use_cache: formBool(true),
  callback_url: z.string().url().max(2048).optional(),
  callback_token: z.string().max(1024).optional(),
  jobId: z.string().max(256).optional(),
  wait_ms: formInt(0, 300_000),
});

const ocrImage = z
  .object({
    id: z.string(),
    image_base64: z.string().nullable().optional(),
    top_left_x: z.number().int().nullable(),
    top_left_y: z.number().int().nullable(),
    bottom_right_x: z.number().int().nullable(),
    bottom_right_y: z.number().int().nullable(),
  })
  .passthrough();

/** `data` of POST /api/pdf/process-external-ocr (spec §4.2): the provider's Markdown per page and the page renders. */
export const externalOcrResult = z
  .object({
    extracted_text: z.string().openapi({ description: 'Page-separated Markdown' }),
    metadata: z
      .object({
        page_count: z.number().int(),
        file_name: z.string(),
        file_size: z.number().int(),
        extraction_method: z.string(),
      })
      .passthrough(),
    external_ocr_raw: z
      .object({
        pages: z.array(
          z.object({ index: z.number().int(), markdown: z.string(), images: z.array(ocrImage) }).passthrough(),
        ),
        model: z.string().optional(),
        usage_info: z
          .object({ pages_processed: z.number().int(), doc_size_bytes: z.number().int().nullable() })
          .passthrough()
          .optional(),
      })
      .passthrough(),
    pages_archive_filename: z.string().nullable(),
    pages_archive_data: z.string().nullable().openapi({ description: 'Base64 ZIP of the page renders' }),
    images_archive_filename: z.null(),
    images_archive_data: z.null(),
  })
  .openapi('ExternalOcrResult');
