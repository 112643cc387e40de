/**
 * Budgets checked from a file's header before anything decodes it: pixels of an image or a video frame, seconds of a
 * recording. Pure: the API checks an upload before a job exists, the activities again on what they download.
 */
import { AppError } from '../errors';
import type { MediaProbe } from './media-formats';

/**
 * Refuses an image with more than `maxPixels` pixels (from its header, before anything decodes it): decoders and
 * tesseract need about 10 bytes a pixel, so a 1 MB PNG of 20000×20000 would take gigabytes. 422
 * `UNPROCESSABLE_INPUT` with `details.reason` `image_too_large`.
 */
export function checkPixelBudget(size: { width: number; height: number }, maxPixels: number, what = 'The image'): void {
  const pixels = size.width * size.height;
  if (pixels <= maxPixels) return;
  throw new AppError(
    'UNPROCESSABLE_INPUT',
    `${what} has ${size.width}×${size.height} pixels; at most ${maxPixels} pixels are processed (MAX_IMAGE_PIXELS).`,
    {
      reason: 'image_too_large',
      width: size.width,
      height: size.height,
      pixels,
      max_pixels: maxPixels,
    },
  );
}

/**
 * Refuses media longer than `maxSeconds` by the duration its header states (before anything is decoded): 422
 * `UNPROCESSABLE_INPUT` with `details.reason` `too_long`. Decoding is capped at the same length (`decodeToWav`).
 */
export function checkDuration(probe: MediaProbe, maxSeconds: number): void {
  const duration = Math.max(probe.duration ?? 0, probe.video?.duration ?? 0);
  if (duration <= maxSeconds) return;
  throw new AppError(
    'UNPROCESSABLE_INPUT',
    `The recording lasts ${Math.round(duration)} s; at most ${maxSeconds} s are processed (MAX_MEDIA_SECONDS).`,
    {
      reason: 'too_long',
      duration,
      max_seconds: maxSeconds,
    },
  );
}
