import { z } from 'zod';
import { TOKENIZERS } from '../jobs/job-defaults';

// The result contract's chunk schemas (contract §14), in the results of the operations that offer `chunking=true`.

/** How the chunks were cut: the tokenizer and the budget asked for (or their defaults). */
export const chunkingSchema = z
  .object({
    tokenizer: z.enum(TOKENIZERS),
    max_tokens: z.number().int(),
    overlap_tokens: z.number().int(),
  })
  .meta({ id: 'Chunking', description: 'With chunking=true: how the chunks were cut' });

/** A chunk of a document's (or an image's) text, with its headings, pages and boxes. */
export const documentChunkSchema = z
  .object({
    index: z.number().int().nonnegative(),
    text: z.string().meta({
      description:
        "The chunk's Markdown: the text between char_start and char_end, with a long table's header or a code " +
        "block's fence repeated where it was cut",
    }),
    tokens: z.number().int().meta({ description: 'Tokens of text (at most chunking.max_tokens)' }),
    heading_path: z.array(z.string()).meta({ description: 'The headings the chunk stands under, outermost first' }),
    pages: z.array(z.number().int()).meta({ description: 'The pages (parts) its blocks come from' }),
    boxes: z
      .array(
        z.object({
          page: z.number().int(),
          bbox: z.tuple([z.number(), z.number(), z.number(), z.number()]),
        }),
      )
      .meta({ description: "Its blocks' boxes (contract §13: PDF points, an image's pixels); none without blocks" }),
    char_start: z.number().int().meta({ description: 'Offset into data.markdown (data.extracted_text without it)' }),
    char_end: z.number().int(),
  })
  .meta({ id: 'DocumentChunk' });

/** A chunk of a transcript, with its times, speakers and segments. */
export const mediaChunkSchema = z
  .object({
    index: z.number().int().nonnegative(),
    text: z.string(),
    tokens: z.number().int().meta({ description: 'Tokens of text (at most chunking.max_tokens)' }),
    start: z.number().meta({ description: 'Seconds' }),
    end: z.number().meta({ description: 'Seconds' }),
    speakers: z.array(z.string()).meta({ description: 'With diarize=true: the speakers, in order; else empty' }),
    segments: z.array(z.number().int()).meta({ description: 'Indexes of the segments it covers' }),
  })
  .meta({ id: 'MediaChunk' });

/**
 * A chunk of a session's Markdown: a document's chunk that names its session and track, with its seconds where its
 * words are the transcript's.
 */
export const sessionChunkSchema = documentChunkSchema
  .extend({
    session: z.string(),
    track: z.string(),
    start: z
      .number()
      .optional()
      .meta({
        description:
          "Seconds: when the chunk's words are the transcript's (its first and last words found in it, in order) and " +
          "the transcript's times are known; absent otherwise",
      }),
    end: z.number().optional().meta({ description: 'Seconds' }),
  })
  .meta({ id: 'SessionChunk', description: 'Offsets into data.output.markdown_content; no pages or boxes' });

/** The fields a session's result gains with chunking=true. */
export const sessionChunkFields = {
  chunks: z.array(sessionChunkSchema).optional().meta({ description: 'With chunking=true: the chunks, in order' }),
  chunking: chunkingSchema.optional(),
};

export type Chunking = z.infer<typeof chunkingSchema>;
export type TemplateSources = Record<string, z.infer<typeof templateSourceSchema> | null>;
/** What a job's result (PDF, document, audio, video) gains with a template and grounding=true. */
export type JobGrounding = {
  [K in keyof typeof jobGroundingFields]-?: NonNullable<z.infer<(typeof jobGroundingFields)[K]>>;
};
export type DocumentChunkData = z.infer<typeof documentChunkSchema>;
export type MediaChunkData = z.infer<typeof mediaChunkSchema>;

/** The fields a document's result gains with chunking=true. */
export const documentChunkFields = {
  chunks: z.array(documentChunkSchema).optional().meta({ description: 'With chunking=true: the chunks, in order' }),
  chunking: chunkingSchema.optional(),
};

/** The fields a transcription's result gains with chunking=true. */
export const mediaChunkFields = {
  chunks: z.array(mediaChunkSchema).optional().meta({ description: 'With chunking=true: the chunks, in order' }),
  chunking: chunkingSchema.optional(),
};

// ---- grounding ------------------------------------------------------------------------------------------------------

/** The parts of a session's text a source can stand in (data.output.page_text, video_transcript, attachments_text). */
export const SESSION_PARTS = ['page', 'transcript', 'attachments'] as const;
export type SessionPart = (typeof SESSION_PARTS)[number];

const spanFields = {
  text: z.string().meta({ description: 'The words of the source text the value came from' }),
  start: z.number().int().meta({
    description: "Offset into the text the template was filled from (sessions with `part`: into that part's text)",
  }),
  end: z.number().int().meta({ description: 'Offset (exclusive)' }),
  part: z
    .enum(SESSION_PARTS)
    .optional()
    .meta({
      description:
        'Sessions: the part the words stand in, whose text start and end are offsets into: page → ' +
        'data.output.page_text, transcript → data.output.video_transcript, attachments → data.output.attachments_text. ' +
        'Absent when the span is not inside one part (a list whose items stand in different parts: see its items); ' +
        'its offsets are then into the text the template was filled from',
    }),
  page: z.number().int().optional().meta({ description: 'Documents: the page (part) of the block holding them' }),
  bbox: z
    .tuple([z.number(), z.number(), z.number(), z.number()])
    .optional()
    .meta({ description: 'Documents with blocks: the box of the blocks holding them (contract §13)' }),
  start_s: z.number().optional().meta({
    description: "Media, and a session's transcript when its times are known: seconds, when their words were said",
  }),
  end_s: z.number().optional().meta({ description: 'Media: seconds' }),
};

/** Where a grounded field's value stands in the text the template was filled from (contract §14). */
export const templateSourceSchema = z
  .object({
    ...spanFields,
    items: z
      .array(z.object(spanFields).meta({ id: 'TemplateSourceItem' }))
      .optional()
      .meta({ description: "A list field: each kept item's source; the field's span runs from the first to the last" }),
  })
  .meta({ id: 'TemplateSource' });

/** The fields a template's result gains with grounding=true. */
export const groundingFields = {
  template_sources: z
    .record(z.string(), templateSourceSchema.nullable())
    .optional()
    .meta({ description: "With grounding=true: each field's source in the text, null for an empty field" }),
  unsupported_fields: z
    .array(z.string())
    .optional()
    .meta({ description: 'With grounding=true: the fields whose value the text does not hold (emptied)' }),
};

/** What a job's (PDF, document, audio, video) result gains with a template and grounding=true. */
export const jobGroundingFields = {
  template_fields: z
    .record(z.string(), z.unknown())
    .optional()
    .meta({ description: "With a template and grounding=true: the fields' values, as the template got them" }),
  ...groundingFields,
};
