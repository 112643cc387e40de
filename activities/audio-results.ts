import { readBlobJson } from '../core/stores/blob-store';
import { rememberTranscription, transcriptionAnswer, transcriptionKey } from '../capabilities/transcription';
import { withDefaults } from '../core/jobs/job-defaults';
import type { TranscriptionParams } from '../core/jobs/job-params';
import { resultPreview, writeJobResults, type JobFields, type LlmInfo } from '../core/results/job-results';
import { jobInternalKey, jobOutputKey, jobOutputPrefix } from '../core/stores/records';
import type { AudioOutcome, AudioSegment } from '../core/results/result-shapes';
import type { TranscriptionResultData } from '../core/results/transcription-data';
import type { LlmUsage } from '../domain/engines/llm';
import { SUBTITLE_MIME } from '../core/results/subtitles';
import { diarize } from '../core/results/diarize';
import type { AudioSpan, ChunkTranscript } from './audio-types';
import type { ActivityDeps } from './deps';
import { applyTemplate, templateNotFound, translate } from './text-operations';
import { mediaGrounding } from '../capabilities/grounding';
import { jobModel } from './model-journal';
import { fullParameters, heartbeating } from './job-steps';

/** One chunk's transcript under the job. */
export const chunkKey = (jobId: string, index: number): string => jobInternalKey(jobId, `chunks/${index}.json`);
/** The cached outcome a job answered with (written by `prepareAudio` on a hit). */
export const cachedAudioKey = (jobId: string): string => jobInternalKey(jobId, 'audio-cached.json');

/**
 * The result-cache key of an audio job (capabilities/transcription.ts, as the API computes it); a template that does
 * not exist fails non-retryable with TEMPLATE_NOT_FOUND.
 */
export async function audioCacheKey(
  sha256: string,
  parameters: TranscriptionParams,
  speechModel: string,
  llmModel: string | undefined,
): Promise<string> {
  const key = await transcriptionKey(sha256, parameters, { speechModel, llmModel });
  if (key === null) throw templateNotFound(parameters.template);
  return key;
}

/**
 * The chunks' segments on the recording's time line: offsets added, ids increasing from 0, times rounded to the
 * millisecond and kept inside their chunk, so consecutive segments never overlap. With `words`, each segment carries
 * its words (contract §9) on the same time line, in order and inside their segment (a word the engine timed past
 * its segment's edge is held at the edge); a chunk kept without word timings gives its segments an empty list.
 */
export function stitchSegments(chunks: ChunkTranscript[], opts: { words?: boolean } = {}): AudioSegment[] {
  const out: AudioSegment[] = [];
  const ms = (s: number) => Math.round(s * 1000) / 1000;
  let last = 0;
  for (const c of chunks) {
    for (const s of c.segments) {
      if (!s.text.trim()) continue;
      const start = ms(Math.min(Math.max(c.start + s.start, c.start, last), c.end));
      const end = ms(Math.max(Math.min(c.start + s.end, c.end), start));
      const segment: AudioSegment = { id: out.length, start, end, text: s.text.trim() };
      if (opts.words) {
        let at = start;
        segment.words = (s.words ?? [])
          .filter((w) => w.word.trim())
          .map((w) => {
            const ws = ms(Math.min(Math.max(c.start + w.start, at), end));
            const we = ms(Math.min(Math.max(c.start + w.end, ws), end));
            at = ws;
            return { word: w.word, start: ws, end: we, probability: w.probability };
          });
      }
      out.push(segment);
      last = end;
    }
  }
  return out;
}

/**
 * With `diarize`: speaker labels on the stitched segments and their words, from every chunk's speaker windows put on
 * the recording's time line and clustered together (core/results/diarize.ts), so one voice keeps one label across chunks.
 */
export function labelSpeakers(
  segments: AudioSegment[],
  chunks: ChunkTranscript[],
  p: { diarize?: boolean; max_speakers?: number },
): AudioSegment[] {
  if (!p.diarize) return segments;
  const windows = chunks.flatMap((c) =>
    (c.speakerWindows ?? []).map((w) => ({ start: c.start + w.start, end: c.start + w.end, embedding: w.embedding })),
  );
  return diarize(segments, windows, { maxSpeakers: p.max_speakers });
}

/** The language of most of the audio (seconds per chunk), or `fallback` when no chunk reports one. */
export function dominantLanguage(chunks: ChunkTranscript[], fallback: string): string {
  const seconds = new Map<string, number>();
  for (const c of chunks)
    if (c.language && c.language !== 'und') seconds.set(c.language, (seconds.get(c.language) ?? 0) + (c.end - c.start));
  let best = fallback;
  let most = -1;
  for (const [lang, s] of seconds) if (s > most) [best, most] = [lang, s];
  return best;
}

const request = (u: Pick<LlmUsage, 'model' | 'purpose' | 'tokens' | 'duration_ms'>) => ({
  model: u.model,
  purpose: u.purpose,
  tokens: u.tokens,
  duration_ms: u.duration_ms,
});

/** What the end of a transcription gets from the workflow (`transcribeMedia`). */
export interface TranscriptionDone {
  jobId: string;
  parameters: TranscriptionParams;
  chunks: AudioSpan[];
  duration: number;
  fromCache: boolean;
  cacheKey?: string;
}

/** Shapes the endpoint's `data` from the outcome (`audioData`, `videoData`...). */
export type TranscriptionShaper = (
  outcome: AudioOutcome,
  job: { process_id: string; process_dir: string },
) => TranscriptionResultData;

/**
 * The end of every audio and video job: the chunks' transcripts stitched, the template applied, then the
 * translation (spec processing order); the results (the endpoint's data as `shape` makes it, and the job fields,
 * `llm_info` with one transcription entry per chunk and every model call) written, and a fresh result cached. A
 * cached outcome (see `prepareAudio`) is written as it is, with no calls.
 */
export function createAudioResults(deps: ActivityDeps) {
  const { store } = deps;

  async function compute(
    jobId: string,
    p: TranscriptionParams & { word_timestamps: boolean; diarize: boolean },
    spans: AudioSpan[],
    duration: number,
  ): Promise<{ outcome: AudioOutcome; llmInfo: LlmInfo }> {
    const chunks = await Promise.all(spans.map((_, i) => readBlobJson<ChunkTranscript>(store, chunkKey(jobId, i))));
    const requested = p.source_language;
    const language = dominantLanguage(chunks, requested === 'auto' ? 'und' : requested);
    const original = chunks
      .map((c) => c.text.trim())
      .filter(Boolean)
      .join(' ');
    const usages: LlmUsage[] = [];
    const model = jobModel(deps.llm, store, jobId);
    let text = original;
    let llmModel: string | null = null;
    let templateOutput: Record<string, unknown> = {};
    if (p.template) {
      const r = await applyTemplate(model, {
        text,
        template: p.template,
        source_language: language,
        target_language: language,
        context: (p.context ?? {}) as Record<string, unknown>,
        grounding: p.grounding,
      });
      templateOutput = r.output;
      text = r.text;
      usages.push(...r.usages);
      llmModel = r.usages[0]?.model ?? null;
    }
    // `auto`: the spoken language (no translation).
    const target = p.target_language === 'auto' ? language : p.target_language;
    let translated: string | null = null;
    let translationModel: string | null = null;
    if (target !== language && text.trim()) {
      const r = await translate(model, text, language, target);
      translated = r.text;
      text = r.text;
      usages.push(...r.usages);
      translationModel = r.usages[0]?.model ?? null;
    }
    const speech = chunks.map((c) =>
      request({ model: c.model, purpose: 'transcription', tokens: 0, duration_ms: c.duration_ms }),
    );
    const llmInfo: LlmInfo = {
      total_tokens: usages.reduce((n, u) => n + u.tokens, 0),
      total_cost: Math.round(usages.reduce((n, u) => n + u.cost, 0) * 1e6) / 1e6,
      requests: [...speech, ...usages.map(request)],
    };
    // Words' times are kept where an answer reads them: the words asked for, subtitles, speakers, and chunks (cut and
    // timed at words; the answer drops the words unless they were asked for).
    const words = p.word_timestamps || p.subtitles !== undefined || p.diarize || p.chunking === true;
    const segments = labelSpeakers(stitchSegments(chunks, { words }), chunks, p);
    // With grounding: each value with the seconds it was said in (the words' times where they are kept).
    const grounding = mediaGrounding(templateOutput, original, segments);
    const outcome: AudioOutcome = {
      duration: Math.round(duration * 1000) / 1000,
      detected_language: language,
      original_text: original,
      output_text: text,
      translated_text: translated,
      // The model that answered: the template's, else the translation's (README: every answer that used a model
      // names it).
      llm_model: llmModel ?? translationModel,
      translation_model: translationModel,
      token_count: llmInfo.total_tokens,
      segments,
      ...(grounding ? { grounding } : {}),
    };
    return { outcome, llmInfo };
  }

  /** Reads every chunk's transcript and writes the results (and the cache entry): heartbeating throughout. */
  return (a: TranscriptionDone, shape: TranscriptionShaper) => heartbeating(() => finishTranscription(a, shape));

  async function finishTranscription(a: TranscriptionDone, shape: TranscriptionShaper) {
    const { jobId } = a;
    const p = withDefaults('speech', withDefaults('transcription', await fullParameters(store, jobId, a.parameters)));
    const r = a.fromCache
      ? {
          outcome: await readBlobJson<AudioOutcome>(store, cachedAudioKey(jobId)),
          llmInfo: { total_tokens: 0, total_cost: 0, requests: [] },
        }
      : await compute(jobId, p, a.chunks, a.duration);
    const dir = jobOutputPrefix(jobId).slice(0, -1);
    const data = transcriptionAnswer(r.outcome, p, (o) => shape(o, { process_id: jobId, process_dir: dir }));
    const assets = [jobOutputKey(jobId, 'result.md')];
    const writes: Promise<unknown>[] = [];
    if (p.subtitles) {
      // Written beside the outputs (contract §9): the answer's text.
      const key = jobOutputKey(jobId, `subtitles.${p.subtitles}`);
      assets.push(key);
      writes.push(store.put(key, String(data.subtitles), { mime: SUBTITLE_MIME[p.subtitles] }));
    }
    const job: JobFields = {
      structured_data: {
        extracted_text: r.outcome.output_text,
        metadata: {
          duration: r.outcome.duration,
          detected_language: r.outcome.detected_language,
          segment_count: r.outcome.segments.length,
        },
      },
      assets,
      target_dir: dir,
      llm_info: r.llmInfo,
      from_cache: a.fromCache,
    };
    await Promise.all([
      store.put(jobOutputKey(jobId, 'result.md'), r.outcome.output_text, { mime: 'text/markdown; charset=utf-8' }),
      writeJobResults(store, jobId, data, job),
      ...writes,
    ]);
    // Every fresh success goes to the result cache (use_cache=false skips reading it, not writing it).
    // The entry names this job, whose folder and record hold the outcome: a hit the API answers without a job names it.
    if (!a.fromCache && a.cacheKey) await rememberTranscription(store, a.cacheKey, r.outcome, jobId);
    return { results: resultPreview(job) };
  }
}
