import { JOB_DEFAULTS, TOKENIZERS } from '../../core/jobs/job-defaults';
import { CHUNK_TOKENS_MAX, CHUNK_TOKENS_MIN } from '../../core/jobs/job-fields';
import { z } from '../openapi';
import { formInt } from './form';

/**
 * The chunking options (contract §14) as a route's form or JSON body takes them: the job's parameters of the same
 * names (core/jobs/job-fields.ts `chunkingFields`), absent unless sent, so a job that does not ask records none.
 */

/** An optional boolean of a form (true/false in any case, 1/0) or a JSON body; absent or empty → absent. */
const formFlag = z.preprocess((v) => {
  if (v === undefined || v === '') return undefined;
  const text = typeof v === 'string' ? v.toLowerCase() : v;
  if (text === true || text === 'true' || text === '1') return true;
  if (text === false || text === 'false' || text === '0') return false;
  return v;
}, z.boolean().optional());

const defaults = JOB_DEFAULTS.chunks;

export const chunkingOptions = {
  chunking: formFlag.openapi({
    description:
      '`data.chunks[]` for retrieval, each within `chunk_max_tokens` tokens, and `data.chunking` (contract §14)',
  }),
  chunk_max_tokens: formInt(CHUNK_TOKENS_MIN, CHUNK_TOKENS_MAX).openapi({
    description: 'With chunking: the most tokens a chunk holds',
    default: defaults.chunk_max_tokens,
  }),
  chunk_overlap_tokens: formInt(0, CHUNK_TOKENS_MAX - 1).openapi({
    description: 'With chunking: tokens of the chunk before repeated at the start of the next (within a section)',
    default: defaults.chunk_overlap_tokens,
  }),
  chunk_tokenizer: z
    .enum(TOKENIZERS, {
      error: (i) => `unknown chunk_tokenizer ${JSON.stringify(i.input)}: use ${TOKENIZERS.join(' or ')}`,
    })
    .optional()
    .openapi({ description: 'The tokenizer tokens are counted with', default: defaults.chunk_tokenizer }),
};

/** `grounding=true` (contract §14) on the operations whose template it checks, as a form or JSON field. */
export const groundingOption = {
  grounding: formFlag.openapi({
    description:
      'With a template: each value checked against the text, `data.template_fields`, `data.template_sources` ' +
      '(where each value stands: offsets, and pages and boxes, or seconds) and `data.unsupported_fields` (values ' +
      'the text does not hold, emptied)',
  }),
};
