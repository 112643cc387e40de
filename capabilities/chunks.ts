import { JOB_DEFAULTS, type TokenizerName } from '../core/jobs/job-defaults';
import type { Chunking, DocumentChunkData } from '../core/results/result-schemas-chunks';
import { chunkDocument, chunkMarkdown, type ChunkOptions, type TextChunk } from '../domain/chunks/chunk-markdown';
import { sourceSpans, type SpanPart } from '../domain/chunks/provenance';

/**
 * The chunks capability (contract §14): `chunking=true` on a document, PDF, image or recording adds `data.chunks[]`
 * and `data.chunking`. The results' builders call it (activities/pdf-results.ts, the document and image OCR steps,
 * the transcriptions' `transcriptionData`) and so does `POST /api/chunks`, so every operation cuts one way. The
 * options are the job's parameters as the API validated them (core/jobs/job-fields.ts `chunkingFields`).
 */

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
 * blocks they cover: `{chunks, chunking}` to spread into the result's `data`, nothing without chunking.
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

/**
 * The chunks of a text a client sends (`POST /api/chunks`): Markdown read as blocks, or plain text whose paragraphs
 * only are blocks (each line that would read as markup is taken as text).
 */
export function textChunks(
  text: string,
  format: 'markdown' | 'text',
  p: ChunkParams,
): { chunks: TextChunk[]; chunking: Chunking } {
  const o = chunkOptions({ ...p, chunking: true })!;
  return { chunks: chunkMarkdown(text, { ...o, plain: format === 'text' }), chunking: chunkingOf(o) };
}
