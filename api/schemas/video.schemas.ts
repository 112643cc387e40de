import { envelope, z } from '../openapi';
import { uploadedFile } from '../uploads';

/** Schemas of the /api/video routes (spec §4.7). */

/** POST /api/video/frames (multipart); `timestamps` and `interval` are checked by `parseFrameRequest`. */
export const framesBody = z.object({
  file: uploadedFile,
  timestamps: z
    .string()
    .max(100_000)
    .optional()
    .openapi({ description: 'Comma-separated seconds, e.g. `0.5,2,10`; a JSON array is accepted too', example: '0.5,2' }),
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
        path: z.string().openapi({ description: 'Downloads the JPEG at `GET /api/event-job/files/{path}`', example: 'jobs/<job_id>/out/frames/frame-00001.jpg' }),
      }),
    ),
  }),
);
