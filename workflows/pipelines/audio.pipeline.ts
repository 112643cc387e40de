import { patched } from '@temporalio/workflow';
import type { TranscriptionDone } from '../../activities/audio-results';
import { mediaFanout } from '../../core/jobs/fanout';
import { boundedMap } from '../fanout';
import { activitiesFor, modelRoute, PRIORITY } from '../routing';
import type { PipelineContext } from './context';

/**
 * The activities that end a transcription: they may ask the model (a template; a translation into another language),
 * then on the llm queue.
 */
export function transcriptionFinisher(ctx: PipelineContext<'audio' | 'video'>) {
  const { parameters, jobId } = ctx.input;
  const mayAsk = Boolean(parameters.template) || parameters.target_language !== parameters.source_language;
  return activitiesFor({ jobId, model: modelRoute(mayAsk) });
}

/**
 * The transcription of an audio or video job (spec §4.11): prepare (probe, decode, chunk plan; or a result-cache
 * hit) → one transcription per chunk on the media queue, at most twice the media worker's slots of them in flight
 * (core/jobs/fanout.ts), progress in percent of audio
 * seconds done. Returns what the finishing activity needs (`finishAudio`, `finishVideo`: stitch, template,
 * translation and results). Transcripts stay in the blob store; the history carries chunk spans only. `input`: the
 * blob a first step put into the job (else the job's file).
 */
export async function transcribeMedia(
  ctx: PipelineContext<'audio' | 'video'>,
  input?: { key: string; sha256: string },
): Promise<TranscriptionDone> {
  const { jobId, parameters } = ctx.input;
  // Runs recorded before the bound scheduled every chunk at once, without a fairness key.
  const bounded = patched('bounded-fanout');
  const media = activitiesFor({ jobId, fair: bounded, priority: PRIORITY.first });
  ctx.progress('prepare', 2, 'Decoding the audio');
  const prep = await media.prepareAudio(input ? { jobId, parameters, input } : { jobId, parameters });
  if (prep.fromCache) ctx.log('info', 'Transcript from the result cache');
  else {
    ctx.log('info', `${prep.duration.toFixed(1)} s of audio in ${prep.chunks.length} chunk(s)`);
    const language = typeof parameters.source_language === 'string' ? parameters.source_language : undefined;
    // Options beyond the spec (contract §9), in a chunk's arguments only when given: the steps of jobs without them
    // are scheduled as before.
    const speechOptions = {
      ...(parameters.vad === false ? { vad: false } : {}),
      ...(typeof parameters.prompt === 'string' && parameters.prompt.trim() ? { prompt: parameters.prompt } : {}),
      ...(parameters.word_timestamps === true || parameters.subtitles ? { words: true } : {}),
      ...(parameters.diarize === true ? { speakers: true } : {}),
    };
    let seconds = 0;
    let reused = 0;
    const fanout = mediaFanout(prep.mediaSlots);
    // A recording that fits in one wave goes ahead of big jobs' backlogs (routing.ts PRIORITY).
    // A hosted speech endpoint's outage is waited out (remoteMediaCall); the local engine keeps cpuBound's 5 attempts.
    const chunkSteps = activitiesFor({
      jobId,
      fair: bounded,
      priority: prep.chunks.length <= fanout ? PRIORITY.small : PRIORITY.big,
      remoteEngine: prep.remoteSpeech,
    });
    const transcribe = async (c: (typeof prep.chunks)[number], index: number) => {
      const r = await chunkSteps.transcribeChunk({
        jobId,
        wavKey: prep.wavKey,
        wavSha256: prep.wavSha256,
        index,
        start: c.start,
        end: c.end,
        language,
        ...speechOptions,
      });
      if (r.reused) reused += 1;
      seconds += c.end - c.start;
      const share = prep.duration > 0 ? Math.min(1, seconds / prep.duration) : 1;
      ctx.progress(
        'transcribe',
        5 + Math.floor(85 * share),
        `${Math.round(100 * share)} % of the audio transcribed (${seconds.toFixed(1)} of ${prep.duration.toFixed(1)} s)`,
      );
    };
    if (bounded) await boundedMap(prep.chunks, fanout, transcribe);
    else await Promise.all(prep.chunks.map(transcribe));
    if (reused) ctx.log('info', `${reused} chunk(s) reused from earlier work`);
  }
  ctx.progress('finish', 92, 'Writing the results');
  return {
    jobId,
    parameters,
    chunks: prep.chunks,
    duration: prep.duration,
    fromCache: prep.fromCache,
    cacheKey: prep.cacheKey,
  };
}

/** The audio job type (spec §4.11): the transcription, then `finishAudio` writes the results. */
export async function audioPipeline(ctx: PipelineContext<'audio'>): Promise<Record<string, unknown>> {
  // `/api/audio/detect-language` (created only by that route, which came with this branch: no patch for replay).
  if (ctx.input.parameters.detect_language === true) {
    const { jobId, parameters } = ctx.input;
    ctx.progress('detect', 5, 'Detecting the spoken language');
    const media = activitiesFor({ jobId, fair: true, priority: PRIORITY.small });
    return (await media.detectAudioLanguage({ jobId, parameters })).results;
  }
  const io = transcriptionFinisher(ctx);
  const fin = await io.finishAudio(await transcribeMedia(ctx));
  return fin.results;
}
