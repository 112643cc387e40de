import { EXTRACTION_METHODS, JOB_DEFAULTS } from '../../core/jobs/job-defaults';
import { refinePageRange } from '../../core/jobs/job-params';
import { refineChunking, refineGrounding } from '../../core/jobs/job-fields';
import { outputFormat, tableFormat } from '../../core/jobs/job-params-media';
import { externalOcrResultData, pdfResultData } from '../../core/results/result-schemas-pdf';
import { z } from '../openapi';
import { uploadedFile } from '../uploads';
import { formBool, formInt, httpUrl } from './form';
import { webhookSchema } from './jobs.schemas';
import { chunkingOptions, groundingOption } from './chunks.schemas';

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
    table_format: tableFormat.optional().openapi({
      description: 'With `markdown`: tables whose cells span as HTML tables (`auto`, the default) or GFM (`gfm`)',
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
    ...chunkingOptions,
    ...groundingOption,
  })
  // The rules across fields here too: a small request is answered without a job (api/services/direct-pdf.ts).
  .superRefine((b, ctx) => {
    refinePageRange(b, ctx);
    refineChunking(b, ctx);
    refineGrounding(b, ctx);
  });

/** POST /api/pdf/job (JSON). */
export const jobBody = z.object({
  filename: z.string().min(1).max(4096),
  extraction_method: z.enum(EXTRACTION_METHODS).optional(),
  output_format: outputFormat.optional(),
  table_format: tableFormat.optional(),
  template: z.string().max(200).optional(),
  use_cache: z.boolean().optional(),
  page_start: z.number().int().min(1).optional(),
  page_end: z.number().int().min(1).optional(),
  webhook: webhookSchema.optional(),
  ...chunkingOptions,
  ...groundingOption,
});

/** `data` of POST /api/pdf/process (spec §4.2): the pdf job's result (core/results/result-schemas-pdf.ts). */
export const pdfProcessResult = pdfResultData;

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

/** `data` of POST /api/pdf/process-external-ocr (spec §4.2): the external_ocr job's result. */
export const externalOcrResult = externalOcrResultData;
