import { createReadStream } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { AppError } from '../core/errors';
import { writeBlobJson } from '../core/stores/blob-store';
import { cachedTranscription } from '../capabilities/transcription';
import { mediaSlots } from '../core/config/config';
import type { TranscriptionParams } from '../core/jobs/job-params';
import { countAudioSeconds } from '../core/runtime/metrics';
import { type JobFields, resultPreview, writeJobResults } from '../core/results/job-results';
import { jobInternalKey, jobOutputPrefix } from '../core/stores/records';
import { copyBlob, scratchAt } from '../core/stores/scratch';
import { audioData } from '../core/results/result-shapes';
import { checkDuration } from '../core/jobs/input-budgets';
import { audioFormatOf } from '../core/jobs/media-formats';
import { audioCacheKey, cachedAudioKey, chunkKey, createAudioResults, type TranscriptionDone } from './audio-results';
import { createVideoSourceActivities } from './audio-video-source';
import type { AudioPrepared, ChunkTranscript } from './audio-types';
import type { ActivityDeps } from './deps';
import { jobInputBlob, urlDownload } from './input-blob';
import { fullParameters, heartbeating, runStep } from './job-steps';

/** Seconds of a recording's head the local engine gets for language detection: room for 30 s of speech after pauses. */
const DETECT_HEAD_SECONDS = 120;

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
  // Speaker labels need the local engine's speaker model: a hosted endpoint cannot honour `diarize` (no silent
  // transcript without speakers).
  const refuseUnsupported = (p: TranscriptionParams) => {
    if (p.diarize === true && deps.speech?.describe().provider === 'openai')
      throw new AppError(
        'UNPROCESSABLE_INPUT',
        'diarize is not available with the hosted speech provider (SPEECH_PROVIDER=openai): speaker labels need the local engine.',
        { reason: 'option_not_supported', option: 'diarize', provider: 'openai' },
      );
  };

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
        (await heartbeating((signal) =>
          jobInputBlob(store, config.inputRoots, jobId, p, {
            name: 'input.media',
            mime: 'application/octet-stream',
            download: { ...mediaDownload, signal },
          }),
        ));
      refuseUnsupported(p);
      const key = await audioCacheKey(input.sha256, p, speechModel(), deps.llm?.describe().model);
      const hit = p.use_cache !== false ? await cachedTranscription(store, key, { count: true }) : null;
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
      /** False: no voice activity detection (default on). */
      vad?: boolean;
      /** Names and terms to steer the spelling. */
      prompt?: string;
      /** Word timings asked (a remote endpoint gives them only then; the local engine always does). */
      words?: boolean;
      /** `diarize`: speaker embeddings of the speech kept beside the transcript (the local engine only). */
      speakers?: boolean;
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
            return speech.transcribe(out, {
              language,
              signal,
              vad: a.vad,
              prompt: a.prompt,
              words: a.words,
              ...(a.speakers ? { speakers: true } : {}),
            });
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
        ...(t.speakerWindows ? { speakerWindows: t.speakerWindows } : {}),
      };
      await writeBlobJson(store, key, kept);
      countAudioSeconds(a.end - a.start);
      return { reused: false };
    },

    finishAudio: (a: TranscriptionDone) => finish(a, audioData),

    /**
     * `/api/audio/detect-language`: the spoken language of the recording's first 30 s of speech, in one step on the
     * media queue. Only the head of the recording is decoded (the local engine's VAD finds the speech in it; a remote
     * endpoint is given its first 30 s to transcribe, the protocol having no detection of its own); the rest is
     * neither decoded nor transcribed. Writes the results (`language`, `language_probability`, `duration`, `model`).
     */
    async detectAudioLanguage(a: { jobId: string; parameters: TranscriptionParams }) {
      const { jobId } = a;
      const p = await fullParameters(store, jobId, a.parameters);
      const speech = deps.speech;
      if (!speech)
        throw ApplicationFailure.nonRetryable(
          'No speech provider is configured (SPEECH_PROVIDER).',
          'PROVIDER_NOT_CONFIGURED',
          { provider: 'speech' },
        );
      const input = await heartbeating((signal) =>
        jobInputBlob(store, config.inputRoots, jobId, p, {
          name: 'input.media',
          mime: 'application/octet-stream',
          download: { ...mediaDownload, signal },
        }),
      );
      const head = config.SPEECH_PROVIDER === 'openai' ? 30 : DETECT_HEAD_SECONDS;
      const found = await heartbeating((signal) =>
        scratch.withDir('detect-', async (dir) => {
          const file = await copyBlob(store, input.key, path.join(dir, 'input.media'));
          const probe = await media.probe(file, { signal });
          audioFormatOf(probe);
          const wav = path.join(dir, 'head.wav');
          const info = await media.decodeToWav(file, wav, { signal, headSeconds: head });
          const heard = await speech.detectLanguage(wav, { signal, vad: p.vad !== false });
          return { ...heard, duration: probe.duration ?? info.duration, read: info.duration };
        }),
      );
      const data = {
        language: found.language,
        language_probability: found.probability === null ? null : Math.round(found.probability * 1e4) / 1e4,
        duration: Math.round(found.duration * 1000) / 1000,
        model: found.model,
      };
      const job: JobFields = {
        structured_data: { extracted_text: '', metadata: { ...data, seconds_read: found.read } },
        assets: [],
        target_dir: jobOutputPrefix(jobId).slice(0, -1),
        from_cache: false,
      };
      await writeJobResults(store, jobId, data, job);
      return { results: resultPreview(job) };
    },

    ...createVideoSourceActivities(deps, finish),
  };
}
