import { z } from '../openapi';

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
      .object({ page_count: z.number().int(), file_name: z.string(), file_size: z.number().int(), extraction_method: z.string() })
      .passthrough(),
    external_ocr_raw: z
      .object({
        pages: z.array(z.object({ index: z.number().int(), markdown: z.string(), images: z.array(ocrImage) }).passthrough()),
        model: z.string().optional(),
        usage_info: z.object({ pages_processed: z.number().int(), doc_size_bytes: z.number().int().nullable() }).passthrough().optional(),
      })
      .passthrough(),
    pages_archive_filename: z.string().nullable(),
    pages_archive_data: z.string().nullable().openapi({ description: 'Base64 ZIP of the page renders' }),
    images_archive_filename: z.null(),
    images_archive_data: z.null(),
  })
  .openapi('ExternalOcrResult');
