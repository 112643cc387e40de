/**
 * Video frames as JPEG at requested times (contract §7): the sorted union of the `timestamps` and the `interval`
 * grid, times past the end dropped. Requests are checked before ffmpeg runs (core/jobs/frame-request.ts); each frame is one
 * bounded ffmpeg run.
 */
import path from 'node:path';
import { rm, stat } from 'node:fs/promises';
import { AppError } from '../../core/errors';
import type { ExtractedFrame } from '../../domain/engines/media';
import { decodeError, runFfmpeg } from './audio';
import type { MediaToolOptions } from './probe';
import { localInput } from './input-guard';

const exists = async (p: string) => (await stat(p).catch(() => null))?.isFile() ?? false;

/**
 * Writes one JPEG per time into `outDir` (`frame-00001.jpg`… in the order given) from the video stream `streamIndex`
 * (default the first). ffmpeg seeks to the first frame at or after each time; a time after the last frame starts
 * but before the end takes the last frame.
 */
export async function extractFrames(
  videoPath: string,
  times: readonly number[],
  outDir: string,
  opts: MediaToolOptions & { streamIndex?: number } = {},
): Promise<ExtractedFrame[]> {
  const map = opts.streamIndex === undefined ? '0:v:0' : `0:${opts.streamIndex}`;
  // `-update 1` keeps overwriting one file, so without a frame limit the last picture decoded is what remains.
  const output = (out: string, first: boolean) => [
    '-map',
    map,
    ...(first ? ['-frames:v', '1'] : []),
    '-q:v',
    '2',
    '-update',
    '1',
    '-f',
    'image2',
    '-y',
    out,
  ];
  const run = (args: string[]) => runFfmpeg(args, { signal: opts.signal, timeoutMs: opts.timeoutMs ?? 120_000 });
  const frames: ExtractedFrame[] = [];
  try {
    for (const [i, time] of times.entries()) {
      const out = path.join(outDir, `frame-${String(i + 1).padStart(5, '0')}.jpg`);
      await rm(out, { force: true }); // whether ffmpeg wrote a frame is told by the file being there
      await run(['-ss', time.toFixed(6), ...localInput(videoPath), ...output(out, true)]);
      if (!(await exists(out))) {
        // The last frame is shown until the end: decode the final second and keep the last picture.
        await run(['-sseof', '-1', ...localInput(videoPath), ...output(out, false)]);
      }
      if (!(await exists(out)))
        throw new AppError('UNPROCESSABLE_INPUT', `No video frame at ${time} s`, { error_type: 'no_frame', time });
      frames.push({ time, path: out });
    }
  } catch (err) {
    throw decodeError(err, 'Extracting frames');
  }
  return frames;
}
