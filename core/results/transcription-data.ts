import type { AudioResultData, HostedVideoResultData, VideoResultData } from './result-schemas-media';
import type { AudioOutcome, AudioSegment } from './result-shapes';
import { subtitles, type SubtitleFormat } from './subtitles';

/**
 * An audio result-cache entry: the outcome, and the job that computed it (absent in entries written before it was
 * kept). That job's folder holds the outcome's `result.md` and its record the same `data`, so an answer from the entry
 * without a job (api/services/direct-answer-media.ts) names it as `process_id` / `process_dir`.
 */
export type CachedTranscription = AudioOutcome & { job_id?: string };

/** The `data` of a transcription: an audio job's, a video's, a hosted video's. */
export type TranscriptionResultData = AudioResultData | VideoResultData | HostedVideoResultData;

/**
 * The `data` of an audio or video answer from its outcome, built one way whether a job finishes it
 * (activities/audio-results.ts) or the API answers a cache hit: `shape` gives the endpoint's fields; word timings are
 * shown only when asked (a video's data gains `segments` then, and when speakers are asked), and `subtitles` adds the file's text, cut from the
 * transcript as spoken (contract §9).
 */
export function transcriptionData<
  D extends { segments?: AudioSegment[]; subtitles?: string; chunks?: unknown; chunking?: unknown },
>(
  outcome: AudioOutcome,
  p: { word_timestamps: boolean; diarize?: boolean; subtitles?: SubtitleFormat },
  shape: (o: AudioOutcome) => D,
): D {
  // Word timings are kept for subtitles too; the answer shows them when asked (contract §9).
  const segments = p.word_timestamps ? outcome.segments : outcome.segments.map(({ words: _, ...s }) => s);
  const data = shape({ ...outcome, segments });
  // Both fields are optional in every transcription shape (core/results/result-schemas-media.ts).
  const extra: { segments?: AudioSegment[]; subtitles?: string } = data;
  // The video endpoints' data (spec §4.7) has no segments: they are added when word timings or speakers are asked.
  if ((p.word_timestamps || p.diarize) && !('segments' in data)) extra.segments = segments;
  if (p.subtitles) extra.subtitles = subtitles(outcome.segments, p.subtitles);
  return data;
}
