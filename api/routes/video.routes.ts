import type { Config } from '../../core/config';
import { AppError } from '../../core/errors';
import { DISCARD_UPLOAD } from '../../core/job-params';
import { videoMetadata } from '../../providers/media/formats';
import { frameTimes, parseFrameRequest } from '../../providers/media/frames';
import { probeMedia } from '../../providers/media/probe';
import { errorResponse } from '../openapi';
import type { ApiRouter } from '../route';
import { framesBody, framesResult } from '../schemas/video.schemas';
import type { JobService } from '../services/jobs';
import { answerWithResults } from '../services/sync-answer';
import { storeUpload, withUpload } from '../uploads';

/**
 * Video (spec §4.7): `/api/video/frames`. The request and the file are checked here, before any job: a bad
 * `timestamps` or `interval` (or too many frames) is a 400 before ffmpeg runs, a file without a video stream a 400
 * `INVALID_FORMAT`. The frames are extracted by a `video_frames` job on the media queue.
 */
export function videoRoutes(api: ApiRouter, jobs: JobService, config: Config): void {
  api.add({
    method: 'post',
    path: '/api/video/frames',
    summary: 'Video frames as JPEG at given times',
    description:
      'Frames at the sorted union of `timestamps` and the `interval` grid (0, interval, 2·interval…), times at or past the end dropped; at least one of the two is required, at most MAX_FRAMES frames. Each `path` downloads at `GET /api/event-job/files/{path}`.',
    tags: ['Video'],
    body: framesBody,
    bodyTypes: ['multipart'],
    responses: {
      200: { description: 'The frames in time order', content: { 'application/json': { schema: framesResult } } },
      400: errorResponse('No or bad timestamps/interval, too many frames, or not a video'),
      504: errorResponse('Still running; poll details.job_id'),
    },
    handler: async (ctx, { body }) => {
      const request = parseFrameRequest(body.timestamps, body.interval, config.MAX_FRAMES);
      if (body.file.size === 0) throw new AppError('INVALID_FORMAT', 'The file is empty.', { error_type: 'empty' });
      const probe = await probeMedia(body.file.filepath, { timeoutMs: 60_000 });
      const meta = videoMetadata(probe);
      if (!meta) throw new AppError('INVALID_FORMAT', 'The file has no video stream', { error_type: 'no_video_stream' });
      frameTimes(request, meta.duration, config.MAX_FRAMES); // too many frames: 400 here rather than in the job
      const upload = await storeUpload(jobs.store, body.file);
      const parameters = { file_key: upload.key, file_sha256: upload.sha256, [DISCARD_UPLOAD]: true, original_name: upload.originalName, ...request };
      await withUpload(jobs.store, upload, async () => answerWithResults(ctx, await jobs.runSync({ jobType: 'video_frames', parameters }, config.SYNC_WAIT_MS)));
    },
  });
}
