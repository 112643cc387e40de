import { z } from 'zod';
import { groundingFields, jobGroundingFields, sessionChunkFields } from './result-schemas-chunks';

// The result contract's text schemas (result-schemas.ts): the transformer, sessions and the summaries over them.

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
    ...groundingFields,
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
  page_text: z.string().optional().meta({
    description: "With grounding=true: the session page's Markdown, which `part: page` sources' offsets are into",
  }),
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
  ...sessionChunkFields,
  /** With grounding=true (contract §14): each source in the part of the session's text it stands in. */
  ...jobGroundingFields,
});
export type SessionResultData = z.infer<typeof sessionResultData>;

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
