import { JOB_DEFAULTS } from '../../core/jobs/job-defaults';
import { transformerResultData } from '../../core/results/result-schemas-text';
import { z } from '../openapi';

/** An ISO 639-1 language code, the form every language field of the API takes. */
export const lang = z.string().regex(/^[a-z]{2}$/, 'an ISO 639-1 code such as de or en');
/** `use_cache`: read the result cache first (a fresh success is written either way). */
export const useCache = z.boolean().optional().default(true);

export const homeBody = z.object({ message: z.string(), version: z.string(), docs: z.string() }).openapi('Home');

export const sampleFile = z
  .object({ filename: z.string(), size: z.number().int(), type: z.string() })
  .openapi('SampleFile');
export const sampleList = z.object({ samples: z.array(sampleFile) });
export const sampleNameParam = z.object({ filename: z.string() });

export const blocksBody = z.object({
  blocks: z
    .array(
      z.object({
        type: z.string().min(1).max(50),
        content: z.union([z.string().max(100_000), z.array(z.string().max(100_000)).max(1000)]),
      }),
    )
    .min(1)
    .max(1000),
  source_language: lang.optional().default(JOB_DEFAULTS.transformer.source_language),
  target_language: lang.optional().default(JOB_DEFAULTS.transformer.target_language),
  use_cache: useCache,
});

/** `data` of POST /api/common/blocks: the transformer job's `blocks` result. */
export const blocksResult = transformerResultData.blocks;
