/**
 * The values of the job contract that workflows read at run time, so this module imports no zod (the workflow bundle
 * may not): the extraction methods and every parameter default. The schemas (`core/jobs/job-params.ts`) apply the defaults
 * a job's parameters record when the API creates it; `withDefaults` gives the readers (pipelines, activities) the
 * same values for inputs recorded without them (histories from before, child jobs) and for the ones only assumed.
 */

/** How a PDF's text is read (spec §4.2), in the order the API documents them. */
export const EXTRACTION_METHODS = ['native', 'local_ocr', 'vision_llm', 'combined'] as const;
export type ExtractionMethod = (typeof EXTRACTION_METHODS)[number];

/**
 * How a document of another format is read (contract §12): `native`, its own structure (its XML, its MIME parts);
 * `render`, LibreOffice's PDF of it through the PDF path, whose method is `render_method` (EXTRACTION_METHODS).
 */
export const DOCUMENT_METHODS = ['native', 'render'] as const;
export type DocumentMethod = (typeof DOCUMENT_METHODS)[number];

/** What a PDF job answers besides `extracted_text` (contract §9): `markdown` adds the document's Markdown. */
export const OUTPUT_FORMATS = ['text', 'markdown'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/**
 * How the Markdown holds a table whose cells span (contract §13): `auto` as an HTML table inside it, `gfm` as a GFM
 * table with a spanning cell's text repeated into each cell it covers.
 */
export const TABLE_FORMATS = ['auto', 'gfm'] as const;
export type TableFormatName = (typeof TABLE_FORMATS)[number];

/** The tokenizers chunks are counted with (contract §14): their tables ship inside the `gpt-tokenizer` package. */
export const TOKENIZERS = ['cl100k_base', 'o200k_base'] as const;
export type TokenizerName = (typeof TOKENIZERS)[number];

/**
 * Every parameter default, once, by the parameters' family. Recorded at creation: `transcription` (audio and video
 * jobs) and `session`. Assumed when absent, never written into a job's parameters: `pdf` (the `/api/pdf/process`
 * form applies it), `document`, `transformer` and `summary` (their routes apply them), `speech` (audio and video jobs), `chunks`.
 */
export const JOB_DEFAULTS: {
  pdf: { extraction_method: ExtractionMethod };
  document: { extraction_method: DocumentMethod; render_method: ExtractionMethod };
  transcription: { source_language: string; target_language: string };
  speech: { word_timestamps: boolean; vad: boolean; diarize: boolean };
  session: { source_language: string; target_language: string; template: string; create_archive: boolean };
  transformer: { source_language: string; target_language: string };
  summary: { target_language: string };
  chunks: { chunk_max_tokens: number; chunk_overlap_tokens: number; chunk_tokenizer: TokenizerName };
} = {
  pdf: { extraction_method: 'native' },
  document: { extraction_method: 'native', render_method: 'native' },
  transcription: { source_language: 'de', target_language: 'de' },
  // Audio and video options beyond the spec (contract §9): assumed when absent, never recorded, so jobs from before
  // them read as they did. `subtitles` and `prompt` have none (absent: no subtitles, no prompt).
  speech: { word_timestamps: false, vad: true, diarize: false },
  session: { source_language: 'en', target_language: 'de', template: 'Session', create_archive: false },
  transformer: { source_language: 'de', target_language: 'de' },
  summary: { target_language: 'de' },
  // `chunking=true` (contract §14): assumed when absent, never recorded.
  chunks: { chunk_max_tokens: 512, chunk_overlap_tokens: 0, chunk_tokenizer: 'cl100k_base' },
};

/** The chunking options a job's parameters hold (contract §14), to pass on to the pipeline that reads its input. */
export function chunkParamsOf(p: {
  chunking?: boolean;
  chunk_max_tokens?: number;
  chunk_overlap_tokens?: number;
  chunk_tokenizer?: TokenizerName;
}): { chunking?: boolean; chunk_max_tokens?: number; chunk_overlap_tokens?: number; chunk_tokenizer?: TokenizerName } {
  const out: ReturnType<typeof chunkParamsOf> = {};
  if (p.chunking !== undefined) out.chunking = p.chunking;
  if (p.chunk_max_tokens !== undefined) out.chunk_max_tokens = p.chunk_max_tokens;
  if (p.chunk_overlap_tokens !== undefined) out.chunk_overlap_tokens = p.chunk_overlap_tokens;
  if (p.chunk_tokenizer !== undefined) out.chunk_tokenizer = p.chunk_tokenizer;
  return out;
}

export type DefaultsFamily = keyof typeof JOB_DEFAULTS;

/**
 * `p` with the family's defaults in place of values that are absent, empty or not of the default's kind (what the
 * readers assumed before the defaults had one home). The one place a reader applies a default: not a validation.
 */
export function withDefaults<F extends DefaultsFamily, P extends object>(
  family: F,
  p: P,
): P & (typeof JOB_DEFAULTS)[F] {
  const out = { ...p } as Record<string, unknown>;
  for (const [k, d] of Object.entries(JOB_DEFAULTS[family])) {
    const v = out[k];
    if (typeof v !== typeof d || v === '') out[k] = d;
  }
  return out as P & (typeof JOB_DEFAULTS)[F];
}
