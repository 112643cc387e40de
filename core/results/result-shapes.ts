/**
 * The `data` object of each synchronous endpoint (spec §4.2, §4.3, §4.10), built on the pipeline side from what a
 * job computed. A job's results, its completion webhook and the synchronous answer all carry this object
 * (see job-results.ts), so every entry point gives the same answer.
 */
import type { z } from 'zod';
import { JOB_DEFAULTS } from '../jobs/job-defaults';
import type {
  audioSegmentSchema,
  audioWordSchema,
  AudioResultData,
  HostedVideoResultData,
  ImageOcrMetadata,
  ImageOcrResultData,
  VideoFramesResultData,
  VideoResultData,
} from './result-schemas-media';
import type {
  ExternalOcrMetadata,
  ExternalOcrRawData,
  ExternalOcrResultData,
  PdfMetadata,
  PdfResultData,
} from './result-schemas-pdf';
import type { extractedTableSchema, processedBlockSchema, TransformerResult } from './result-schemas-text';
import type { JobGrounding, TemplateSources } from './result-schemas-chunks';

/** A ZIP in a result, Base64-encoded (spec: `*_archive_filename`, `*_archive_data`). */
interface ArchiveData {
  filename: string;
  data: string;
}

/** What a transformer operation computed (also its cache entry's text, metadata and output). */
interface TransformerOutcome {
  text: string;
  metadata: Record<string, unknown>;
  output?: Record<string, unknown>;
}

/** `data` of `/api/transformer/*` and `/api/common/blocks`, per operation. */
export function transformerData(
  operation: string,
  params: Record<string, unknown>,
  r: TransformerOutcome,
): TransformerResult {
  const out = r.output ?? {};
  const originalText = String(params.text ?? '');
  const lang = (k: 'source_language' | 'target_language') => String(out[k] ?? params[k] ?? JOB_DEFAULTS.transformer[k]);
  switch (operation) {
    case 'text':
      return {
        original_text: originalText,
        translated_text: String(out.translated_text ?? r.text),
        source_language: lang('source_language'),
        target_language: lang('target_language'),
      };
    case 'template':
      return {
        original_text: originalText,
        transformed_text: String(out.transformed_text ?? r.text),
        template_fields: (out.template_fields ?? {}) as Record<string, unknown>,
        ...(out.template_sources
          ? {
              template_sources: out.template_sources as TemplateSources,
              unsupported_fields: (out.unsupported_fields ?? []) as string[],
            }
          : {}),
      };
    case 'summarize':
      return { original_text: originalText, summary: String(out.summary ?? r.text) };
    case 'html-to-markdown':
      return { html: String(params.html ?? ''), markdown: r.text };
    case 'extract-tables':
      return { tables: (r.metadata.tables ?? []) as z.infer<typeof extractedTableSchema>[] };
    case 'blocks':
      return {
        processed_blocks: (out.processed_blocks ?? []) as z.infer<typeof processedBlockSchema>[],
        newsfeed_entry: String(out.newsfeed_entry ?? r.text),
      };
    default:
      throw new Error(`unknown transformer operation ${operation}`);
  }
}

/** `data` of `/api/pdf/process`. */
export function pdfData(
  text: string,
  metadata: PdfMetadata,
  images: ArchiveData | null,
  markdown?: string,
): PdfResultData {
  return {
    extracted_text: text,
    ...(markdown !== undefined ? { markdown } : {}),
    metadata,
    images_archive_filename: images?.filename ?? null,
    images_archive_data: images?.data ?? null,
  };
}

/** `data` of `/api/imageocr/process` and `/process-url`. */
export function imageOcrData(
  text: string,
  metadata: ImageOcrMetadata,
  md?: Pick<ImageOcrResultData, 'markdown' | 'blocks'>,
): ImageOcrResultData {
  return { extracted_text: text, metadata, ...(md ? { markdown: md.markdown, blocks: md.blocks } : {}) };
}

/** `data` of `/api/pdf/process-external-ocr`. */
export function externalOcrData(
  text: string,
  metadata: ExternalOcrMetadata,
  raw: ExternalOcrRawData,
  pages: ArchiveData | null,
): ExternalOcrResultData {
  return {
    extracted_text: text,
    metadata,
    external_ocr_raw: raw,
    pages_archive_filename: pages?.filename ?? null,
    pages_archive_data: pages?.data ?? null,
    images_archive_data: null,
    images_archive_filename: null,
  };
}

/**
 * One stretch of a transcript, times in seconds from the start of the recording; ids increase from 0. `words` with
 * `word_timestamps=true` (contract §9): the segment's words in order, on the recording's time line; `speaker` with
 * `diarize=true`: who speaks most of the segment (`SPEAKER_1`, `SPEAKER_2`... in order of first speech).
 */
export type AudioSegment = z.infer<typeof audioSegmentSchema>;

/**
 * One timed word; `probability` is null when the speech provider reports none (a hosted endpoint); `speaker` with
 * `diarize=true`: who speaks the word (a turn inside a segment shows here).
 */
export type AudioWord = z.infer<typeof audioWordSchema>;

/** What an audio job computed (spec §4.11); also the result cache's entry, without the job's own id and folder. */
export interface AudioOutcome {
  duration: number;
  detected_language: string;
  original_text: string;
  /** The text after the template and the translation (the transcript when neither applies). */
  output_text: string;
  /** The translation into `target_language`, or null when the spoken language is the target. */
  translated_text: string | null;
  /** The model that filled the template, else the one that translated; null when no model was called. */
  llm_model: string | null;
  /** The model that translated, or null without a translation. */
  translation_model: string | null;
  token_count: number;
  segments: AudioSegment[];
  /** With a template and grounding=true (contract §14): the fields, their sources with seconds, the unsupported. */
  grounding?: JobGrounding;
}

/**
 * `data` of `/api/audio/process` without `from_cache`, which is a job field of the results (`job-results.ts`) and is
 * added to the answer's `data` by the route.
 */
export function audioData(r: AudioOutcome, job: { process_id: string; process_dir: string }): AudioResultData {
  return {
    duration: r.duration,
    detected_language: r.detected_language,
    output_text: r.output_text,
    original_text: r.original_text,
    translated_text: r.translated_text,
    llm_model: r.llm_model,
    translation_model: r.translation_model,
    token_count: r.token_count,
    segments: r.segments,
    process_id: job.process_id,
    process_dir: job.process_dir,
  };
}

/** One frame of `/api/video/frames`: the second it shows and the path that downloads its JPEG (the files route). */
export interface VideoFrame {
  timestamp: number;
  path: string;
}

/** `data` of `/api/video/frames`: the frames in time order. */
export function videoFramesData(frames: VideoFrame[]): VideoFramesResultData {
  return { frames };
}

/** The picture of a video (spec §4.7 `metadata`), as ffprobe read it. */
export interface VideoPicture {
  /** `<width>x<height>`. */
  resolution: string;
  codec: string;
  fps: number;
  /** Seconds (the container's), 0 when unknown. */
  duration: number;
}

/** What a video platform says about a hosted video (spec §4.7 `/api/video/hosted`); null where it says nothing. */
export interface HostedVideoInfo {
  video_id: string;
  title: string;
  uploader: string | null;
  views: number | null;
  description: string | null;
  duration: number | null;
}

/** The container's duration when ffprobe read one, else the decoded audio's (seconds, to the millisecond). */
const videoDuration = (known: number | null | undefined, r: AudioOutcome): number =>
  Math.round((known || r.duration) * 1000) / 1000;

/**
 * `data` of `/api/video/process`: the transcription is the final text (after the template and the translation, as
 * the audio job's `output_text`).
 */
export function videoData(r: AudioOutcome, picture: VideoPicture): VideoResultData {
  return {
    duration: videoDuration(picture.duration, r),
    transcription: r.output_text,
    metadata: { resolution: picture.resolution, codec: picture.codec, fps: picture.fps },
  };
}

/** `data` of `/api/video/hosted`: the platform's metadata and the transcription of the downloaded video. */
export function hostedVideoData(r: AudioOutcome, info: HostedVideoInfo, picture: VideoPicture): HostedVideoResultData {
  return {
    video_id: info.video_id,
    title: info.title,
    duration: videoDuration(info.duration ?? picture.duration, r),
    transcription: r.output_text,
    metadata: { uploader: info.uploader, views: info.views, description: info.description },
  };
}
