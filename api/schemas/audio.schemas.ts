import { JOB_DEFAULTS } from '../../core/job-defaults';
import { z } from '../openapi';
import { uploadedFile } from '../uploads';
import { formBool, httpUrl } from './form';

/** Schemas of /api/audio (spec §4.11). */

const language = z.string().regex(/^[a-z]{2}$/, 'an ISO 639-1 code such as de or en');

/**
 * The options of a transcription (audio and video): languages, template, result cache. The languages' defaults are
 * the job's (core/job-defaults.ts), applied when its parameters are validated; here they are only documented.
 */
export const transcriptionOptions = {
  source_language: z
    .union([language, z.literal('auto')])
    .optional()
    .openapi({
      description: 'The spoken language, or `auto` to detect it',
      default: JOB_DEFAULTS.transcription.source_language,
    }),
  target_language: language.optional().openapi({ default: JOB_DEFAULTS.transcription.target_language }),
  template: z.string().max(200).optional(),
  useCache: formBool(true),
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

export const audioSegment = z
  .object({ id: z.number().int(), start: z.number(), end: z.number(), text: z.string() })
  .openapi('AudioSegment');

const llmInfo = z
  .object({
    total_tokens: z.number().int(),
    total_cost: z.number(),
    requests: z.array(
      z.object({ model: z.string(), purpose: z.string(), tokens: z.number().int(), duration_ms: z.number().int() }),
    ),
  })
  .openapi('LlmInfo');

/** The answer of POST /api/audio/process (spec §4.11): the request, the processing and the transcript. */
export const audioProcessResult = z
  .object({
    status: z.literal('success'),
    request: z.object({ id: z.string(), timestamp: z.string() }),
    process: z.object({ duration_ms: z.number().int(), llm_info: llmInfo }),
    data: z.object({
      duration: z.number().openapi({ description: 'Seconds' }),
      detected_language: z.string(),
      output_text: z.string().openapi({ description: 'After the template and the translation' }),
      original_text: z.string().openapi({ description: 'The transcript' }),
      translated_text: z.string().nullable().openapi({ description: 'Null when the spoken language is the target' }),
      llm_model: z.string().nullable(),
      translation_model: z.string().nullable(),
      token_count: z.number().int(),
      segments: z.array(audioSegment),
      process_id: z.string(),
      process_dir: z.string(),
      from_cache: z.boolean(),
    }),
  })
  .openapi('AudioProcessResult');
