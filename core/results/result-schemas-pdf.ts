import { z } from 'zod';
import { documentChunkFields, jobGroundingFields } from './result-schemas-chunks';

// The result contract's PDF schemas (result-schemas.ts): POST /api/pdf/process and /process-external-ocr.

// --- PDF (spec §4.2) ---

/** A block of a page and where it stands (contract §13). */
export const pageBlock = z
  .object({
    type: z.enum([
      'heading',
      'paragraph',
      'list_item',
      'table',
      'code',
      'caption',
      'footnote',
      'figure',
      'formula',
      'header',
      'footer',
    ]),
    text: z
      .string()
      .meta({ description: "Its Markdown (a running header's or footer's text: not in the page's Markdown)" }),
    bbox: z
      .tuple([z.number(), z.number(), z.number(), z.number()])
      .meta({ description: "[x0, y0, x1, y1] from the page's top-left: PDF points for PDF pages, pixels for images" }),
    level: z.number().int().min(1).max(6).optional().meta({ description: 'For headings' }),
    order: z.number().int().nonnegative().meta({ description: 'Its place on the page in reading order, from 0' }),
  })
  .meta({ id: 'PageBlock' });

export const pdfTextContent = z.object({
  page: z.number().int(),
  text: z.string(),
  method: z.string(),
  /** Degrees the page was turned before OCR, when it was. */
  rotation: z.number().int().optional(),
  markdown: z.string().optional().meta({ description: 'With output_format=markdown: the page as Markdown' }),
  quality: z
    .object({ score: z.number(), signals: z.record(z.string(), z.number()), reason: z.string().optional() })
    .optional()
    .meta({ description: 'With output_format=markdown: how trustworthy the page text is (0..1) and why' }),
  blocks: z
    .array(pageBlock)
    .optional()
    .meta({
      description:
        "With output_format=markdown: the page's blocks in reading order; the page's markdown is their text (running " +
        'headers and footers aside). A page a vision model read has none (no positions).',
    }),
});
export type PdfTextContent = z.infer<typeof pdfTextContent>;

export const pdfMetadataSchema = z.object({
  page_count: z.number().int(),
  author: z.string(),
  title: z.string(),
  format: z
    .string()
    .optional()
    .meta({ description: 'A document sent to /api/document/process and rendered to PDF: its detected format' }),
  text_contents: z.array(pdfTextContent),
  image_paths: z.array(z.string()),
});
export type PdfMetadata = z.infer<typeof pdfMetadataSchema>;

/** `data` of POST /api/pdf/process. */
export const pdfResultData = z.object({
  extracted_text: z.string(),
  markdown: z.string().optional().meta({ description: 'With output_format=markdown: the whole document' }),
  metadata: pdfMetadataSchema,
  images_archive_filename: z.string().nullable(),
  images_archive_data: z.string().nullable(),
  ...documentChunkFields,
  ...jobGroundingFields,
});
export type PdfResultData = z.infer<typeof pdfResultData>;

// --- External OCR (spec §4.2) ---

/** One picture the OCR found on a page; `image_base64` is a `data:` URL, null when images were not asked for. */
const externalOcrImage = z.object({
  id: z.string(),
  image_base64: z.string().nullable().optional(),
  top_left_x: z.number().int().nullable(),
  top_left_y: z.number().int().nullable(),
  bottom_right_x: z.number().int().nullable(),
  bottom_right_y: z.number().int().nullable(),
});

/** The provider's answer merged over its requests (Mistral OCR's wire format). */
export const externalOcrRawSchema = z.object({
  pages: z.array(
    z.object({
      index: z.number().int(),
      markdown: z.string(),
      images: z.array(externalOcrImage),
      /** The page's size as the provider rendered it, when it says. */
      dimensions: z.object({ dpi: z.number(), height: z.number(), width: z.number() }).nullable().optional(),
    }),
  ),
  model: z.string().optional(),
  usage_info: z.object({ pages_processed: z.number().int(), doc_size_bytes: z.number().int().nullable() }).optional(),
});
export type ExternalOcrRawData = z.infer<typeof externalOcrRawSchema>;

export const externalOcrMetadataSchema = z.object({
  page_count: z.number().int(),
  file_name: z.string(),
  file_size: z.number().int(),
  extraction_method: z.string(),
});
export type ExternalOcrMetadata = z.infer<typeof externalOcrMetadataSchema>;

/** `data` of POST /api/pdf/process-external-ocr: the provider's Markdown per page and the page renders. */
export const externalOcrResultData = z
  .object({
    extracted_text: z.string().meta({ description: 'Page-separated Markdown' }),
    metadata: externalOcrMetadataSchema,
    external_ocr_raw: externalOcrRawSchema,
    pages_archive_filename: z.string().nullable(),
    pages_archive_data: z.string().nullable().meta({ description: 'Base64 ZIP of the page renders' }),
    images_archive_filename: z.null(),
    images_archive_data: z.null(),
  })
  .meta({ id: 'ExternalOcrResult' });
export type ExternalOcrResultData = z.infer<typeof externalOcrResultData>;
