import type { BlobStore } from '../core/stores/blob-store';
import { readCache, writeCache } from '../core/stores/cache';
import { DOCUMENT_CACHE_OPERATION, documentCacheKey } from '../core/stores/cache-keys';
import type { DocumentResultData } from '../core/results/result-schemas-document';
import type { DocumentModel, ReadLimits } from '../domain/documents/model';
import { renderDocument } from '../domain/documents/render';
import type { TableFormat } from '../domain/documents/render-table';
import { documentChunks, type ChunkParams } from './chunks';

/**
 * The document capability (contract §12): a document of another format than PDF read from its own structure
 * (domain/documents) into the PDF answer's shape, and its result cache. The job's steps call it
 * (activities/document.activities.ts); the engines a format needs (LibreOffice for DOC, XLS, PPT and RTF) are the
 * caller's.
 */

/** The entry: the endpoint's `data` (a result with images or a template is never cached). */
export type DocumentEntry = DocumentResultData;

/** The key of this document under these parameters; null when the request is not cached (a template, images). */
export const documentKey = (sha256: string, params: Record<string, unknown>): string | null =>
  documentCacheKey(sha256, params);

/** The entry under `key` (the lookup counted), or null. */
export const cachedDocument = (store: BlobStore, key: string): Promise<DocumentEntry | null> =>
  readCache<DocumentEntry>(store, DOCUMENT_CACHE_OPERATION, key);

/** A fresh success's `data`, written under its key. */
export const rememberDocument = (store: BlobStore, key: string, data: DocumentEntry): Promise<void> =>
  writeCache(store, DOCUMENT_CACHE_OPERATION, key, data);

/**
 * The input budgets of a job's document (contract §10): what a container may expand to is bounded by the upload
 * limit, so a file that is small on the wire cannot become more than a large upload once read.
 */
export function documentReadLimits(maxUploadMb: number, base: ReadLimits): ReadLimits {
  return { ...base, maxUncompressedBytes: Math.min(base.maxUncompressedBytes, 4 * maxUploadMb * 1024 * 1024) };
}

export interface DocumentAnswerOptions {
  /** `output_format=markdown`: `data.markdown` and each part's `markdown`. */
  markdown: boolean;
  /** `table_format`: spanning tables as HTML (`auto`) or GFM. */
  tableFormat?: TableFormat;
  /** The 1-based range of parts (`page_start`/`page_end`). */
  first?: number;
  last?: number;
  /** The images archive's name and the paths inside it (`includeImages`). */
  images?: { filename: string; imagePaths: string[] };
  /** `chunking=true` and its options (contract §14). */
  chunks?: ChunkParams;
}

/** A document read as one part (a word processor's, a page, a table): its pages are not parts. */
export const isOnePart = (model: DocumentModel): boolean =>
  model.parts.length === 1 && model.parts[0]!.kind === 'document';

/**
 * The endpoint's `data` of a read document: its text, Markdown and parts rendered by the one renderer, its metadata
 * as the file states it. The range is the caller's, checked against the parts (`pageRange`).
 */
export function documentAnswer(model: DocumentModel, opts: DocumentAnswerOptions): DocumentResultData {
  // A word processor's document is one part; its pages are the ones the file says it has (saved by the program that
  // laid it out), when it says.
  const count = isOnePart(model) && model.pageCount ? model.pageCount : model.parts.length;
  const rendered = renderDocument(model, {
    markdown: opts.markdown,
    first: opts.first,
    last: opts.last,
    tableFormat: opts.tableFormat,
  });
  const text = opts.markdown ? (rendered.markdown ?? '') : rendered.text;
  const parts = rendered.contents.map((c) => ({ page: c.page, text: (opts.markdown ? c.markdown : c.text) ?? '' }));
  return {
    extracted_text: rendered.text,
    ...(opts.markdown ? { markdown: rendered.markdown ?? '' } : {}),
    metadata: {
      page_count: count,
      author: model.author ?? '',
      title: model.title ?? '',
      format: model.format,
      ...(model.language ? { language: model.language } : {}),
      text_contents: rendered.contents.map((c) => ({
        page: c.page,
        part: c.part,
        ...(c.name ? { name: c.name } : {}),
        text: c.text,
        ...(opts.markdown && c.markdown !== undefined ? { markdown: c.markdown } : {}),
      })),
      image_paths: opts.images?.imagePaths ?? [],
    },
    images_archive_filename: opts.images?.filename ?? null,
    images_archive_data: opts.images ? '' : null,
    ...documentChunks(text, parts, opts.chunks ?? {}),
  };
}
