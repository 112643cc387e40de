/** The real media engine (domain/engines/media.ts `MediaEngine`): ffprobe and ffmpeg, spawned directly. */
import type { MediaEngine } from '../../domain/engines/media';
import { cutChunk, decodeToWav } from './audio';
import { extractFrames } from './frames';
import { probeMedia } from './probe';
import { planChunksAtSilence } from './silence';

/** The real engine: ffprobe and ffmpeg. */
export function createFfmpegMedia(): MediaEngine {
  return {
    probe: (filePath, opts) => probeMedia(filePath, opts),
    decodeToWav: (inputPath, outPath, opts) => decodeToWav(inputPath, outPath, opts),
    planChunks: (wavPath, duration, targetSec, opts) => planChunksAtSilence(wavPath, duration, targetSec, opts),
    cutChunk: (wavPath, start, end, outPath, opts) => cutChunk(wavPath, start, end, outPath, opts),
    extractFrames: (videoPath, times, outDir, opts) => extractFrames(videoPath, times, outDir, opts),
  };
}
