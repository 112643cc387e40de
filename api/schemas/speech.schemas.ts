import { detectLanguageResultData } from '../../core/results/result-schemas-media';
import { z } from '../openapi';
import { uploadedFile } from '../uploads';
import { formBool, httpUrl } from './form';

/** Schemas of `/api/audio/detect-language` and the OpenAI-compatible `/v1/audio/transcriptions`. */

const iso = z.string().regex(/^[a-z]{2}$/, 'an ISO 639-1 code such as de or en');

/** POST /api/audio/detect-language (multipart or JSON): a `file` or a `url`. */
export const detectLanguageBody = z.object({
  file: uploadedFile.optional(),
  url: httpUrl.optional().openapi({ description: 'Instead of a file: downloaded by the job (at most MAX_UPLOAD_MB)' }),
  vad: formBool(true).openapi({ description: 'Skip leading silence and music: the first 30 s of speech are read' }),
});

export const detectLanguageResult = z
  .object({ status: z.literal('success'), data: detectLanguageResultData })
  .openapi('DetectLanguageResult');

export const RESPONSE_FORMATS = ['json', 'text', 'srt', 'vtt', 'verbose_json'] as const;
export const GRANULARITIES = ['word', 'segment'] as const;

/** A multipart list: one value, a repeated field or a comma-separated one. */
const formList = <T extends readonly [string, ...string[]]>(values: T) =>
  z.preprocess(
    (v) =>
      v === undefined || v === ''
        ? undefined
        : (Array.isArray(v) ? v : [v]).flatMap((x) => (typeof x === 'string' ? x.split(',').map((s) => s.trim()) : x)),
    z.array(z.enum(values)).optional(),
  );

/**
 * POST /v1/audio/transcriptions (multipart), OpenAI's `createTranscription`; `timestamp_granularities[]` is the field
 * name OpenAI's clients send (repeated, or one comma-separated value).
 */
export const openAiTranscriptionBody = z.object({
  file: uploadedFile,
  model: z.string().min(1).max(200).openapi({
    description: "Any name (OpenAI's clients require one): the server's configured speech model transcribes",
    example: 'whisper-1',
  }),
  language: iso.optional().openapi({ description: 'The spoken language; detected when absent' }),
  prompt: z.string().max(1000).optional().openapi({ description: 'Names and terms the recording uses' }),
  response_format: z.enum(RESPONSE_FORMATS).optional().openapi({ default: 'json' }),
  temperature: z
    .preprocess((v) => (v === undefined || v === '' ? undefined : Number(v)), z.literal(0).optional())
    .openapi({
      description:
        'Only 0 (the default): the engine decodes greedily and samples only a window it is unsure of, seeded',
    }),
  'timestamp_granularities[]': formList(GRANULARITIES).openapi({
    description: '`word` adds `words` to verbose_json (needs response_format=verbose_json)',
  }),
});

const word = z.object({ word: z.string(), start: z.number(), end: z.number() });

/** The JSON answers of /v1/audio/transcriptions (`json` and `verbose_json`); the others are text. */
export const openAiTranscriptionResult = z
  .object({
    text: z.string(),
    task: z.literal('transcribe').optional(),
    language: z.string().optional().openapi({ description: "verbose_json: the language's English name" }),
    duration: z.number().optional(),
    segments: z
      .array(z.object({ id: z.number().int(), start: z.number(), end: z.number(), text: z.string() }))
      .optional(),
    words: z.array(word).optional(),
  })
  .openapi('OpenAiTranscription');
