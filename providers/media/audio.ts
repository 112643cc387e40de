/**
 * Decoding to the one form the speech engines take (16 kHz mono 16-bit PCM WAV) and cutting that WAV into chunks.
 * ffmpeg is spawned directly, bounded by a timeout and killed on abort.
 */
import { open } from 'node:fs/promises';
import { AppError } from '../../core/errors';
import type { WavInfo } from '../../domain/engines/media';
import { ToolExitError, ToolTimeoutError, runTool, type RunToolOptions, type ToolResult } from '../process/run-tool';
import type { MediaToolOptions } from './probe';
import { localInput } from './input-guard';

export const SPEECH_SAMPLE_RATE = 16_000;

/** ffmpeg quiet, never reading stdin, writing no encoder or metadata tags (so its output is the same every run). */
export const FFMPEG_BASE = ['-nostdin', '-hide_banner', '-v', 'error'];
/**
 * Runs ffmpeg with `FFMPEG_BASE` and its progress report on fd 3 (`-progress pipe:3`, about two reports a second
 * while it decodes): the engine watchdog's sign of life, so a long decode is never taken for a stall, and an ffmpeg
 * blocked on its input is.
 */
export function runFfmpeg(args: string[], opts: Omit<RunToolOptions, 'progressPipe'>): Promise<ToolResult> {
  return runTool('ffmpeg', [...FFMPEG_BASE, '-progress', 'pipe:3', ...args], { ...opts, progressPipe: true });
}

const BITEXACT = ['-map_metadata', '-1', '-fflags', '+bitexact', '-flags:a', '+bitexact'];

/** Reads a PCM WAV header (RIFF chunks up to `data`). */
export async function wavInfo(wavPath: string): Promise<WavInfo> {
  const fh = await open(wavPath, 'r');
  try {
    const size = (await fh.stat()).size;
    const buf = Buffer.alloc(Math.min(size, 64 * 1024));
    await fh.read(buf, 0, buf.length, 0);
    if (buf.toString('latin1', 0, 4) !== 'RIFF' || buf.toString('latin1', 8, 12) !== 'WAVE')
      throw new Error(`${wavPath} is not a WAV file`);
    let fmt: { channels: number; sampleRate: number; bitsPerSample: number } | undefined;
    for (let at = 12; at + 8 <= buf.length;) {
      const id = buf.toString('latin1', at, at + 4);
      const len = buf.readUInt32LE(at + 4);
      if (id === 'fmt ')
        fmt = {
          channels: buf.readUInt16LE(at + 10),
          sampleRate: buf.readUInt32LE(at + 12),
          bitsPerSample: buf.readUInt16LE(at + 22),
        };
      if (id === 'data') {
        if (!fmt) break;
        const frameBytes = (fmt.channels * fmt.bitsPerSample) / 8;
        // A header written before the end was known states no size: the file's end is the data's end.
        const dataBytes = len === 0 || len === 0xffffffff || at + 8 + len > size ? size - at - 8 : len;
        const samples = Math.floor(dataBytes / frameBytes);
        return { ...fmt, dataOffset: at + 8, samples, duration: samples / fmt.sampleRate };
      }
      at += 8 + len + (len % 2);
    }
    throw new Error(`${wavPath} has no PCM data chunk`);
  } finally {
    await fh.close();
  }
}

/** Maps ffmpeg's failure to read an input to `UNPROCESSABLE_INPUT`; anything else stays as it is. */
export function decodeError(err: unknown, what: string): unknown {
  if (err instanceof ToolTimeoutError) {
    return new AppError('UNPROCESSABLE_INPUT', `${what} took too long`, { error_type: 'timeout' }, { cause: err });
  }
  if (err instanceof ToolExitError && !/No such file or directory|Permission denied|No space left/.test(err.stderr)) {
    return new AppError(
      'UNPROCESSABLE_INPUT',
      'The media file could not be decoded',
      { error_type: 'undecodable' },
      { cause: err },
    );
  }
  return err;
}

/**
 * Decodes the first audio stream of any file ffmpeg reads to a 16 kHz mono 16-bit WAV at `outPath` (default limit
 * 30 min, enough for the contract's 12 h of audio). A file that decodes to nothing is `UNPROCESSABLE_INPUT`. With
 * `maxSeconds`, decoding stops just past it (a header may understate the length) and a longer stream is
 * `UNPROCESSABLE_INPUT` with `reason` `too_long`, so the WAV never grows past what the limit allows. With
 * `headSeconds`, only the first seconds are decoded (a longer stream is no error).
 */
export async function decodeToWav(
  inputPath: string,
  outPath: string,
  opts: MediaToolOptions & { maxSeconds?: number; headSeconds?: number } = {},
): Promise<WavInfo> {
  const cap = opts.headSeconds
    ? ['-t', String(opts.headSeconds)]
    : opts.maxSeconds
      ? ['-t', String(opts.maxSeconds + 1)]
      : [];
  const input = [
    ...localInput(inputPath),
    '-map',
    '0:a:0',
    '-vn',
    '-ac',
    '1',
    '-ar',
    String(SPEECH_SAMPLE_RATE),
    ...cap,
  ];
  const info = await writeWav(input, outPath, 'Decoding the audio', {
    signal: opts.signal,
    timeoutMs: opts.timeoutMs ?? 30 * 60_000,
  });
  if (info.samples === 0) {
    throw new AppError('UNPROCESSABLE_INPUT', 'The audio stream holds no decodable sound', {
      error_type: 'empty_audio',
    });
  }
  if (!opts.headSeconds && opts.maxSeconds && info.duration > opts.maxSeconds) {
    throw new AppError(
      'UNPROCESSABLE_INPUT',
      `The recording lasts longer than ${opts.maxSeconds} s (MAX_MEDIA_SECONDS).`,
      { reason: 'too_long', max_seconds: opts.maxSeconds },
    );
  }
  return info;
}

/** Runs ffmpeg with `inputArgs` writing 16-bit PCM WAV to `outPath`, and reads the result's header. */
async function writeWav(
  inputArgs: string[],
  outPath: string,
  what: string,
  opts: MediaToolOptions & { timeoutMs: number },
): Promise<WavInfo> {
  try {
    await runFfmpeg([...inputArgs, '-c:a', 'pcm_s16le', ...BITEXACT, '-f', 'wav', '-y', outPath], opts);
  } catch (err) {
    throw decodeError(err, what);
  }
  return wavInfo(outPath);
}

/** Sample index of a time in a `sampleRate` stream (times of a plan are whole milliseconds, so this is exact). */
export const sampleAt = (seconds: number, sampleRate: number): number => Math.round(seconds * sampleRate);

/**
 * Copies `[start, end)` seconds of a WAV into a new WAV at `outPath`, sample-exact: ffmpeg seeks in PCM by byte
 * offset and trims to the sample, so consecutive chunks of a plan hold every sample once.
 */
export async function cutChunk(
  wavPath: string,
  start: number,
  end: number,
  outPath: string,
  opts: MediaToolOptions = {},
): Promise<WavInfo> {
  if (!(end > start && start >= 0)) throw new RangeError(`cutChunk: empty or negative range ${start}–${end}`);
  const { sampleRate } = await wavInfo(wavPath);
  const first = sampleAt(start, sampleRate);
  const count = sampleAt(end, sampleRate) - first;
  const input = ['-ss', String(first / sampleRate), ...localInput(wavPath), '-af', `atrim=end_sample=${count}`];
  return writeWav(input, outPath, 'Cutting the audio', {
    signal: opts.signal,
    timeoutMs: opts.timeoutMs ?? 5 * 60_000,
  });
}
