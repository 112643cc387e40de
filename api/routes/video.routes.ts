import type { Context } from 'koa';
import type { Config } from '../../core/config/config';
import { AppError } from '../../core/errors';
import type { VideoParams } from '../../core/jobs/job-params';
import { frameTimes, parseFrameRequest } from '../../core/jobs/frame-request';
import { checkDuration, checkPixelBudget } from '../../core/jobs/input-budgets';
import { transcribableVideo, videoMetadata } from '../../core/jobs/media-formats';
import type { ApiEngines } from '../engines';
import { errorResponse } from '../openapi';
import type { ApiRouter } from '../api-router';
import {
  framesBody,
  framesResult,
  videoHostedBody,
  videoHostedResult,
  videoProcessBody,
  videoProcessResult,
} from '../schemas/video.schemas';
import { jobBodyParameters } from '../schemas/job-body';
import type { JobService } from '../services/jobs';
import { answerSync } from '../services/sync-answer';
import { answerVideoFromCache } from '../services/direct-answer-media';
import { storeUpload, uploadInput, withUpload } from '../uploads';
import { validateBodyParameters } from '../services/job-intake';

/**
 * Video (spec §4.7): `/api/video/process` and `/api/video/hosted` (`videoTranscriptionRoutes`), `/api/video/frames`.
 * The request and the file are checked here, before any job: a bad
 * `timestamps` or `interval` (or too many frames) is a 400 before ffmpeg runs, a file without a video stream a 400
 * `INVALID_FORMAT`. The frames are extracted by a `video_frames` job on the media queue.
 */
export function videoRoutes(api: ApiRouter, jobs: JobService, config: Config, engines: ApiEngines): void {
  videoTranscriptionRoutes(api, jobs, config, engines);
  api.add({
    method: 'post',
    path: '/api/video/frames',
    summary: 'Video frames as JPEG at given times',
    description:
      'Frames at the sorted union of `timestamps` and the `interval` grid (0, interval, 2·interval…), times at or ' +
      'past the end dropped; at least one of the two is required, at most MAX_FRAMES frames. Each `path` downloads ' +
      'at `GET /api/event-job/files/{path}`.',
    tags: ['Video'],
    body: framesBody,
    bodyTypes: ['multipart'],
    responses: {
      200: { description: 'The frames in time order', content: { 'application/json': { schema: framesResult } } },
      400: errorResponse('No or bad timestamps/interval, too many frames, or not a video'),
      422: errorResponse('The video could not be read, or its frames exceed MAX_IMAGE_PIXELS'),
      504: errorResponse('Still running; poll details.job_id'),
    },
    handler: async (ctx, { body }) => {
      const request = parseFrameRequest(body.timestamps, body.interval, config.MAX_FRAMES);
      if (body.file.size === 0) throw new AppError('INVALID_FORMAT', 'The file is empty.', { error_type: 'empty' });
      const probe = await engines.probeMedia(body.file.filepath, { timeoutMs: 60_000 });
      const meta = videoMetadata(probe);
      if (!meta)
        throw new AppError('INVALID_FORMAT', 'The file has no video stream', { error_type: 'no_video_stream' });
      checkPixelBudget(probe.video!, config.MAX_IMAGE_PIXELS, 'The video');
      frameTimes(request, meta.duration, config.MAX_FRAMES); // too many frames: 400 here rather than in the job
      const upload = await storeUpload(jobs.store, body.file);
      const parameters = {
        file_key: upload.key,
        file_sha256: upload.sha256,
        original_name: upload.originalName,
        ...request,
      };
      await withUpload(jobs, upload, () =>
        answerSync(ctx, jobs, { jobType: 'video_frames', parameters }, config.SYNC_WAIT_MS),
      );
    },
  });
}

const transcriptionErrors = {
  403: errorResponse('The URL is not allowed (a private, loopback or metadata address)'),
  413: errorResponse('The video is larger than MAX_UPLOAD_MB'),
  422: errorResponse(
    'The recording could not be decoded, or lasts longer than MAX_MEDIA_SECONDS, or diarize was asked of the hosted speech provider',
  ),
  502: errorResponse('The URL could not be downloaded'),
  504: errorResponse('Still running; poll details.job_id'),
};

/**
 * `/api/video/process` and `/api/video/hosted`: a `video` job (download, the audio job's transcription of the sound,
 * the §4.7 data). An upload is probed before any job (400 `INVALID_FORMAT` without sound or picture); a URL is
 * downloaded by the job, which fails the same way. The request waits up to `MEDIA_SYNC_WAIT_MS`, then 504 naming the
 * job, whose results hold the same `data`.
 */
function videoTranscriptionRoutes(api: ApiRouter, jobs: JobService, config: Config, engines: ApiEngines): void {
  /** The video job of the body's parameters (`jobBodyParameters`) and what the route adds, waited for. */
  const run = async (ctx: Context, fromBody: Partial<VideoParams>, fromRoute: Record<string, unknown> = {}) => {
    await answerSync(
      ctx,
      jobs,
      { jobType: 'video', parameters: validateBodyParameters('video', fromBody, fromRoute) },
      config.MEDIA_SYNC_WAIT_MS,
    );
  };
  const holdOpen = (ctx: Context) => {
    // A long video takes long: no socket timeout cuts the wait, and TCP keep-alive holds idle links open.
    ctx.req.socket.setTimeout(0);
    ctx.req.socket.setKeepAlive(true, 30_000);
  };

  api.add({
    method: 'post',
    path: '/api/video/process',
    summary: 'Transcribe a video (upload or URL) and read its picture metadata',
    tags: ['Video'],
    description:
      'Give `file` or `url`. The sound is transcribed as by /api/audio/process (template, translation, result cache); `metadata` is read by ffprobe. ' +
      'A cached upload is answered by the API without a job (`X-Cache: hit`), unless `useCache` is false or the client asks for a job (`Prefer: respond-async`, `wait_ms=0`). ' +
      'A URL is downloaded by the job (private, loopback and metadata addresses refused unless ALLOW_PRIVATE_URLS=true). ' +
      'Waits up to MEDIA_SYNC_WAIT_MS; past it, 504 with `details.job_id`.',
    body: videoProcessBody,
    bodyTypes: ['multipart', 'json'],
    responses: {
      200: {
        description: 'The transcription and the picture metadata',
        content: { 'application/json': { schema: videoProcessResult } },
      },
      400: errorResponse('Neither or both of file and url; not a supported format, or no audio or video stream'),
      ...transcriptionErrors,
    },
    handler: async (ctx, { body }) => {
      holdOpen(ctx);
      if ((body.file === undefined) === (body.url === undefined)) {
        throw new AppError('VALIDATION_ERROR', 'Give exactly one of file and url.', {
          issues: [{ path: 'file', message: 'give exactly one of file and url' }],
        });
      }
      const params = jobBodyParameters('video', body);
      if (!body.file) return run(ctx, params);
      if (body.file.size === 0) throw new AppError('INVALID_FORMAT', 'The file is empty.', { error_type: 'empty' });
      const probe = await engines.probeMedia(body.file.filepath, { timeoutMs: 60_000 });
      const picture = transcribableVideo(probe);
      checkDuration(probe, config.MAX_MEDIA_SECONDS);
      // A cache hit is answered without a job (issue 24), before the upload is stored.
      if (await answerVideoFromCache(ctx, { jobs, config }, body.file, params, picture)) return;
      const upload = await storeUpload(jobs.store, body.file);
      await withUpload(jobs, upload, () => run(ctx, params, uploadInput(upload)));
    },
  });

  api.add({
    method: 'post',
    path: '/api/video/hosted',
    summary: 'Download a video from a hosting platform (yt-dlp) and transcribe it',
    tags: ['Video'],
    description:
      'The page is read by yt-dlp (title, uploader, views, description) and its video transcribed as by /api/video/process. Needs yt-dlp (YTDLP_PATH), else 503. ' +
      'Waits up to MEDIA_SYNC_WAIT_MS; past it, 504 with `details.job_id`.',
    body: videoHostedBody,
    bodyTypes: ['multipart', 'json'],
    responses: {
      200: {
        description: "The platform's metadata and the transcription",
        content: { 'application/json': { schema: videoHostedResult } },
      },
      400: errorResponse('No url; the video has no sound or picture'),
      ...transcriptionErrors,
      503: errorResponse('yt-dlp is not installed'),
    },
    handler: async (ctx, { body }) => {
      holdOpen(ctx);
      await engines.checkHostedVideo();
      await run(ctx, jobBodyParameters('video', body), { hosted: true });
    },
  });
}
