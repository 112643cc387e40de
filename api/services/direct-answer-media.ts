import type { Context } from 'koa';
import type { Config } from '../../core/config/config';
import { jobOutputPrefix, jobResultsKey } from '../../core/stores/records';
import { audioData, videoData, type VideoPicture } from '../../core/results/result-shapes';
import { speechModelId } from '../../core/config/speech-model';
import {
  cachedTranscription,
  countTranscriptionHit,
  transcriptionAnswer,
  transcriptionKey,
  type CachedTranscription,
} from '../../capabilities/transcription';
import { uploadSha256, type UploadedFile } from '../uploads';
import { asksForJob } from './direct-answer';
import type { TranscriptionParams } from '../../core/jobs/job-params';
import { validateBodyParameters } from './job-intake';
import type { JobService } from './jobs';

/**
 * Audio and video cache hits answered by the API without a job (issue 24), for uploads: `/api/audio/process`,
 * `/v1/audio/transcriptions` and `/api/video/process`. The key is the `prepareAudio` activity's (capabilities/transcription.ts
 * `transcriptionKey`: the sha256 of the received file, as the blob store computes it, the languages, the template's name and source,
 * the speech options, the speech model and the language model), and the `data` is built from the entry by the code
 * that builds a job's (`transcriptionAnswer`), so it is the `data` a hit through a job gives, with one difference
 * for `/api/audio/process`: `process_id` and `process_dir` name the job that computed the entry (its record and its
 * `result.md` hold this data) instead of a new job's, and no file is written (the subtitles are in `data.subtitles`).
 * An audio hit is answered before the upload is probed or stored (an entry exists only for bytes a job probed and
 * transcribed; one longer than MAX_MEDIA_SECONDS goes the job path, whose probe refuses it), a video hit after the probe
 * (its picture is part of the data) but before the upload is stored. URL inputs still run a job: their key is the hash of the bytes the URL serves, known only after the worker's download.
 * Rules as in direct-answer.ts: not when the client asked for a job (`Prefer: respond-async`, `wait_ms=0`), nor with
 * `use_cache` false; a hit takes no heavy-request slot and answers `X-Cache: hit`.
 */

export interface MediaHitDeps {
  jobs: JobService;
  config: Pick<
    Config,
    'llm' | 'SPEECH_PROVIDER' | 'SPEECH_MODEL' | 'SPEECH_MODEL_DIR' | 'speechApi' | 'MAX_MEDIA_SECONDS'
  >;
}

/**
 * The request's options for its job (languages, template, `use_cache`, speech options), before the input is named:
 * fields of the route's validated body (`jobBodyParameters`), or built by the route from them.
 */
type MediaOptions = Partial<TranscriptionParams>;

/**
 * The cache entry of this upload under these options, with the job parameters they validate to; null when not looked
 * up (a client that asked for a job, `use_cache` false), on a miss, for a template that does not exist (the job answers
 * its 404) or an entry longer than MAX_MEDIA_SECONDS (the probe answers its 422). The options are completed as the
 * job's (`validateBodyParameters`: the route's schema checked their fields; a 400 here is the one the job path gives),
 * the upload named by its received file.
 */
async function lookUp(
  ctx: Context,
  deps: MediaHitDeps,
  jobType: 'audio' | 'video',
  file: UploadedFile,
  options: MediaOptions,
): Promise<{ entry: CachedTranscription; params: MediaOptions } | null> {
  if (asksForJob(ctx) || options.use_cache === false) return null;
  const params: MediaOptions = validateBodyParameters(jobType, options, { filename: file.filepath });
  const key = await transcriptionKey(await uploadSha256(file), params, {
    speechModel: speechModelId(deps.config),
    llmModel: deps.config.llm?.model,
  });
  if (!key) return null;
  const entry = await cachedTranscription(deps.jobs.store, key, { count: false });
  if (!entry || entry.duration > deps.config.MAX_MEDIA_SECONDS) return null;
  return { entry, params };
}

function hit(ctx: Context): void {
  countTranscriptionHit();
  ctx.set('X-Cache', 'hit');
}

/**
 * `/api/audio/process`: answers a hit as the route answers a job's (`request`, `process` with no model call,
 * `data` with `from_cache: true`), before the upload is probed or stored: an entry exists only for bytes a job has
 * probed (format by content, duration) and transcribed. False (run the job) when there is no hit, or the entry names
 * no job whose results are still stored (an entry from before it named one, or a job swept by retention):
 * `process_id` is never made up.
 */
export async function answerAudioFromCache(
  ctx: Context,
  deps: MediaHitDeps,
  file: UploadedFile,
  options: MediaOptions,
  request: { started: number; timestamp: string },
): Promise<boolean> {
  const found = await lookUp(ctx, deps, 'audio', file, options);
  const jobId = found?.entry.job_id;
  if (!found || !jobId || !(await deps.jobs.store.stat(jobResultsKey(jobId)))) return false;
  const job = { process_id: jobId, process_dir: jobOutputPrefix(jobId).slice(0, -1) };
  const data = transcriptionAnswer(found.entry, found.params, (o) => audioData(o, job));
  hit(ctx);
  ctx.body = {
    status: 'success',
    request: { id: String(ctx.state.requestId), timestamp: request.timestamp },
    process: {
      duration_ms: Math.round(performance.now() - request.started),
      llm_info: { total_tokens: 0, total_cost: 0, requests: [] },
    },
    data: { ...data, from_cache: true },
  };
  return true;
}

/**
 * `/v1/audio/transcriptions`, before the upload is probed or stored: the fields of a hit's `data` the OpenAI formats
 * are cut from (`duration`, `detected_language`, `original_text`, `segments`, `subtitles`), or null (run the job).
 * Answers `X-Cache: hit`; the answer names no job (no `X-Job-Id`).
 */
export async function transcriptionFromCache(
  ctx: Context,
  deps: MediaHitDeps,
  file: UploadedFile,
  options: MediaOptions,
): Promise<Record<string, unknown> | null> {
  const found = await lookUp(ctx, deps, 'audio', file, options);
  if (!found) return null;
  // The fields the OpenAI formats are cut from (audioData's, without the job's): no job is named.
  const data = transcriptionAnswer(found.entry, found.params, (o) => ({
    duration: o.duration,
    detected_language: o.detected_language,
    original_text: o.original_text,
    segments: o.segments,
  }));
  hit(ctx);
  return data;
}

/**
 * `/api/video/process` (an upload, probed by the route: the picture is the video's own): a hit answered with the §4.7
 * data before the upload is stored.
 */
export async function answerVideoFromCache(
  ctx: Context,
  deps: MediaHitDeps,
  file: UploadedFile,
  options: MediaOptions,
  picture: VideoPicture,
): Promise<boolean> {
  const found = await lookUp(ctx, deps, 'video', file, options);
  if (!found) return false;
  const data = transcriptionAnswer(found.entry, found.params, (o) => videoData(o, picture));
  hit(ctx);
  ctx.body = { status: 'success', data };
  return true;
}
