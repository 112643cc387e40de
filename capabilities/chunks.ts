import type { Chunking } from '../core/results/result-schemas-chunks';
import { chunkMarkdown, type TextChunk } from '../domain/chunks/chunk-markdown';
import { chunkingOf, chunkOptions, documentChunks, type ChunkParams } from '../domain/chunks/options';

export { chunkOptions, documentChunks, type ChunkParams };

/**
 * The chunks capability (contract §14): `chunking=true` on a document, PDF, image or recording adds `data.chunks[]`
 * and `data.chunking`. The results' builders call it (activities/pdf-results.ts, the document and image OCR steps,
 * the transcriptions' `transcriptionData`) and so does `POST /api/chunks`, so every operation cuts one way. The
 * options are the job's parameters as the API validated them (core/jobs/job-fields.ts `chunkingFields`).
 */

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
