import { JOB_DEFAULTS } from '../jobs/job-defaults';
import { createHash } from 'node:crypto';

/**
 * Every result-cache key, built here only (architecture.md "State"): key = sha256 of operation + input content hash +
 * normalised parameters + model identity; the entry lives at `cache/<operation folder>/<key>.json` (core/stores/cache.ts).
 * The API and the worker compute a key the same way, so what one writes the other finds. A key that changes misses
 * every entry stored under it: test/unit/cache-keys.test.ts pins each one.
 */

export const contentHash = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

/** JSON with object keys sorted at every level, so equal parameters give equal keys whatever their order. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

interface CacheKeyParts {
  operation: string;
  /** sha256 of the input content (text, HTML, file bytes). */
  inputHash: string;
  params?: Record<string, unknown>;
  /** The model (and base URL host) whose answer is cached; '' for model-free operations. */
  model?: string;
}

function cacheKey(p: CacheKeyParts): string {
  return contentHash(canonicalJson([p.operation, p.inputHash, p.params ?? {}, p.model ?? '']));
}

/** Cache operation folders (cache/<operation>/<key>.json). */
export const PDF_CACHE_OPERATION = 'pdf';
export const PDF_PAGE_CACHE_OPERATION = 'pdf-page';
export const IMAGE_OCR_CACHE_OPERATION = 'imageocr';
export const DOCUMENT_CACHE_OPERATION = 'document';
export const EXTERNAL_OCR_CACHE_OPERATION = 'external-ocr';
export const TRANSFORM_CACHE_OPERATION = 'transformer';
export const AUDIO_CACHE_OPERATION = 'audio';
export const SESSION_TRANSCRIPT_CACHE_OPERATION = 'session-transcript';

/**
 * The rule `combined` reads a page by, part of its cache keys (result and page cache), so results read under
 * another rule are not reused: `image-pages-quality` OCRs only pages that paint an image and have no usable text layer, and keeps the text layer
 * when it scores better than the OCR (`pageQuality`).
 */
const COMBINED_RULE = 'image-pages-quality';

/**
 * The version of the Markdown rules (domain/pdf/markdown) in the keys of `output_format=markdown` results: pages
 * carry their layout, and results their Markdown, so a change of the rules changes this (3: pages carry their
 * blocks; 4: scanned lines on their words' baseline and size; 5: journal reading order, booktabs tables with
 * spans, captions and footnotes).
 */
const MARKDOWN_FORMAT = 'markdown-5';

/** The version of the chunking rules (domain/chunks) in the keys of results with chunks (contract §14). */
const CHUNK_RULES = 'chunks-1';

/**
 * The key's part of a result's chunking options: the rules' version, the tokenizer and the budget; absent without
 * `chunking=true`, so the keys of results that do not ask stay as they were.
 */
export function chunkKeyParams(params: Record<string, unknown>): { chunks?: string } {
  if (params.chunking !== true) return {};
  const d = JOB_DEFAULTS.chunks;
  const parts = [
    CHUNK_RULES,
    params.chunk_tokenizer ?? d.chunk_tokenizer,
    params.chunk_max_tokens ?? d.chunk_max_tokens,
    params.chunk_overlap_tokens ?? d.chunk_overlap_tokens,
  ];
  return { chunks: parts.map(String).join(':') };
}

/** The parts of a deployment that change a PDF's text: the text engine and the vision model, when there is one. */
interface PdfCacheContext {
  textEngine: string;
  visionModel?: string;
}

/**
 * The result-cache key of a PDF text extraction (entries point at the job's stored results): the document's
 * sha256, the method, the page range, the OCR languages, and what the method depends on (the text engine for
 * `native` and `combined`, the vision model for `vision_llm` and `combined`). Null when the request is not cached: a
 * template (the model's answer is the transformer's to cache) or page images (an archive, not text).
 */
export function pdfCacheKey(inputSha256: string, params: Record<string, unknown>, ctx: PdfCacheContext): string | null {
  if (!inputSha256 || params.template || params.includeImages) return null;
  const method = String(params.extraction_method ?? 'native');
  const usesTextLayer = method === 'native' || method === 'combined';
  const usesVision = method === 'vision_llm' || method === 'combined';
  return cacheKey({
    operation: `pdf-${method}`,
    inputHash: inputSha256,
    params: {
      page_start: params.page_start ?? null,
      page_end: params.page_end ?? null,
      languages: method === 'native' ? null : String(params.ocr_language ?? params.source_language ?? ''),
      ...(usesTextLayer ? { engine: ctx.textEngine } : {}),
      ...(method === 'combined' ? { rule: COMBINED_RULE } : {}),
      ...(params.output_format === 'markdown' ? { format: MARKDOWN_FORMAT } : {}),
      ...(params.output_format === 'markdown' && params.table_format === 'gfm' ? { tables: 'gfm' } : {}),
      // A document job's PDF (contract §12): the same answer as the PDF endpoint's, kept apart from it all the same.
      ...(params.document_format ? { document: params.document_format } : {}),
      ...chunkKeyParams(params),
    },
    model: usesVision ? (ctx.visionModel ?? '') : '',
  });
}

/**
 * The version of the document readers and their renderer (domain/documents) in the keys of document results: a change
 * of what a reader finds or how the model is rendered changes this.
 */
export const DOCUMENT_RULES = 'documents-1';

/**
 * The result-cache key of a document read from its own structure (`extraction_method=native`): the file's bytes,
 * the parts asked for, the output format and the readers' version. Null when the request is not cached (a template,
 * images). A rendered document's PDF goes to the PDF cache under its own bytes (`pdfCacheKey`).
 */
export function documentCacheKey(inputSha256: string, params: Record<string, unknown>): string | null {
  if (!inputSha256 || params.template || params.includeImages) return null;
  return cacheKey({
    operation: 'document-native',
    inputHash: inputSha256,
    params: {
      page_start: params.page_start ?? null,
      page_end: params.page_end ?? null,
      format: params.output_format === 'markdown' ? 'markdown' : 'text',
      // Absent for the default, so the keys of results that do not ask stay as they were.
      ...(params.output_format === 'markdown' && params.table_format === 'gfm' ? { tables: 'gfm' } : {}),
      rules: DOCUMENT_RULES,
      ...chunkKeyParams(params),
    },
  });
}

/**
 * The page cache's key of one PDF page: the document, the page, the method, the OCR languages, the text engine
 * (`native`, `combined`) and the model of the methods that call one (`vision_llm`, `combined`).
 */
export function pdfPageCacheKey(
  inputSha256: string,
  page: { page: number; method: string; languages: readonly string[]; engine: string; markdown?: boolean },
  model: string | undefined,
): string {
  const { method } = page;
  return cacheKey({
    operation: PDF_PAGE_CACHE_OPERATION,
    inputHash: inputSha256,
    params: {
      page: page.page,
      method,
      languages: page.languages,
      ...(method === 'native' || method === 'combined' ? { engine: page.engine } : {}),
      ...(method === 'combined' ? { rule: COMBINED_RULE } : {}),
      ...(page.markdown ? { format: MARKDOWN_FORMAT } : {}),
    },
    model: method === 'native' || method === 'local_ocr' ? '' : (model ?? ''),
  });
}

/**
 * The result-cache key of an image OCR: the image's sha256, the OCR languages and, with a template, the template's
 * source and context and the model that fills it (editing a template or switching models invalidates the entry).
 * A URL is keyed by the bytes it served, so a changed image is recognised again.
 */
export function imageOcrCacheKey(
  imageSha256: string,
  params: Record<string, unknown>,
  ctx: { templateSource?: string; model?: string },
): string {
  const template = ctx.templateSource !== undefined;
  return cacheKey({
    operation: IMAGE_OCR_CACHE_OPERATION,
    inputHash: imageSha256,
    params: {
      languages: String(params.ocr_language ?? params.source_language ?? ''),
      // Absent for text, so the keys of text results stay as they were.
      ...(params.output_format === 'markdown' ? { format: MARKDOWN_FORMAT } : {}),
      ...(template ? { template_source: contentHash(ctx.templateSource!), context: params.context ?? {} } : {}),
      ...chunkKeyParams(params),
    },
    model: template ? (ctx.model ?? '') : '',
  });
}

/** The cache key of an external OCR answer: the document, the pages asked for, the images option and the service. */
export function externalOcrCacheKey(
  pdfSha256: string,
  req: { pages: number[]; includeImages: boolean },
  service: { url: string; model: string },
): string {
  return cacheKey({
    operation: EXTERNAL_OCR_CACHE_OPERATION,
    inputHash: pdfSha256,
    params: { pages: req.pages, include_images: req.includeImages },
    model: `${service.url} ${service.model}`,
  });
}

const MODEL_FREE_TRANSFORMS = new Set(['html-to-markdown', 'extract-tables']);

/**
 * The cache key of a transformer operation. Parameters that do not change the result (use_cache, webhook) are left
 * out; a template's source is part of the key, so editing a template invalidates its entries.
 */
export function transformCacheKey(
  params: Record<string, unknown>,
  opts: { model?: string; templateSource?: string } = {},
): string {
  const { use_cache: _u, webhook: _w, ...rest } = params;
  (void _u, _w);
  const operation = String(rest.operation ?? '');
  return cacheKey({
    operation: `transformer-${operation}`,
    inputHash: contentHash(canonicalJson(rest)),
    params: opts.templateSource !== undefined ? { template_source: contentHash(opts.templateSource) } : {},
    model: MODEL_FREE_TRANSFORMS.has(operation) ? '' : (opts.model ?? ''),
  });
}

const nonEmpty = (v: unknown, fallback: string): string => (typeof v === 'string' && v ? v : fallback);

/**
 * The result-cache key of an audio job (contract §7): the file's sha256, source and target language, the template
 * (its name and source) and the models (speech, and the language model that fills templates and translates); and the
 * options beyond the spec that change what is kept (word timings, VAD off, a prompt).
 */
export function audioCacheKey(
  sha256: string,
  params: Record<string, unknown>,
  ctx: { templateSource?: string; speechModel: string; llmModel?: string },
): string {
  const template = typeof params.template === 'string' && params.template ? params.template : undefined;
  return cacheKey({
    operation: AUDIO_CACHE_OPERATION,
    inputHash: sha256,
    params: {
      source_language: nonEmpty(params.source_language, JOB_DEFAULTS.transcription.source_language),
      target_language: nonEmpty(params.target_language, JOB_DEFAULTS.transcription.target_language),
      template,
      template_source: template ? ctx.templateSource : undefined,
      // Beyond the spec (contract §9), each only when it changes the outcome, so the keys of requests without them
      // stay as they were: word timings kept (asked, or needed for subtitles or chunks), VAD off, a prompt, speaker
      // labels.
      words:
        params.word_timestamps === true || typeof params.subtitles === 'string' || params.chunking === true
          ? true
          : undefined,
      vad: params.vad === false ? false : undefined,
      prompt: typeof params.prompt === 'string' && params.prompt.trim() ? params.prompt.trim() : undefined,
      diarize: params.diarize === true ? true : undefined,
      grounding: template && params.grounding === true ? true : undefined,
      max_speakers:
        params.diarize === true && typeof params.max_speakers === 'number' ? params.max_speakers : undefined,
    },
    model: `${ctx.speechModel}|${ctx.llmModel ?? ''}`,
  });
}

/**
 * The cache key of a session video's transcript: the video's URL, the source language and the speech model (a second
 * session with the same recording is not transcribed again).
 */
export function sessionTranscriptCacheKey(videoUrl: string, sourceLanguage: string, speechModel: string): string {
  return cacheKey({
    operation: SESSION_TRANSCRIPT_CACHE_OPERATION,
    inputHash: contentHash(videoUrl),
    params: { source_language: sourceLanguage },
    model: speechModel,
  });
}
