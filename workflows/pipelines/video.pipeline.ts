import { activitiesFor, downloadRoute } from '../routing';
import { transcribeMedia, transcriptionFinisher } from './audio.pipeline';
import type { PipelineContext } from './context';

/**
 * The video job type (spec §4.7): the video into the job on the download queue (a URL through the SSRF-guarded download, a
 * hosted page through yt-dlp; probed: `INVALID_FORMAT` without sound or picture) → the audio job's transcription of
 * its sound → `finishVideo` writes the §4.7 data (picture metadata from ffprobe, or the platform's for hosted).
 */
export async function videoPipeline(ctx: PipelineContext<'video'>): Promise<Record<string, unknown>> {
  // A download of a long video takes a while; the activity heartbeats, so a dead worker is noticed within 30 s.
  const { jobId, parameters } = ctx.input;
  ctx.progress('download', 1, typeof parameters.url === 'string' ? 'Downloading the video' : 'Reading the video');
  const input = await activitiesFor({ download: downloadRoute() }).fetchVideoInput({ jobId, parameters });
  const io = transcriptionFinisher(ctx);
  const fin = await io.finishVideo(await transcribeMedia(ctx, input));
  return fin.results;
}
