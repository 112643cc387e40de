import { createReadStream } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { writeBlobJson } from '../core/blob-store';
import { readCache } from '../core/cache';
import { AUDIO_CACHE_OPERATION } from '../core/cache-keys';
import { mediaSlots } from '../core/config';
import type { TranscriptionParams } from '../core/job-params';
import { countAudioSeconds } from '../core/metrics';
import { jobInternalKey } from '../core/records';
import { copyBlob, scratchAt } from '../core/scratch';
import { audioData, type AudioOutcome } from '../core/result-shapes';
import { checkDuration } from '../core/input-budgets';
import { audioFormatOf } from '../core/media-formats';
import { audioCacheKey, cachedAudioKey, chunkKey, createAudioResults, type TranscriptionDone } from './audio-results';
import { createVideoSourceActivities } from './audio-video-source';
import type { AudioPrepared, ChunkTranscript } from './audio-types';
import type { ActivityDeps } from './deps';
import { jobInputBlob, urlDownload } from './input-blob';
import { fullParameters, heartbeating, runStep } from './job-steps';

/**
 * The audio job type (spec §4.11): prepare (probe, decode to 16 kHz mono, plan chunks at silence) and one
 * transcription per chunk on the media queue, each kept under the job so no finished chunk is transcribed twice;
 * `finishAudio` (audio-results.ts) stitches, applies the template and the translation.
 */
export function createAudioActivities(deps: ActivityDeps) {
  const { store, config, media } = deps;
  // A `url` is downloaded into the job as any URL is (SSRF-guarded, at most MAX_UPLOAD_MB); its format is probed after.
  const mediaDownload = urlDownload(config, ['audio/', 'video/']);
  const speechModel = () => deps.speech?.describe().model ?? '';
  const finish = createAudioResults(deps);
  const scratch = scratchAt(config.scratchDir);

  return {
    /**
     * Answers from the result cache when it holds this recording under these parameters (unless `use_cache` is
     * false); else probes the input by content (`INVALID_FORMAT` for anything but the spec's formats or a file
     * without sound), decodes it to a WAV under the job and plans chunks near `AUDIO_CHUNK_SECONDS` at pauses. The
     * plan is a step of the job: a restart reuses it, so chunk numbers keep naming the same audio.
     */
    async prepareAudio(a: {
      jobId: string;
      parameters: TranscriptionParams;
      input?: { key: string; sha256: string };
    }): Promise<AudioPrepared> {
      const { jobId } = a;
      const p = await fullParameters(store, jobId, a.parameters);
      // The input a first step put into the job (a video's download), or the job's file: a file named by path is
      // copied into the job first (heartbeating: a long recording copies for a while).
      const input =
        a.input ??
        (await heartbeating(() =>
          jobInputBlob(store, config.inputRoots, jobId, p, {
            name: 'input.media',
            mime: 'application/octet-stream',
            download: mediaDownload,
          }),
        ));
      const key = await audioCacheKey(input.sha256, p, speechModel(), deps.llm?.describe().model);
      const hit = p.use_cache !== false ? await readCache<AudioOutcome>(store, AUDIO_CACHE_OPERATION, key) : null;
      if (hit) {
        await writeBlobJson(store, cachedAudioKey(jobId), hit);
        return { duration: hit.duration, chunks: [], wavKey: '', wavSha256: '', fromCache: true, cacheKey: key };
      }
      // Copies of large files (a 12 h recording: 1.4 GB of WAV) take longer than the heartbeat timeout: the whole step
      // heartbeats, and a cancel reaches ffmpeg.
      const { value } = await runStep(store, jobId, 'audio-prepare', () =>
        heartbeating((signal) =>
          scratch.withDir('audio-', async (dir) => {
            const file = await copyBlob(store, input.key, path.join(dir, 'input.media'));
            const probe = await media.probe(file, { signal });
            audioFormatOf(probe);
            checkDuration(probe, config.MAX_MEDIA_SECONDS);
            const wav = path.join(dir, 'audio.wav');
            const info = await media.decodeToWav(file, wav, { signal, maxSeconds: config.MAX_MEDIA_SECONDS });
            const plan = await media.planChunks(wav, info.duration, config.AUDIO_CHUNK_SECONDS, { signal });
            const ref = await store.put(jobInternalKey(jobId, 'audio.wav'), createReadStream(wav), {
              mime: 'audio/wav',
            });
            return {
              duration: info.duration,
              chunks: plan.map((c) => ({ start: c.start, end: c.end })),
              wavKey: ref.key,
              wavSha256: ref.sha256,
            };
          }),
        ),
      );
      return {
        ...value,
        fromCache: false,
        cacheKey: key,
        mediaSlots: mediaSlots(config),
        ...(config.SPEECH_PROVIDER === 'openai' ? { remoteSpeech: true } : {}),
      };
    },

    /**
     * Transcribes one chunk of the prepared WAV (cut sample-exact) and keeps the transcript under the job; a chunk
     * already kept (an earlier attempt or run) is not transcribed again. Heartbeats while the engine runs.
     */
    async transcribeChunk(a: {
      jobId: string;
      wavKey: string;
      wavSha256: string;
      index: number;
      start: number;
      end: number;
      language?: string;
    }) {
      const key = chunkKey(a.jobId, a.index);
      if (await store.stat(key)) return { reused: true };
      const speech = deps.speech;
      if (!speech)
        throw ApplicationFailure.nonRetryable(
          'No speech provider is configured (SPEECH_PROVIDER).',
          'PROVIDER_NOT_CONFIGURED',
          { provider: 'speech' },
        );
      const language = a.language && a.language !== 'auto' ? a.language : undefined;
      const t = await heartbeating((signal) =>
        scratch.withBlobFile(store, a.wavKey, a.wavSha256, '.wav', (wav) =>
          scratch.withDir('chunk-', async (dir) => {
            const out = path.join(dir, `chunk-${a.index}.wav`);
            await media.cutChunk(wav, a.start, a.end, out, { signal });
            return speech.transcribe(out, { language, signal });
          }),
        ),
      );
      const kept: ChunkTranscript = {
        index: a.index,
        start: a.start,
        end: a.end,
        language: t.language,
        ...(t.languageProbability !== undefined ? { languageProbability: t.languageProbability } : {}),
        text: t.text,
        segments: t.segments,
        model: t.model,
        duration_ms: t.durationMs,
      };
      await writeBlobJson(store, key, kept);
      countAudioSeconds(a.end - a.start);
      return { reused: false };
    },

    finishAudio: (a: TranscriptionDone) => finish(a, audioData),

    ...createVideoSourceActivities(deps, finish),
  };
}
