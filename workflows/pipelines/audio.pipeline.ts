import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { bookkeepingRemote, cpuBound, modelCall } from '../activity-options';
import type { PipelineContext } from './context';

/**
 * The audio job type (spec §4.11): prepare (probe, decode, chunk plan; or a result-cache hit) → one transcription
 * per chunk on the media queue, in parallel across its slots, progress in percent of audio seconds done → stitch,
 * template, translation and results. Transcripts stay in the blob store; the history carries chunk spans only.
 */
export async function audioPipeline(ctx: PipelineContext): Promise<Record<string, unknown>> {
  const media = proxyActivities<Activities>({ ...cpuBound, taskQueue: workflowInfo().taskQueue.replace(/-io$/, '-media') });
  const { jobId, parameters } = ctx.input;
  // The last step may ask the model (a template; a translation when the spoken language is not the target).
  const mayAsk = Boolean(parameters.template) || parameters.target_language !== parameters.source_language;
  const io = proxyActivities<Activities>(mayAsk ? modelCall : { ...bookkeepingRemote, startToCloseTimeout: '10m' });
  ctx.progress('prepare', 2, 'Decoding the audio');
  const prep = await media.prepareAudio({ jobId, parameters });
  if (prep.fromCache) ctx.log('info', 'Transcript from the result cache');
  else {
    ctx.log('info', `${prep.duration.toFixed(1)} s of audio in ${prep.chunks.length} chunk(s)`);
    const language = typeof parameters.source_language === 'string' ? parameters.source_language : undefined;
    let seconds = 0;
    let reused = 0;
    await Promise.all(
      prep.chunks.map(async (c, index) => {
        const r = await media.transcribeChunk({ jobId, wavKey: prep.wavKey, wavSha256: prep.wavSha256, index, start: c.start, end: c.end, language });
        if (r.reused) reused += 1;
        seconds += c.end - c.start;
        const share = prep.duration > 0 ? Math.min(1, seconds / prep.duration) : 1;
        ctx.progress('transcribe', 5 + Math.floor(85 * share), `${Math.round(100 * share)} % of the audio transcribed (${seconds.toFixed(1)} of ${prep.duration.toFixed(1)} s)`);
      }),
    );
    if (reused) ctx.log('info', `${reused} chunk(s) reused from earlier work`);
  }
  ctx.progress('finish', 92, 'Writing the results');
  const fin = await io.finishAudio({ jobId, parameters, chunks: prep.chunks, duration: prep.duration, fromCache: prep.fromCache, cacheKey: prep.cacheKey });
  return fin.results;
}
