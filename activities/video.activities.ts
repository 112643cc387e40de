import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../core/errors';
import type { VideoFramesParams } from '../core/jobs/job-params';
import { type JobFields, resultPreview, writeJobResults } from '../core/results/job-results';
import { jobOutputKey, jobOutputPrefix } from '../core/stores/records';
import { scratchAt } from '../core/stores/scratch';
import { checkPixelBudget } from '../core/jobs/input-budgets';
import { videoFramesData, type VideoFrame } from '../core/results/result-shapes';
import { videoMetadata } from '../core/jobs/media-formats';
import { frameTimes } from '../core/jobs/frame-request';
import type { ActivityDeps } from './deps';
import { heartbeating } from './job-steps';

export function createVideoActivities(deps: ActivityDeps) {
  const { store, config, media } = deps;
  return {
    /**
     * The `video_frames` job in one step on the media queue: probes the upload, extracts a JPEG per frame time (the
     * sorted union of the timestamps and the interval grid, times past the end dropped) into the job's output folder
     * `frames/`, and writes the results. Heartbeats throughout, so a cancel kills ffmpeg.
     */
    async extractVideoFrames({ jobId, parameters: p }: { jobId: string; parameters: VideoFramesParams }) {
      return scratchAt(config.scratchDir).withDir('frames-', async (dir) => {
        const job = await heartbeating(async (signal) => {
          const input = path.join(dir, 'input');
          await pipeline(await store.get(p.file_key), createWriteStream(input), { signal });
          const probe = await media.probe(input, { signal });
          const meta = videoMetadata(probe);
          if (!meta)
            throw new AppError('INVALID_FORMAT', 'The file has no video stream', { error_type: 'no_video_stream' });
          checkPixelBudget(probe.video!, config.MAX_IMAGE_PIXELS, 'The video');
          const times = frameTimes(
            { timestamps: p.timestamps, interval: p.interval },
            meta.duration,
            config.MAX_FRAMES,
          );
          const frames: VideoFrame[] = [];
          for (const f of await media.extractFrames(input, times, dir, { signal, streamIndex: probe.video?.index })) {
            const key = jobOutputKey(jobId, `frames/${path.basename(f.path)}`);
            await store.putFile(key, f.path, { mime: 'image/jpeg' });
            frames.push({ timestamp: f.time, path: key });
          }
          const fields: JobFields = {
            structured_data: { extracted_text: '', metadata: { ...meta, frame_count: frames.length } },
            assets: frames.map((f) => f.path),
            target_dir: jobOutputPrefix(jobId).slice(0, -1),
            from_cache: false,
          };
          await writeJobResults(store, jobId, videoFramesData(frames), fields);
          return fields;
        });
        return { frames: job.assets.length, results: resultPreview(job) };
      });
    },
  };
}
