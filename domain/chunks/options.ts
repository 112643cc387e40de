/**
 * A job's chunking parameters (contract §14) as the chunkers take them, and `data.chunking`, which says how the chunks
 * were cut. Pure.
 */
import { JOB_DEFAULTS, type TokenizerName } from '../../core/jobs/job-defaults';
import type { Chunking, DocumentChunkData } from '../../core/results/result-schemas-chunks';
import { chunkDocument, type ChunkOptions } from './chunk-markdown';
import { sourceSpans, type SpanPart } from './provenance';

/** The chunking parameters of a job (absent ones hold their defaults, core/jobs/job-defaults.ts). */
export interface ChunkParams {
  chunking?: boolean;
  chunk_max_tokens?: number;
  chunk_overlap_tokens?: number;
  chunk_tokenizer?: TokenizerName;
}

/** The options a job's parameters ask for; null without `chunking=true`. */
export function chunkOptions(p: ChunkParams): ChunkOptions | null {
  if (p.chunking !== true) return null;
  const d = JOB_DEFAULTS.chunks;
  return {
    maxTokens: p.chunk_max_tokens ?? d.chunk_max_tokens,
    overlapTokens: p.chunk_overlap_tokens ?? d.chunk_overlap_tokens,
    tokenizer: p.chunk_tokenizer ?? d.chunk_tokenizer,
  };
}

/** `data.chunking`: how the chunks were cut. */
export const chunkingOf = (o: ChunkOptions): Chunking => ({
  tokenizer: o.tokenizer,
  max_tokens: o.maxTokens,
  overlap_tokens: o.overlapTokens,
});

/**
 * The chunks of a document's text (its Markdown, or its text without one) with the pages and boxes of the parts'
 * blocks they cover: `{chunks, chunking}` to spread into the result's `data`, nothing without chunking. The
 * results' builders call it through capabilities/chunks.ts; the API's direct PDF thread (providers/pdf) calls it here.
 */
export function documentChunks(
  text: string,
  parts: readonly SpanPart[],
  p: ChunkParams,
): { chunks?: DocumentChunkData[]; chunking?: Chunking } {
  const o = chunkOptions(p);
  if (!o) return {};
  return { chunks: chunkDocument(text, sourceSpans(text, parts), o), chunking: chunkingOf(o) };
}
