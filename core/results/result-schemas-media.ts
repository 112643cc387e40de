import { z } from 'zod';
import { pageBlock } from './result-schemas-pdf';
import { documentChunkFields, jobGroundingFields, mediaChunkFields } from './result-schemas-chunks';

// The result contract's media schemas (result-schemas.ts): image OCR, audio and video.

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
export type ImageOcrMetadata = z.infer<typeof imageOcrMetadataSchema>;

/** `data` of POST /api/imageocr/process and /process-url. */
export const imageOcrResultData = z.object({
  extracted_text: z.string(),
  metadata: imageOcrMetadataSchema,
  markdown: z.string().optional().meta({ description: 'With output_format=markdown: the image as Markdown' }),
  blocks: z
    .array(pageBlock)
    .optional()
    .meta({
      description:
        "With output_format=markdown: the image's blocks in reading order, boxes in the image's pixels (after the " +
        'rotation, when metadata.rotation is set); markdown is their text.',
    }),
  ...documentChunkFields,
});
export type ImageOcrResultData = z.infer<typeof imageOcrResultData>;

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
  ...mediaChunkFields,
  ...jobGroundingFields,
});
export type AudioResultData = z.infer<typeof audioResultData>;

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
export type DetectLanguageResultData = z.infer<typeof detectLanguageResultData>;

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
  ...mediaChunkFields,
  ...jobGroundingFields,
  metadata: z.object({
    resolution: z.string().meta({ example: '1280x720' }),
    codec: z.string().meta({ example: 'h264' }),
    fps: z.number(),
  }),
});
export type VideoResultData = z.infer<typeof videoResultData>;

/** `data` of POST /api/video/hosted: the platform's metadata and the transcription of the downloaded video. */
export const hostedVideoResultData = z.object({
  video_id: z.string(),
  title: z.string(),
  duration: seconds,
  transcription,
  segments: videoSegments,
  subtitles: subtitlesText,
  ...mediaChunkFields,
  ...jobGroundingFields,
  metadata: z.object({
    uploader: z.string().nullable(),
    views: z.number().int().nullable(),
    description: z.string().nullable(),
  }),
});
export type HostedVideoResultData = z.infer<typeof hostedVideoResultData>;

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
export type VideoFramesResultData = z.infer<typeof videoFramesResultData>;
