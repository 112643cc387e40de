import type { BlobStore } from '../core/stores/blob-store';
import type { Chunking, MediaChunkData } from '../core/results/result-schemas-chunks';
import { chunkingOf, chunkOptions, type ChunkParams } from '../domain/chunks/options';
import { chunkTranscript } from '../domain/chunks/media-chunks';
import { noteJobCacheEntry, peekCache, readCache, writeCache } from '../core/stores/cache';
import { AUDIO_CACHE_OPERATION, audioCacheKey } from '../core/stores/cache-keys';
import { withDefaults } from '../core/jobs/job-defaults';
import { countCacheLookup } from '../core/runtime/metrics';
import type { AudioOutcome, AudioSegment } from '../core/results/result-shapes';
import type { SubtitleFormat } from '../core/results/subtitles';
import { transcriptionData, type CachedTranscription } from '../core/results/transcription-data';
import { keyTemplateSource } from './template-source';

export type { CachedTranscription } from '../core/results/transcription-data';

/**
 * The audio and video capability's result cache, for the worker (`prepareAudio`, the transcription's end:
 * activities/audio.activities.ts, audio-results.ts) and the API's hits (api/services/direct-answer-media.ts): the key
 * (the received bytes' sha256, the languages, the template's name and source, the speech options, the speech model
 * and the language model), the entry (the outcome and the job that computed it), and the endpoint's `data` of an
 * outcome. The transcription itself runs only in the worker.
 */

/** The key of these bytes under these parameters (transcription defaults applied); null for a missing template. */
export async function transcriptionKey(
  sha256: string,
  parameters: Record<string, unknown>,
  ctx: { speechModel: string; llmModel?: string },
): Promise<string | null> {
  const p = withDefaults('transcription', parameters);
  const source = await keyTemplateSource(p);
  if (source === null) return null;
  return audioCacheKey(sha256, p, { templateSource: source, speechModel: ctx.speechModel, llmModel: ctx.llmModel });
}

/** The entry under `key`, or null; `count` counts the lookup (the activity), else the caller counts what it answers. */
export const cachedTranscription = (
  store: BlobStore,
  key: string,
  opts: { count: boolean },
): Promise<CachedTranscription | null> =>
  opts.count
    ? readCache<CachedTranscription>(store, AUDIO_CACHE_OPERATION, key)
    : peekCache<CachedTranscription>(store, AUDIO_CACHE_OPERATION, key);

/**
 * A fresh success, written under its key, naming the job whose folder holds its `result.md` (noted under the job, so
 * that deleting the job deletes the entry).
 */
export async function rememberTranscription(
  store: BlobStore,
  key: string,
  outcome: AudioOutcome,
  jobId: string,
): Promise<void> {
  await noteJobCacheEntry(store, jobId, AUDIO_CACHE_OPERATION, key);
  await writeCache(store, AUDIO_CACHE_OPERATION, key, { ...outcome, job_id: jobId } satisfies CachedTranscription);
}

export const countTranscriptionHit = (): void => countCacheLookup(AUDIO_CACHE_OPERATION, true);

/** The speech options of the parameters as the answer reads them (their defaults applied). */
export const speechOptions = (params: Record<string, unknown>) =>
  withDefaults('speech', params) as Record<string, unknown> & {
    word_timestamps: boolean;
    diarize?: boolean;
    subtitles?: SubtitleFormat;
  };

/**
 * The endpoint's `data` of an outcome (a job's end and the API's hit alike): `shape` gives the endpoint's fields
 * (`audioData`, `videoData`), word timings, subtitles and chunks as the options ask.
 */
export function transcriptionAnswer<
  D extends { segments?: AudioSegment[]; subtitles?: string; chunks?: MediaChunkData[]; chunking?: Chunking },
>(outcome: AudioOutcome, params: Record<string, unknown>, shape: (o: AudioOutcome) => D): D {
  const data = transcriptionData(outcome, speechOptions(params), shape);
  // Chunks of the transcript as spoken (contract §14), cut on its words' times, at speaker turns with diarize.
  const o = chunkOptions(params as ChunkParams);
  if (o) {
    data.chunks = chunkTranscript(outcome.segments, { ...o, speakers: params.diarize === true });
    data.chunking = chunkingOf(o);
  }
  // A grounded template's fields and where they were said (contract §14).
  if (outcome.grounding) Object.assign(data, outcome.grounding);
  return data;
}
