/**
 * What a media file holds, read from its content with `ffprobe` (spawned directly, bounded by a timeout, killed on
 * abort). The extension is never consulted: formats are decided by the container ffprobe recognises and the codecs
 * inside it (see `core/jobs/media-formats.ts`).
 */
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '../../core/errors';
import { ToolExitError, ToolTimeoutError, runTool } from '../process/run-tool';
import { SUPPORTED_FORMATS, type MediaProbe } from '../../core/jobs/media-formats';
import { localInputOptions } from './input-guard';

export interface MediaToolOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

const ENTRIES = [
  'format=format_name,duration:format_tags=major_brand',
  'stream=index,codec_type,codec_name,sample_rate,channels,width,height,avg_frame_rate,r_frame_rate,duration',
  'stream_disposition=attached_pic',
].join(':');

const num = (v: unknown): number | null => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : null;
};

/** `30000/1001` → 29.97 (three decimals); `0/0` → null. */
export function parseRate(rate: unknown): number | null {
  if (typeof rate !== 'string') return null;
  const [a, b = '1'] = rate.split('/');
  const n = Number(a) / Number(b);
  return Number.isFinite(n) && n > 0 ? Math.round(n * 1000) / 1000 : null;
}

type Json = Record<string, unknown>;

/** Turns ffprobe's JSON output into a `MediaProbe`. Pure. */
export function parseProbe(json: unknown): MediaProbe {
  const root = (json ?? {}) as Json;
  const format = (root.format ?? {}) as Json;
  const streams = (Array.isArray(root.streams) ? root.streams : []) as Json[];
  const a = streams.find((s) => s.codec_type === 'audio');
  const v = streams.find((s) => s.codec_type === 'video' && !((s.disposition as Json | undefined)?.attached_pic === 1));
  const streamDurations = streams.map((s) => num(s.duration)).filter((d): d is number => d !== null);
  const brand = ((format.tags as Json | undefined)?.major_brand as string | undefined)?.trim();
  return {
    formatNames: typeof format.format_name === 'string' ? format.format_name.split(',') : [],
    brand: brand || null,
    duration: num(format.duration) ?? (streamDurations.length ? Math.max(...streamDurations) : null),
    audio: a
      ? {
          index: num(a.index) ?? 0,
          codec: String(a.codec_name ?? 'unknown'),
          sampleRate: num(a.sample_rate) ?? 0,
          channels: num(a.channels) ?? 0,
        }
      : null,
    video: v
      ? {
          index: num(v.index) ?? 0,
          codec: String(v.codec_name ?? 'unknown'),
          width: num(v.width) ?? 0,
          height: num(v.height) ?? 0,
          fps: parseRate(v.avg_frame_rate) ?? parseRate(v.r_frame_rate) ?? 0,
          duration: num(v.duration),
        }
      : null,
  };
}

/** Containers whose demuxer names a damaged file of a format we take (a truncated MP4 lacks its `moov` atom). */
const KNOWN_DEMUXER = /^\[(mov,mp4|matroska|ogg|mp3|flac|wav|mpeg|mpegts)[^\]]* @/m;

/**
 * Maps ffprobe's refusal of a file: content no demuxer recognises is `INVALID_FORMAT` (`unsupported_format`), a file
 * a demuxer of a supported format recognised but could not read is `UNPROCESSABLE_INPUT` (`corrupt`).
 */
export function probeError(err: unknown): unknown {
  if (err instanceof ToolTimeoutError) {
    return new AppError(
      'UNPROCESSABLE_INPUT',
      'Reading the media file took too long',
      { error_type: 'timeout' },
      { cause: err },
    );
  }
  if (!(err instanceof ToolExitError)) return err;
  if (/No such file or directory|Permission denied/.test(err.stderr)) return err;
  if (KNOWN_DEMUXER.test(err.stderr)) {
    return new AppError(
      'UNPROCESSABLE_INPUT',
      'The media file is damaged and cannot be read',
      { error_type: 'corrupt' },
      { cause: err },
    );
  }
  return new AppError(
    'INVALID_FORMAT',
    'The file is not a supported audio or video format',
    { error_type: 'unsupported_format', supported_formats: [...SUPPORTED_FORMATS] },
    { cause: err },
  );
}

/**
 * Runs `ffprobe` on a file (default limit 60 s) and reads its container, duration and first audio and video streams.
 * ffprobe falls back on the file name's extension when no demuxer recognises the content (a text file named `.mp3`
 * would be read as MP3): it is given a link without an extension, so the content is the only witness.
 */
export async function probeMedia(filePath: string, opts: MediaToolOptions = {}): Promise<MediaProbe> {
  const linkDir = await mkdtemp(path.join(os.tmpdir(), 'probe-'));
  try {
    const link = path.join(linkDir, 'input');
    await symlink(path.resolve(filePath), link);
    const { stdout } = await runTool(
      'ffprobe',
      ['-v', 'error', ...localInputOptions(), '-show_entries', ENTRIES, '-of', 'json', link],
      {
        signal: opts.signal,
        timeoutMs: opts.timeoutMs ?? 60_000,
        maxStdoutBytes: 16 * 1024 * 1024,
      },
    );
    return parseProbe(JSON.parse(stdout.toString('utf8')));
  } catch (err) {
    throw probeError(err);
  } finally {
    await rm(linkDir, { recursive: true, force: true });
  }
}
