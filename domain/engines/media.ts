/**
 * The media engine behind one interface: probing a file, decoding its sound to the speech engines' WAV, planning
 * chunks at pauses, cutting a chunk and extracting video frames. The worker builds the real one
 * (providers/media/engine.ts `createFfmpegMedia`: ffprobe and ffmpeg, spawned directly); activity tests inject an
 * in-memory one.
 */
import type { MediaProbe } from '../../core/jobs/media-formats';

export interface MediaCallOptions {
  /** Aborts the call: the engine process is killed, and the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** A PCM WAV file's header. */
export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** Byte offset of the first sample. */
  dataOffset: number;
  /** Sample frames (one per channel group). */
  samples: number;
  /** Seconds. */
  duration: number;
}

/** One chunk of a long recording, seconds `[start, end)`. */
export interface ChunkSpan {
  start: number;
  end: number;
  /** True when the cut at `end` lies in a silence (always true for the last chunk, which ends with the audio). */
  atSilence: boolean;
}

/** One extracted video frame. */
export interface ExtractedFrame {
  /** Seconds, as requested. */
  time: number;
  path: string;
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
