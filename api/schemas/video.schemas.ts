import { envelope, z } from '../openapi';
import { uploadedFile } from '../uploads';
import { audioSegment, speechOptions, transcriptionOptions } from './audio.schemas';
import { httpUrl } from './form';

/** Schemas of the /api/video routes (spec §4.7). */

/** POST /api/video/frames (multipart); `timestamps` and `interval` are checked by `parseFrameRequest`. */
export const framesBody = z.object({
  file: uploadedFile,
  timestamps: z.string().max(100_000).optional().openapi({
    description: 'Comma-separated seconds, e.g. `0.5,2,10`; a JSON array is accepted too',
    example: '0.5,2',
  }),
  interval: z
    .string()
    .max(32)
    .optional()
    .openapi({ description: 'A frame every N seconds from 0 (seconds above 0)', example: '1' }),
});

/** The answer of POST /api/video/frames. */
export const framesResult = envelope(
  z.object({
    frames: z.array(
      z.object({
        timestamp: z.number().openapi({ description: 'Seconds from the start' }),
        path: z.string().openapi({
          description: 'Downloads the JPEG at `GET /api/event-job/files/{path}`',
          example: 'jobs/<job_id>/out/frames/frame-00001.jpg',
        }),
      }),
    ),
  }),
);

/** POST /api/video/process (multipart or JSON): a `file` or a `url`, checked by the route (exactly one). */
export const videoProcessBody = z.object({
  file: uploadedFile.optional(),
  url: httpUrl
    .optional()
    .openapi({ description: 'Downloaded by the job; private and loopback addresses are refused unless allowed' }),
  ...transcriptionOptions,
});

/** The answer of POST /api/video/process. */
export const videoProcessResult = envelope(
  z.object({
    duration: z.number().openapi({ description: 'Seconds' }),
    transcription: z.string().openapi({ description: 'After the template and the translation' }),
    segments: z.array(audioSegment).optional().openapi({ description: 'With word_timestamps=true or diarize=true' }),
    subtitles: z.string().optional().openapi({ description: "With subtitles=srt|vtt: the file's text" }),
    metadata: z.object({
      resolution: z.string().openapi({ example: '1280x720' }),
      codec: z.string().openapi({ example: 'h264' }),
      fps: z.number(),
    }),
  }),
).openapi('VideoProcessResult');

/** POST /api/video/hosted (multipart or JSON). */
export const videoHostedBody = z.object({
  url: httpUrl.openapi({ description: 'The page of the video on a platform yt-dlp reads' }),
  source_language: transcriptionOptions.source_language,
  target_language: transcriptionOptions.target_language,
  template: transcriptionOptions.template,
  ...speechOptions,
});

/** The answer of POST /api/video/hosted. */
export const videoHostedResult = envelope(
  z.object({
    video_id: z.string(),
    title: z.string(),
    duration: z.number().openapi({ description: 'Seconds' }),
    transcription: z.string().openapi({ description: 'After the template and the translation' }),
    segments: z.array(audioSegment).optional().openapi({ description: 'With word_timestamps=true or diarize=true' }),
    subtitles: z.string().optional().openapi({ description: "With subtitles=srt|vtt: the file's text" }),
    metadata: z.object({
      uploader: z.string().nullable(),
      views: z.number().int().nullable(),
      description: z.string().nullable(),
    }),
  }),
).openapi('VideoHostedResult');
