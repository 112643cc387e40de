import { JOB_DEFAULTS } from '../../core/jobs/job-defaults';
import { MAX_SPEAKERS, SUBTITLE_FORMATS } from '../../core/jobs/job-params-media';
import { llmInfoSchema } from '../../core/results/result-schemas';
import { audioProcessData } from '../../core/results/result-schemas-media';
import { z } from '../openapi';
import { uploadedFile } from '../uploads';
import { formBool, formInt, httpUrl } from './form';
import { chunkingOptions, groundingOption } from './chunks.schemas';

/** Schemas of /api/audio (spec §4.11). */

const language = z.string().regex(/^[a-z]{2}$/, 'an ISO 639-1 code such as de or en');

/**
 * Options beyond the spec (contract §9), on every transcription endpoint: word timings, subtitles, voice activity
 * detection, a prompt, speaker labels. They are the job's parameters of the same names: `jobBodyParameters` leaves
 * out those holding their default (a job records only what differs from it), and the prompt is recorded trimmed.
 */
export const speechOptions = {
  word_timestamps: formBool(JOB_DEFAULTS.speech.word_timestamps).openapi({
    description: 'Each segment carries `words: [{word, start, end, probability}]` (video: `segments` are added)',
  }),
  subtitles: z
    .enum(SUBTITLE_FORMATS)
    .optional()
    .openapi({
      description:
        '`data.subtitles` holds an SRT or WebVTT file of the transcript as spoken (cues of at most 2 lines of 42 ' +
        'characters and 7 s, cut at sentence ends and pauses), also written beside the job outputs',
    }),
  vad: formBool(JOB_DEFAULTS.speech.vad).openapi({
    description: 'Voice activity detection: silence and music are skipped, not decoded (local engine)',
  }),
  prompt: z
    .string()
    .max(1000)
    .trim()
    .optional()
    .openapi({ description: 'Names and terms the recording uses, to steer their spelling' }),
  diarize: formBool(JOB_DEFAULTS.speech.diarize).openapi({
    description:
      'Speaker labels: each segment (and word) carries `speaker` (`SPEAKER_1`, `SPEAKER_2`... in order of first ' +
      'speech), from a speaker-embedding model run on the local engine (video: `segments` are added). The hosted ' +
      'speech provider cannot do it: 422 naming diarize',
  }),
  max_speakers: formInt(1, MAX_SPEAKERS).openapi({
    description: 'With diarize=true: at most this many speakers (default: as many as the voices differ)',
  }),
  ...chunkingOptions,
  ...groundingOption,
};

/**
 * The options of a transcription (audio and video): languages, template, result cache. The languages' defaults are
 * the job's (core/jobs/job-defaults.ts), applied when its parameters are validated; here they are only documented.
 */
export const transcriptionOptions = {
  source_language: z
    .union([language, z.literal('auto')])
    .optional()
    .openapi({
      description: 'The spoken language, or `auto` to detect it',
      default: JOB_DEFAULTS.transcription.source_language,
    }),
  target_language: z
    .union([language, z.literal('auto')])
    .optional()
    .openapi({
      description: 'The language of the output; `auto`: the spoken one (no translation)',
      default: JOB_DEFAULTS.transcription.target_language,
    }),
  template: z.string().max(200).optional(),
  useCache: formBool(true),
  ...speechOptions,
};

/** POST /api/audio/process (multipart). */
export const audioProcessBody = z.object({
  file: uploadedFile.optional(),
  url: httpUrl.optional().openapi({
    description:
      'Instead of a file: downloaded by the job (at most MAX_UPLOAD_MB); private and loopback addresses are refused ' +
      'unless allowed',
  }),
  ...transcriptionOptions,
});

export {
  audioSegmentSchema as audioSegment,
  audioWordSchema as audioWord,
} from '../../core/results/result-schemas-media';

/** The answer of POST /api/audio/process (spec §4.11): the request, the processing and the transcript. */
export const audioProcessResult = z
  .object({
    status: z.literal('success'),
    request: z.object({ id: z.string(), timestamp: z.string() }),
    process: z.object({ duration_ms: z.number().int(), llm_info: llmInfoSchema }),
    data: audioProcessData,
  })
  .openapi('AudioProcessResult');
