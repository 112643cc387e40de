import { CHUNK_TOKENS_MAX, CHUNK_TOKENS_MIN } from '../../core/jobs/job-fields';
import { JOB_DEFAULTS, TOKENIZERS } from '../../core/jobs/job-defaults';
import { chunkingSchema, documentChunkSchema } from '../../core/results/result-schemas-chunks';
import { textChunks } from '../../capabilities/chunks';
import { jsonResponse, z } from '../openapi';
import type { ApiRouter } from '../api-router';

/** The most characters `/api/chunks` takes (contract §10's text inputs). */
const MAX_TEXT = 1_000_000;

const d = JOB_DEFAULTS.chunks;

export const chunksBody = z
  .object({
    text: z.string().min(1).max(MAX_TEXT).openapi({ description: 'The Markdown (or plain text) to cut' }),
    format: z
      .enum(['markdown', 'text'])
      .optional()
      .openapi({
        description:
          '`markdown` (default): headings, lists, tables and code are read as blocks; `text`: blank lines part ' +
          'paragraphs and nothing else is markup',
      }),
    chunking: z
      .boolean()
      .optional()
      .openapi({ description: 'Always on here (accepted for the other operations’ bodies)' }),
    chunk_max_tokens: z.number().int().min(CHUNK_TOKENS_MIN).max(CHUNK_TOKENS_MAX).optional().openapi({
      default: d.chunk_max_tokens,
    }),
    chunk_overlap_tokens: z
      .number()
      .int()
      .min(0)
      .max(CHUNK_TOKENS_MAX - 1)
      .optional()
      .openapi({ default: d.chunk_overlap_tokens }),
    chunk_tokenizer: z.enum(TOKENIZERS).optional().openapi({ default: d.chunk_tokenizer }),
  })
  .refine((b) => (b.chunk_overlap_tokens ?? 0) < (b.chunk_max_tokens ?? d.chunk_max_tokens), {
    path: ['chunk_overlap_tokens'],
    message: 'chunk_overlap_tokens must be below chunk_max_tokens',
  });

const chunksResult = z
  .object({ chunks: z.array(documentChunkSchema.omit({ pages: true, boxes: true })), chunking: chunkingSchema })
  .openapi('ChunksResult');

/**
 * POST /api/chunks (contract §14): text or Markdown a client already has, cut as the documents' chunks are cut
 * (capabilities/chunks.ts), answered by the API itself: the work is pure and linear in the text (about 40 ms for
 * the largest text taken, 1,000,000 characters, once the tokenizer is loaded), so no job is worth its cost.
 */
export function chunkRoutes(api: ApiRouter): void {
  api.add({
    method: 'post',
    path: '/api/chunks',
    summary: 'Cut text or Markdown into chunks for retrieval',
    tags: ['Chunks'],
    body: chunksBody,
    responses: { 200: jsonResponse(chunksResult, 'The chunks') },
    handler: (ctx, { body }) => {
      const r = textChunks(body.text, body.format ?? 'markdown', {
        chunking: true,
        chunk_max_tokens: body.chunk_max_tokens,
        chunk_overlap_tokens: body.chunk_overlap_tokens,
        chunk_tokenizer: body.chunk_tokenizer,
      });
      ctx.body = { status: 'success', data: r };
    },
  });
}
