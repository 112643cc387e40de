import { z } from 'zod';
import { documentChunkFields, jobGroundingFields } from './result-schemas-chunks';

// The result contract's document schemas (result-schemas.ts): job_type document, POST /api/document/process.

// --- Documents of other formats (contract §12) ---

/** One part of a document (a page, slide, sheet, chapter, message or attachment); `page` its 1-based index. */
export const documentTextContent = z.object({
  page: z.number().int(),
  part: z.enum(['page', 'slide', 'sheet', 'chapter', 'message', 'attachment', 'document']),
  name: z.string().optional().meta({ description: "The slide's title, the sheet's name, the attachment's file name" }),
  text: z.string(),
  markdown: z.string().optional().meta({ description: 'With output_format=markdown: the part as Markdown' }),
});

export const documentMetadataSchema = z.object({
  page_count: z.number().int().meta({ description: 'Pages, slides, sheets or chapters: the parts of the document' }),
  author: z.string(),
  title: z.string(),
  format: z.string().meta({ description: 'The format detected from the content (docx, csv, html, markdown...)' }),
  language: z.string().optional().meta({ description: 'As the document declares it' }),
  text_contents: z.array(documentTextContent),
  image_paths: z.array(z.string()),
});

/** `data` of POST /api/document/process: the PDF answer's shape with the document's format and parts. */
export const documentResultData = z.object({
  extracted_text: z.string(),
  markdown: z.string().optional().meta({ description: 'With output_format=markdown: the whole document' }),
  metadata: documentMetadataSchema,
  images_archive_filename: z.string().nullable(),
  images_archive_data: z.string().nullable(),
  ...documentChunkFields,
  ...jobGroundingFields,
});

export type DocumentResultData = z.infer<typeof documentResultData>;
