import { z } from 'zod';
import type { JobType } from '../jobs/job-params';

/**
 * The result contract: the schema of each job type's `data`, the object its synchronous endpoint answers, its
 * completion webhook carries and its results hold (with the job fields, `job-results.ts`), beside the job input
 * schemas (`job-params.ts`). The builders (`result-shapes.ts`) return these types; the routes' response schemas and
 * the OpenAPI document are built from these schemas (api/schemas/*), so a result shape is written once.
 *
 * Plain zod with `.meta()` (the descriptions, examples and component names the OpenAPI document shows): the core
 * does not depend on the OpenAPI extension.
 */

/** What a job's language model calls cost (`UsageRecorder.summary()`). */
export const llmInfoSchema = z
  .object({
    total_tokens: z.number().int(),
    total_cost: z.number(),
    requests: z.array(
      z.object({ model: z.string(), purpose: z.string(), tokens: z.number().int(), duration_ms: z.number().int() }),
    ),
  })
  .meta({ id: 'LlmInfo' });

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

/** `data` of POST /api/pdf/process. */
export const pdfResultData = z.object({
  extracted_text: z.string(),
  markdown: z.string().optional().meta({ description: 'With output_format=markdown: the whole document' }),
  metadata: pdfMetadataSchema,
  images_archive_filename: z.string().nullable(),
  images_archive_data: z.string().nullable(),
});

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
});

export type DocumentResultData = z.infer<typeof documentResultData>;

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

export const externalOcrMetadataSchema = z.object({
  page_count: z.number().int(),
  file_name: z.string(),
  file_size: z.number().int(),
  extraction_method: z.string(),
});

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

// --- Image OCR (spec §4.10) ---

export const imageOcrMetadataSchema = z.object({
  width: z.number().int(),
  height: z.number().int(),
  format: z.string(),
  dpi: z.number().int(),
  /** tesseract's mean word confidence (0..100). */
  confidence: z.number().int().optional(),
  /** Degrees the page was turned before recognition, when it was. */
  rotation: z.number().int().optional(),
});

/** `data` of POST /api/imageocr/process and /process-url. */
export const imageOcrResultData = z.object({ extracted_text: z.string(), metadata: imageOcrMetadataSchema });

// --- Audio and video (spec §4.7, §4.11) ---

export const audioWordSchema = z
  .object({
    word: z.string().meta({ description: 'With its leading space where the language writes one' }),
    start: z.number(),
    end: z.number(),
    probability: z.number().nullable().meta({ description: 'Null when the speech provider reports none' }),
    speaker: z.string().optional().meta({ description: 'With diarize=true', example: 'SPEAKER_1' }),
  })
  .meta({ id: 'AudioWord' });

export const audioSegmentSchema = z
  .object({
    id: z.number().int(),
    start: z.number(),
    end: z.number(),
    text: z.string(),
    words: z.array(audioWordSchema).optional().meta({ description: 'With word_timestamps=true' }),
    speaker: z
      .string()
      .optional()
      .meta({ description: 'With diarize=true: who speaks most of the segment', example: 'SPEAKER_1' }),
  })
  .meta({ id: 'AudioSegment' });

const subtitlesText = z.string().optional().meta({ description: "With subtitles=srt|vtt: the file's text" });
const seconds = z.number().meta({ description: 'Seconds' });

/**
 * `data` of POST /api/audio/process as the job writes it; `from_cache` is a job field of the results, added to the
 * answer's `data` by the route (see {@link audioProcessData}).
 */
export const audioResultData = z.object({
  duration: seconds,
  detected_language: z.string(),
  output_text: z.string().meta({ description: 'After the template and the translation' }),
  original_text: z.string().meta({ description: 'The transcript' }),
  translated_text: z.string().nullable().meta({ description: 'Null when the spoken language is the target' }),
  llm_model: z.string().nullable(),
  translation_model: z.string().nullable(),
  token_count: z.number().int(),
  segments: z.array(audioSegmentSchema),
  process_id: z.string(),
  process_dir: z.string(),
  subtitles: subtitlesText,
});

/** The `data` POST /api/audio/process answers: the job's, with `from_cache`. */
export const audioProcessData = audioResultData
  .omit({ subtitles: true })
  .extend({ from_cache: z.boolean(), subtitles: subtitlesText });

/** `data` of POST /api/audio/detect-language (an audio job with `detect_language`). */
export const detectLanguageResultData = z.object({
  language: z.string().meta({ description: 'ISO 639-1 code', example: 'de' }),
  language_probability: z
    .number()
    .nullable()
    .meta({ description: "The detector's confidence (0..1); null when the speech provider reports none" }),
  duration: z.number().meta({ description: 'Seconds of the whole recording' }),
  model: z.string(),
});

const transcription = z.string().meta({ description: 'After the template and the translation' });
const videoSegments = z
  .array(audioSegmentSchema)
  .optional()
  .meta({ description: 'With word_timestamps=true or diarize=true' });

/** `data` of POST /api/video/process. */
export const videoResultData = z.object({
  duration: seconds,
  transcription,
  segments: videoSegments,
  subtitles: subtitlesText,
  metadata: z.object({
    resolution: z.string().meta({ example: '1280x720' }),
    codec: z.string().meta({ example: 'h264' }),
    fps: z.number(),
  }),
});

/** `data` of POST /api/video/hosted: the platform's metadata and the transcription of the downloaded video. */
export const hostedVideoResultData = z.object({
  video_id: z.string(),
  title: z.string(),
  duration: seconds,
  transcription,
  segments: videoSegments,
  subtitles: subtitlesText,
  metadata: z.object({
    uploader: z.string().nullable(),
    views: z.number().int().nullable(),
    description: z.string().nullable(),
  }),
});

/** `data` of POST /api/video/frames: the frames in time order. */
export const videoFramesResultData = z.object({
  frames: z.array(
    z.object({
      timestamp: z.number().meta({ description: 'Seconds from the start' }),
      path: z.string().meta({
        description: 'Downloads the JPEG at `GET /api/event-job/files/{path}`',
        example: 'jobs/<job_id>/out/frames/frame-00001.jpg',
      }),
    }),
  ),
});

// --- Transformer (spec §4.3) ---

export const extractedTableSchema = z
  .object({ headers: z.array(z.string()), rows: z.array(z.array(z.string())) })
  .meta({ id: 'ExtractedTable' });

/** One block of `/api/common/blocks` after processing: its type and its content translated. */
const blockContent = z.union([z.string(), z.array(z.string())]);
export const processedBlockSchema = z.object({
  type: z.string(),
  content: blockContent,
  /** With a translation: the content as sent. */
  original_content: blockContent.optional(),
});

/** `data` of each transformer operation. */
export const transformerResultData = {
  text: z.object({
    original_text: z.string(),
    translated_text: z.string(),
    source_language: z.string(),
    target_language: z.string(),
  }),
  template: z.object({
    original_text: z.string(),
    transformed_text: z.string(),
    template_fields: z.record(z.string(), z.unknown()),
  }),
  summarize: z.object({ original_text: z.string(), summary: z.string() }),
  'html-to-markdown': z.object({ html: z.string(), markdown: z.string() }),
  'extract-tables': z.object({ tables: z.array(extractedTableSchema) }),
  blocks: z
    .object({ processed_blocks: z.array(processedBlockSchema), newsfeed_entry: z.string() })
    .meta({ id: 'BlocksResult' }),
} as const;
export type TransformerOperation = keyof typeof transformerResultData;
/** The `data` of transformer operation `O`. */
export type TransformerResult<O extends TransformerOperation = TransformerOperation> = z.infer<
  (typeof transformerResultData)[O]
>;

// --- Sessions (spec §4.6) ---

export const sessionOutputSchema = z.object({
  markdown_file: z.string().meta({
    description: 'Downloads at GET /api/event-job/files/{path}',
    example: 'jobs/<job_id>/out/sessions/FOSDEM_202026/de/Geospatial/open-maps.md',
  }),
  markdown_content: z.string(),
  attachments: z
    .array(z.string())
    .meta({ description: 'Page images of the attachments (PNG), each downloadable through the files route' }),
  video_transcript: z.string(),
  attachments_text: z.string(),
  target_dir: z.string().meta({ description: 'The folder of the Markdown file (GET on the files route lists it)' }),
  archive_file: z.string().nullable().meta({ description: 'ZIP of the Markdown and its assets, with create_archive' }),
  topic: z.string().meta({ description: 'From the filled template (frontmatter `topic`); empty when it has none' }),
  tags: z.array(z.string()),
});

/** `data` of POST /api/session/process (and of the completion webhook of /process-async). */
export const sessionResultData = z.object({
  input: z.record(z.string(), z.unknown()).meta({ description: 'The request as processed (with defaults)' }),
  output: sessionOutputSchema,
  markdown_file: z.string(),
  attachments: z.array(z.string()),
});

// --- Summaries over the session store (spec §4.5, §4.8, §4.9) ---

export const trackSummaryResultData = z
  .object({
    track_name: z.string(),
    summary: z.string(),
    sessions: z.array(z.object({ name: z.string(), summary: z.string() })),
    session_count: z.number().int(),
  })
  .meta({ id: 'TrackSummary' });

/** A track's summaries with `mode=summarize_all`: each session's. */
export const trackSummariesResultData = z
  .object({ track_name: z.string(), summaries: z.array(z.object({ session: z.string(), summary: z.string() })) })
  .meta({ id: 'TrackSummaries' });

export const eventSummaryResultData = z
  .object({
    event_name: z.string(),
    summary: z.string(),
    tracks: z.array(z.object({ name: z.string(), session_count: z.number().int(), summary: z.string() })),
    total_sessions: z.number().int(),
  })
  .meta({ id: 'EventSummary' });

export const storyResultData = z
  .object({
    topic: z.string(),
    target_group: z.string(),
    story: z.string(),
    sessions_used: z.array(z.object({ name: z.string(), contribution: z.string() })),
  })
  .meta({ id: 'Story' });

/**
 * Every job type with the schema of its `data` (the twin of `jobParamsByType`): where one job type answers more than
 * one endpoint (a transformer operation, a hosted video, language detection), the union of their shapes.
 */
export const jobResultDataByType = {
  pdf: pdfResultData,
  // A PDF or an image sent as a document answers as its own endpoint does (contract §12).
  document: z.union([documentResultData, pdfResultData, imageOcrResultData]),
  session: sessionResultData,
  transformer: z.union([
    transformerResultData.text,
    transformerResultData.template,
    transformerResultData.summarize,
    transformerResultData['html-to-markdown'],
    transformerResultData['extract-tables'],
    transformerResultData.blocks,
  ]),
  audio: z.union([audioResultData, detectLanguageResultData]),
  video: z.union([videoResultData, hostedVideoResultData]),
  imageocr: imageOcrResultData,
  external_ocr: externalOcrResultData,
  video_frames: videoFramesResultData,
  track_summary: z.union([trackSummaryResultData, trackSummariesResultData]),
  event_summary: eventSummaryResultData,
  story: storyResultData,
} as const satisfies Record<JobType, z.ZodType>;

/** The `data` of a job of type `T` (z.infer of the type's result schema). */
export type JobResultData<T extends JobType = JobType> = z.infer<(typeof jobResultDataByType)[T]>;
export type PdfResultData = z.infer<typeof pdfResultData>;
export type PdfMetadata = z.infer<typeof pdfMetadataSchema>;
export type PdfTextContent = z.infer<typeof pdfTextContent>;
export type ExternalOcrResultData = z.infer<typeof externalOcrResultData>;
export type ExternalOcrRawData = z.infer<typeof externalOcrRawSchema>;
export type ExternalOcrMetadata = z.infer<typeof externalOcrMetadataSchema>;
export type ImageOcrResultData = z.infer<typeof imageOcrResultData>;
export type ImageOcrMetadata = z.infer<typeof imageOcrMetadataSchema>;
export type AudioResultData = z.infer<typeof audioResultData>;
export type DetectLanguageResultData = z.infer<typeof detectLanguageResultData>;
export type VideoResultData = z.infer<typeof videoResultData>;
export type HostedVideoResultData = z.infer<typeof hostedVideoResultData>;
export type VideoFramesResultData = z.infer<typeof videoFramesResultData>;
export type SessionResultData = z.infer<typeof sessionResultData>;
export type LlmInfoData = z.infer<typeof llmInfoSchema>;
