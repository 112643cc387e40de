/** The real media engine (domain/engines/media.ts `MediaEngine`): ffprobe and ffmpeg, spawned directly. */
import type { MediaEngine } from '../../domain/engines/media';
import { cutChunk, decodeToWav } from './audio';
import { extractFrames } from './frames';
import { probeMedia } from './probe';
import { planChunksAtSilence } from './silence';

/** The real engine: ffprobe and ffmpeg (the adapters' own functions: a call goes straight to them). */
export function createFfmpegMedia(): MediaEngine {
  return { probe: probeMedia, decodeToWav, planChunks: planChunksAtSilence, cutChunk, extractFrames };
}
