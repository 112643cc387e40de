/**
 * The media formats of spec §4.11 and §4.7, decided from what ffprobe read in the content (contract §7): the list is
 * the contract, anything else (or a file without sound) is refused with `INVALID_FORMAT` before any work is queued.
 * Pure: the API checks an upload with it before a job exists, the activities again on what they download.
 */
import { AppError } from '../errors';

/** The audio formats of spec §4.11. */
export const SUPPORTED_FORMATS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm'] as const;
export type AudioFormat = (typeof SUPPORTED_FORMATS)[number];

export interface AudioStreamInfo {
  index: number;
  codec: string;
  sampleRate: number;
  channels: number;
}

export interface VideoStreamInfo {
  index: number;
  codec: string;
  width: number;
  height: number;
  /** Frames per second (average rate, else the base rate); 0 when ffprobe knows neither. */
  fps: number;
  /** Seconds, when the stream states it. */
  duration: number | null;
}

/** What ffprobe read in a media file's content (providers/media/probe.ts runs it). */
export interface MediaProbe {
  /** ffprobe's `format_name` split at commas, e.g. `['mov', 'mp4', 'm4a', '3gp', '3g2', 'mj2']`. */
  formatNames: string[];
  /** The ISO BMFF `major_brand` tag (`M4A `, `isom`, `qt  `…) trimmed, when there is one. */
  brand: string | null;
  /** Seconds; null when neither the container nor a stream states it (a recording streamed without an index). */
  duration: number | null;
  /** The first audio stream, or null. */
  audio: AudioStreamInfo | null;
  /** The first real video stream (cover art, `attached_pic`, does not count), or null. */
  video: VideoStreamInfo | null;
}

/** Audio codecs a WebM file may carry (the WebM profile of Matroska). */
const WEBM_AUDIO = new Set(['opus', 'vorbis']);
/** Audio codecs of Ogg files (`.ogg`, `.oga`). */
const OGG_AUDIO = new Set(['opus', 'vorbis', 'flac', 'speex']);
/** MPEG audio layers I and II (`.mpga`); layer III is `mp3`. */
const MPEG_AUDIO = new Set(['mp1', 'mp2', 'mp3']);

/** The spec format a container holds, judged by ffprobe's demuxer and the audio codec; null when none fits. */
export function containerFormatOf(
  probe: Pick<MediaProbe, 'formatNames' | 'brand' | 'audio' | 'video'>,
): AudioFormat | null {
  const names = new Set(probe.formatNames);
  const codec = probe.audio?.codec;
  if (names.has('mp4') || names.has('mov')) {
    // One demuxer reads the whole ISO BMFF family; the brand tells an iTunes audio file (`M4A `) from the rest.
    return /^M4[ABP]$/.test(probe.brand ?? '') ? 'm4a' : 'mp4';
  }
  if (names.has('webm') || names.has('matroska')) return !codec || WEBM_AUDIO.has(codec) ? 'webm' : null;
  if (names.has('ogg')) {
    if (codec && !OGG_AUDIO.has(codec)) return null;
    // Xiph names Ogg audio other than Vorbis and Opus `.oga`.
    return codec === 'flac' || codec === 'speex' ? 'oga' : 'ogg';
  }
  if (names.has('mp3')) return !codec || codec === 'mp3' ? 'mp3' : MPEG_AUDIO.has(codec) ? 'mpga' : null;
  if (names.has('mpeg') || names.has('mpegts')) return 'mpeg';
  if (names.has('wav')) return 'wav';
  if (names.has('flac')) return 'flac';
  return null;
}

const refuse = (errorType: 'unsupported_format' | 'no_audio_stream', message: string, detected: string[]) =>
  new AppError('INVALID_FORMAT', message, {
    error_type: errorType,
    supported_formats: [...SUPPORTED_FORMATS],
    ...(detected.length ? { detected_format: detected.join(',') } : {}),
  });

/**
 * The spec format of a probed file that has sound, or `INVALID_FORMAT` with `details.error_type`
 * (`unsupported_format` for a container or codec outside the list, `no_audio_stream` for a silent video) and
 * `details.supported_formats`.
 */
export function audioFormatOf(probe: MediaProbe): AudioFormat {
  const format = containerFormatOf(probe);
  if (!format)
    throw refuse('unsupported_format', 'The file is not a supported audio or video format', probe.formatNames);
  if (!probe.audio) throw refuse('no_audio_stream', 'The file has no audio stream', probe.formatNames);
  return format;
}

/** Video metadata of spec §4.7. */
export interface VideoMetadata {
  /** `<width>x<height>`, e.g. `1280x720`. */
  resolution: string;
  codec: string;
  fps: number;
  /** Seconds. */
  duration: number;
}

/** The §4.7 metadata of a probed video, or null when the file has no video stream. */
export function videoMetadata(probe: MediaProbe): VideoMetadata | null {
  const v = probe.video;
  if (!v) return null;
  return {
    resolution: `${v.width}x${v.height}`,
    codec: v.codec,
    fps: v.fps,
    duration: v.duration ?? probe.duration ?? 0,
  };
}

/**
 * The §4.7 metadata of a video to transcribe: `INVALID_FORMAT` (see `audioFormatOf`) for an unsupported container
 * or a file without sound, and with `error_type` `no_video_stream` for a file without a picture.
 */
export function transcribableVideo(probe: MediaProbe): VideoMetadata {
  audioFormatOf(probe);
  const meta = videoMetadata(probe);
  if (!meta)
    throw new AppError('INVALID_FORMAT', 'The file has no video stream', {
      error_type: 'no_video_stream',
      supported_formats: [...SUPPORTED_FORMATS],
    });
  return meta;
}
