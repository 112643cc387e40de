import { AppError } from '../../core/errors';
import type { AudioParams } from '../../core/jobs/job-params';
import { fromCache, resultData, type LlmInfo } from '../../core/results/job-results';
import type { Config } from '../../core/config/config';
import { checkDuration } from '../../core/jobs/input-budgets';
import { SUPPORTED_FORMATS, audioFormatOf } from '../../core/jobs/media-formats';
import type { ApiEngines } from '../engines';
import { errorResponse } from '../openapi';
import type { ApiRouter } from '../api-router';
import { audioProcessBody, audioProcessResult } from '../schemas/audio.schemas';
import { jobBodyParameters } from '../schemas/job-body';
import type { JobService } from '../services/jobs';
import { storeUpload, uploadInput, withUpload } from '../uploads';
import { validateBodyParameters } from '../services/job-intake';
import { runSyncJob } from '../services/sync-answer';
import { answerAudioFromCache } from '../services/direct-answer-media';

/**
 * POST /api/audio/process (spec §4.11, contract §7): the upload is probed by content before any job exists (400
 * `INVALID_FORMAT` otherwise), then runs as an `audio` job; the request waits up to `MEDIA_SYNC_WAIT_MS` with its
 * connection kept open, and past it answers 504 naming the job, whose results hold the same `data`.
 */
export function audioRoutes(
  api: ApiRouter,
  jobs: JobService,
  config: Config,
  engines: Pick<ApiEngines, 'probeMedia'>,
): void {
  api.add({
    method: 'post',
    path: '/api/audio/process',
    summary: 'Transcribe a recording (optionally template and translate it)',
    tags: ['Audio'],
    description:
      'Formats by content: flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav, webm. Long recordings are cut at pauses near AUDIO_CHUNK_SECONDS and transcribed in parallel. ' +
      'A repeated request for the same file, languages and template is answered from the result cache (`X-Cache: hit`) unless `useCache` is false: ' +
      'for an upload by the API itself, without a job (unless the client asks for one with `Prefer: respond-async` or `wait_ms=0`), ' +
      '`process_id` and `process_dir` then naming the job that computed the result (its record and files hold the same data). ' +
      'Waits up to MEDIA_SYNC_WAIT_MS; past it, 504 with `details.job_id` (the job goes on; GET /api/jobs/{job_id} ' +
      'gives the same data in `results`).',
    body: audioProcessBody,
    bodyTypes: ['multipart'],
    responses: {
      200: { description: 'The transcript', content: { 'application/json': { schema: audioProcessResult } } },
      400: errorResponse('Not a supported audio or video format, or no audio stream'),
      403: errorResponse('The url is not allowed (a private, loopback or metadata address)'),
      502: errorResponse('The url could not be fetched'),
      422: errorResponse(
        'The recording could not be decoded, or lasts longer than MAX_MEDIA_SECONDS, or diarize was asked of the hosted speech provider',
      ),
      504: errorResponse('Still running; poll details.job_id'),
    },
    handler: async (ctx, { body }) => {
      const started = performance.now();
      const timestamp = new Date().toISOString();
      // A long recording takes long: no socket timeout cuts the wait, and TCP keep-alive holds idle links open.
      ctx.req.socket.setTimeout(0);
      ctx.req.socket.setKeepAlive(true, 30_000);
      if ((body.file === undefined) === (body.url === undefined)) {
        throw new AppError('VALIDATION_ERROR', 'Give exactly one of file and url.', {
          issues: [{ path: 'file', message: 'give exactly one of file and url' }],
        });
      }
      const options = jobBodyParameters('audio', body);
      const run = (parameters: AudioParams) =>
        runSyncJob(ctx, jobs, { jobType: 'audio', parameters }, config.MEDIA_SYNC_WAIT_MS);
      let done;
      if (!body.file) {
        // A URL is downloaded by the job (SSRF-guarded, at most MAX_UPLOAD_MB) and probed there: a file that is not
        // audio fails the job with INVALID_FORMAT.
        done = await run(validateBodyParameters('audio', options));
      } else {
        if (body.file.size === 0)
          throw new AppError('INVALID_FORMAT', 'The file is empty.', {
            error_type: 'empty',
            supported_formats: [...SUPPORTED_FORMATS],
          });
        // A cache hit is answered without a job (issue 24), before the probe: the entry's bytes were probed by its job.
        if (await answerAudioFromCache(ctx, { jobs, config }, body.file, options, { started, timestamp })) return;
        const probe = await engines.probeMedia(body.file.filepath);
        audioFormatOf(probe);
        checkDuration(probe, config.MAX_MEDIA_SECONDS);
        const upload = await storeUpload(jobs.store, body.file);
        const parameters = validateBodyParameters('audio', options, uploadInput(upload));
        done = await withUpload(jobs, upload, () => run(parameters));
      }
      const cached = fromCache(done.results);
      const llmInfo = (done.results?.llm_info as LlmInfo | undefined) ?? {
        total_tokens: 0,
        total_cost: 0,
        requests: [],
      };
      ctx.set('X-Cache', cached ? 'hit' : 'miss');
      ctx.body = {
        status: 'success',
        request: { id: String(ctx.state.requestId ?? done.job_id), timestamp },
        process: { duration_ms: Math.round(performance.now() - started), llm_info: llmInfo },
        data: { ...resultData(done.results), from_cache: cached },
      };
    },
  });
}
