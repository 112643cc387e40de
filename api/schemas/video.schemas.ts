import { hostedVideoResultData, videoFramesResultData, videoResultData } from '../../core/results/result-schemas-media';
import { envelope, z } from '../openapi';
import { uploadedFile } from '../uploads';
import { speechOptions, transcriptionOptions } from './audio.schemas';
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

/** The answer of POST /api/video/frames: the video_frames job's result. */
export const framesResult = envelope(videoFramesResultData);

/** POST /api/video/process (multipart or JSON): a `file` or a `url`, checked by the route (exactly one). */
export const videoProcessBody = z.object({
  file: uploadedFile.optional(),
  url: httpUrl
    .optional()
    .openapi({ description: 'Downloaded by the job; private and loopback addresses are refused unless allowed' }),
  ...transcriptionOptions,
});

/** The answer of POST /api/video/process: the video job's result. */
export const videoProcessResult = envelope(videoResultData).openapi('VideoProcessResult');

/** POST /api/video/hosted (multipart or JSON). */
export const videoHostedBody = z.object({
  url: httpUrl.openapi({ description: 'The page of the video on a platform yt-dlp reads' }),
  source_language: transcriptionOptions.source_language,
  target_language: transcriptionOptions.target_language,
  template: transcriptionOptions.template,
  ...speechOptions,
});

/** The answer of POST /api/video/hosted: the video job's result for a hosted video. */
export const videoHostedResult = envelope(hostedVideoResultData).openapi('VideoHostedResult');
