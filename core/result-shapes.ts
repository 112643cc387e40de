/**
 * The `data` object of each synchronous endpoint (spec §4.2, §4.3, §4.10), built on the pipeline side from what a
 * job computed. A job's results, its completion webhook and the synchronous answer all carry this object
 * (see job-results.ts), so every entry point gives the same answer.
 */

/** A ZIP in a result, Base64-encoded (spec: `*_archive_filename`, `*_archive_data`). */
export interface ArchiveData {
  filename: string;
  data: string;
}

/** What a transformer operation computed (also its cache entry's text, metadata and output). */
export interface TransformerOutcome {
  text: string;
  metadata: Record<string, unknown>;
  output?: Record<string, unknown>;
}

/** `data` of `/api/transformer/*` and `/api/common/blocks`, per operation. */
export function transformerData(operation: string, params: Record<string, unknown>, r: TransformerOutcome): Record<string, unknown> {
  const out = r.output ?? {};
  const originalText = String(params.text ?? '');
  const lang = (k: 'source_language' | 'target_language') => String(out[k] ?? params[k] ?? 'de');
  switch (operation) {
    case 'text':
      return { original_text: originalText, translated_text: String(out.translated_text ?? r.text), source_language: lang('source_language'), target_language: lang('target_language') };
    case 'template':
      return { original_text: originalText, transformed_text: String(out.transformed_text ?? r.text), template_fields: out.template_fields ?? {} };
    case 'summarize':
      return { original_text: originalText, summary: String(out.summary ?? r.text) };
    case 'html-to-markdown':
      return { html: String(params.html ?? ''), markdown: r.text };
    case 'extract-tables':
      return { tables: r.metadata.tables ?? [] };
    case 'blocks':
      return { processed_blocks: out.processed_blocks ?? [], newsfeed_entry: String(out.newsfeed_entry ?? r.text) };
    default:
      throw new Error(`unknown transformer operation ${operation}`);
  }
}

/** `data` of `/api/pdf/process`. */
export function pdfData(text: string, metadata: Record<string, unknown>, images: ArchiveData | null): Record<string, unknown> {
  return { extracted_text: text, metadata, images_archive_filename: images?.filename ?? null, images_archive_data: images?.data ?? null };
}

/** `data` of `/api/imageocr/process` and `/process-url`. */
export function imageOcrData(text: string, metadata: Record<string, unknown>): Record<string, unknown> {
  return { extracted_text: text, metadata };
}

/** `data` of `/api/pdf/process-external-ocr`. */
export function externalOcrData(text: string, metadata: Record<string, unknown>, raw: unknown, pages: ArchiveData | null): Record<string, unknown> {
  return {
    extracted_text: text,
    metadata,
    external_ocr_raw: raw,
    pages_archive_filename: pages?.filename ?? null,
    pages_archive_data: pages?.data ?? null,
    images_archive_data: null,
    images_archive_filename: null,
  };
}

/** One frame of `/api/video/frames`: the second it shows and the path that downloads its JPEG (the files route). */
export interface VideoFrame {
  timestamp: number;
  path: string;
}

/** `data` of `/api/video/frames`: the frames in time order. */
export function videoFramesData(frames: VideoFrame[]): Record<string, unknown> {
  return { frames };
}
