/**
 * The media engine behind one interface: probing a file, decoding its sound to the speech engines' WAV, planning
 * chunks at pauses, cutting a chunk and extracting video frames. The worker builds the real one
 * (`createFfmpegMedia`: ffprobe and ffmpeg, spawned directly); activity tests inject an in-memory one.
 */
import { cutChunk, decodeToWav, type WavInfo } from './audio';
import { extractFrames, type ExtractedFrame } from './frames';
import type { MediaProbe } from '../../core/media-formats';
import { probeMedia } from './probe';
import { planChunksAtSilence, type ChunkSpan } from './silence';

export interface MediaCallOptions {
  /** Aborts the call: the engine process is killed, and the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Failures a client may see are `AppError`s (`INVALID_FORMAT` for a file no demuxer reads, `UNPROCESSABLE_INPUT`
 * for one that decodes to nothing or runs too long), which the activity error boundary fails non-retryable;
 * anything else (a crashed process) is left to the step's retry policy.
 */
export interface MediaEngine {
  /** The container, duration and first audio and video streams of a file, read from its content. */
  probe(filePath: string, opts?: MediaCallOptions): Promise<MediaProbe>;
  /**
   * The first audio stream as a 16 kHz mono 16-bit WAV at `outPath`; past `maxSeconds` it is `too_long`; with
   * `headSeconds`, only its first seconds.
   */
  decodeToWav(
    inputPath: string,
    outPath: string,
    opts?: MediaCallOptions & { maxSeconds?: number; headSeconds?: number },
  ): Promise<WavInfo>;
  /** Chunks of about `targetSec` covering `[0, duration)`, cut at pauses where there are any. */
  planChunks(wavPath: string, duration: number, targetSec: number, opts?: MediaCallOptions): Promise<ChunkSpan[]>;
  /** `[start, end)` seconds of a WAV into a new WAV at `outPath`, sample-exact. */
  cutChunk(wavPath: string, start: number, end: number, outPath: string, opts?: MediaCallOptions): Promise<WavInfo>;
  /** One JPEG per time into `outDir`, from the video stream `streamIndex` (default the first). */
  extractFrames(
    videoPath: string,
    times: readonly number[],
    outDir: string,
    opts?: MediaCallOptions & { streamIndex?: number },
  ): Promise<ExtractedFrame[]>;
}

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
