import type { Context } from 'koa';
import type { Config } from '../../core/config/config';
import { AppError } from '../../core/errors';
import { checkDuration } from '../../core/jobs/input-budgets';
import type { AudioParams } from '../../core/jobs/job-params';
import { fromCache, resultData } from '../../core/results/job-results';
import { SUPPORTED_FORMATS, audioFormatOf } from '../../core/jobs/media-formats';
import type { AudioSegment } from '../../core/results/result-shapes';
import { languageName } from '../../core/jobs/speech-languages';
import type { ApiEngines } from '../engines';
import { errorResponse } from '../openapi';
import type { ApiRouter } from '../api-router';
import {
  detectLanguageBody,
  detectLanguageResult,
  openAiTranscriptionBody,
  openAiTranscriptionResult,
} from '../schemas/speech.schemas';
import type { JobService } from '../services/jobs';
import { storeUpload, uploadInput, withUpload, type UploadedFile } from '../uploads';
import { validateParameters } from '../services/job-intake';
import { answerSync, runSyncJob } from '../services/sync-answer';
import { transcriptionFromCache } from '../services/direct-answer-media';

/** The fields of an audio job's data the OpenAI formats are cut from. */
type TranscriptionFields = {
  original_text: string;
  detected_language: string;
  duration: number;
  segments: AudioSegment[];
  subtitles?: string;
};

const holdOpen = (ctx: Context) => {
  // A long recording takes long: no socket timeout cuts the wait, and TCP keep-alive holds idle links open.
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setKeepAlive(true, 30_000);
};

const transcriptionErrors = {
  403: errorResponse('The url is not allowed (a private, loopback or metadata address)'),
  422: errorResponse('The recording could not be decoded, or lasts longer than MAX_MEDIA_SECONDS'),
  502: errorResponse('The url could not be fetched, or the hosted speech endpoint failed'),
  504: errorResponse('Still running; poll details.job_id'),
};

/**
 * Speech endpoints beyond the spec (contract §9): `POST /api/audio/detect-language` (the language of the first 30 s
 * of speech, as an `audio` job that transcribes nothing) and the OpenAI-compatible `POST /v1/audio/transcriptions`
 * (an `audio` job like /api/audio/process, answered in OpenAI's shapes), both behind the service's key.
 */
export function speechRoutes(
  api: ApiRouter,
  jobs: JobService,
  config: Config,
  engines: Pick<ApiEngines, 'probeMedia'>,
): void {
  /** The upload probed by content (400 INVALID_FORMAT before any job), then stored. */
  const probedUpload = async (file: UploadedFile, opts: { duration: boolean }) => {
    if (file.size === 0)
      throw new AppError('INVALID_FORMAT', 'The file is empty.', {
        error_type: 'empty',
        supported_formats: [...SUPPORTED_FORMATS],
      });
    const probe = await engines.probeMedia(file.filepath);
    audioFormatOf(probe);
    if (opts.duration) checkDuration(probe, config.MAX_MEDIA_SECONDS);
    return storeUpload(jobs.store, file);
  };

  api.add({
    method: 'post',
    path: '/api/audio/detect-language',
    summary: 'Detect the spoken language of a recording (first 30 s of speech)',
    tags: ['Audio'],
    description:
      'Give `file` or `url`. Only the head of the recording is decoded; the local engine finds the first 30 s of speech ' +
      'in it (voice activity detection) and Whisper names its language with a probability. Nothing is transcribed. ' +
      'With SPEECH_PROVIDER=openai the first 30 s are transcribed and the language the endpoint reports is answered ' +
      '(probability null). Waits up to MEDIA_SYNC_WAIT_MS; past it, 504 with `details.job_id`.',
    body: detectLanguageBody,
    bodyTypes: ['multipart', 'json'],
    responses: {
      200: { description: 'The language', content: { 'application/json': { schema: detectLanguageResult } } },
      400: errorResponse('Neither or both of file and url; not a supported audio or video format, or no audio stream'),
      ...transcriptionErrors,
    },
    handler: async (ctx, { body }) => {
      holdOpen(ctx);
      if ((body.file === undefined) === (body.url === undefined)) {
        throw new AppError('VALIDATION_ERROR', 'Give exactly one of file and url.', {
          issues: [{ path: 'file', message: 'give exactly one of file and url' }],
        });
      }
      const options = { source_language: 'auto', target_language: 'auto', detect_language: true, use_cache: false };
      const params = { ...options, ...(body.vad === false ? { vad: false } : {}) };
      const run = (parameters: AudioParams) =>
        answerSync(ctx, jobs, { jobType: 'audio', parameters }, config.MEDIA_SYNC_WAIT_MS);
      if (!body.file) return run(validateParameters('audio', { url: body.url, ...params }));
      // The head is read whatever the length: no MAX_MEDIA_SECONDS check.
      const upload = await probedUpload(body.file, { duration: false });
      await withUpload(jobs, upload, () => run(validateParameters('audio', { ...uploadInput(upload), ...params })));
    },
  });

  api.add({
    method: 'post',
    path: '/v1/audio/transcriptions',
    summary: 'OpenAI-compatible transcription (createTranscription)',
    tags: ['Audio'],
    description:
      "OpenAI's `POST /v1/audio/transcriptions`, so clients written for it work unchanged (base URL `<server>/v1`, the " +
      "service's key as the API key). The recording runs as an `audio` job (chunking, VAD, result cache) on the " +
      'configured speech model, whatever `model` names; no translation. `response_format`: `json` ({text}), `text`, ' +
      '`srt`, `vtt`, `verbose_json` ({task, language, duration, text, segments, words with ' +
      '`timestamp_granularities[]=word`}). A cached recording is answered by the API without a job (`X-Cache: hit`, no ' +
      '`X-Job-Id`; `Prefer: respond-async` or `wait_ms=0` still asks for one). ' +
      'Errors keep the service envelope (`error.message`, `error.code`). Waits up ' +
      'to MEDIA_SYNC_WAIT_MS; past it, 504 with `details.job_id`.',
    body: openAiTranscriptionBody,
    bodyTypes: ['multipart'],
    responses: {
      200: {
        description: 'The transcript in the asked format',
        content: {
          'application/json': { schema: openAiTranscriptionResult },
          'text/plain': { schema: { type: 'string' } },
          'text/vtt': { schema: { type: 'string' } },
        },
      },
      400: errorResponse('A field is invalid (a temperature other than 0, an unknown format); not a supported format'),
      ...transcriptionErrors,
    },
    handler: async (ctx, { body }) => {
      holdOpen(ctx);
      const format = body.response_format ?? 'json';
      const granularities = body['timestamp_granularities[]'] ?? [];
      const wantWords = granularities.includes('word');
      if (wantWords && format !== 'verbose_json') {
        throw new AppError('VALIDATION_ERROR', 'timestamp_granularities needs response_format=verbose_json.', {
          issues: [{ path: 'timestamp_granularities', message: 'only with response_format=verbose_json' }],
        });
      }
      const options = {
        source_language: body.language ?? 'auto',
        target_language: 'auto',
        ...(body.prompt?.trim() ? { prompt: body.prompt.trim() } : {}),
        ...(wantWords ? { word_timestamps: true } : {}),
        ...(format === 'srt' || format === 'vtt' ? { subtitles: format } : {}),
      };
      // A cache hit is answered without a job (issue 24; `X-Cache: hit`, no `X-Job-Id`), before the probe: the
      // entry's bytes were probed by its job.
      let data = (await transcriptionFromCache(
        ctx,
        { jobs, config },
        body.file,
        options,
      )) as TranscriptionFields | null;
      if (!data) {
        const upload = await probedUpload(body.file, { duration: true });
        const parameters = validateParameters('audio', { ...uploadInput(upload), ...options });
        const done = await withUpload(jobs, upload, () =>
          runSyncJob(ctx, jobs, { jobType: 'audio', parameters }, config.MEDIA_SYNC_WAIT_MS),
        );
        data = resultData(done.results) as unknown as TranscriptionFields;
        ctx.set('X-Cache', fromCache(done.results) ? 'hit' : 'miss');
        ctx.set('X-Job-Id', done.job_id);
      }
      if (format === 'text') {
        ctx.type = 'text/plain; charset=utf-8';
        ctx.body = `${data.original_text}\n`;
      } else if (format === 'srt' || format === 'vtt') {
        ctx.type = format === 'srt' ? 'text/plain; charset=utf-8' : 'text/vtt; charset=utf-8';
        ctx.body = data.subtitles ?? '';
      } else if (format === 'json') {
        ctx.body = { text: data.original_text };
      } else {
        ctx.body = {
          task: 'transcribe',
          language: languageName(data.detected_language) ?? data.detected_language,
          duration: data.duration,
          text: data.original_text,
          segments: data.segments.map((s) => ({ id: s.id, start: s.start, end: s.end, text: s.text })),
          ...(wantWords
            ? {
                words: data.segments.flatMap((s) =>
                  (s.words ?? []).map((w) => ({ word: w.word.trim(), start: w.start, end: w.end })),
                ),
              }
            : {}),
        };
      }
    },
  });
}
