import { DOCUMENT_METHODS, EXTRACTION_METHODS, JOB_DEFAULTS } from '../../core/jobs/job-defaults';
import { refinePageRange } from '../../core/jobs/job-params';
import { outputFormat, tableFormat } from '../../core/jobs/job-params-media';
import { jobResultDataByType } from '../../core/results/result-schemas';
import { z } from '../openapi';
import { uploadedFile } from '../uploads';
import { formBool, formInt, httpUrl } from './form';
import { webhookSchema } from './jobs.schemas';
import { chunkingOptions, groundingOption } from './chunks.schemas';

/** Schemas of POST /api/document/process (contract §12). */

/** A JSON object sent as a form field (`context`, `webhook`); an empty field is absent. */
const jsonField = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => {
    if (v === undefined || v === '') return undefined;
    try {
      return typeof v === 'string' ? JSON.parse(v) : v;
    } catch {
      return v;
    }
  }, schema.optional());

/** The form (multipart). Strict: a field this endpoint does not take is a 400 naming it, never ignored. */
export const documentProcessBody = z
  .strictObject({
    file: uploadedFile.optional(),
    url: httpUrl.optional().openapi({
      description:
        'Instead of a file: downloaded by the job (at most MAX_UPLOAD_MB); private and loopback addresses are refused ' +
        'unless allowed',
    }),
    extraction_method: z
      .enum(DOCUMENT_METHODS)
      .optional()
      .default(JOB_DEFAULTS.document.extraction_method)
      .openapi({
        description:
          "`native`: the file's own structure (headings, lists, tables, slides, sheets); `render`: LibreOffice's PDF " +
          'of it, read by the PDF path with `render_method`',
      }),
    render_method: z
      .enum(EXTRACTION_METHODS)
      .optional()
      .openapi({ description: 'With `render`: how the PDF is read (the PDF endpoint’s methods; default `native`)' }),
    output_format: outputFormat.optional().openapi({
      description: '`markdown` adds `data.markdown` and each part’s `markdown` (default `text`)',
    }),
    table_format: tableFormat.optional().openapi({
      description: 'With `markdown`: tables whose cells span as HTML tables (`auto`, the default) or GFM (`gfm`)',
    }),
    template: z.string().max(200).optional(),
    context: jsonField(z.record(z.string(), z.unknown())),
    useCache: formBool(true),
    includeImages: formBool(false),
    page_start: formInt(1, 100_000).openapi({ description: 'The first part read: page, slide, sheet or chapter' }),
    page_end: formInt(1, 100_000),
    ocr_language: z
      .string()
      .max(100)
      .optional()
      .openapi({ description: 'OCR languages of an image or of a rendered document read with OCR' }),
    webhook: jsonField(webhookSchema).openapi({
      description: 'A JSON object (`{"url": ..., "token": ...}`): the completion is posted there',
    }),
    ...chunkingOptions,
    ...groundingOption,
  })
  .superRefine(refinePageRange);

/** The answer: a document's result, or (a PDF or an image sent here) the PDF or image OCR endpoint's. */
export const documentProcessResult = jobResultDataByType.document;
