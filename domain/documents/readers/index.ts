import type { DocumentFormat, DocumentReader } from '../model';
import { readCsv, readTsv } from './csv';
import { readHtml } from './html';
import { readMarkdown, readText } from './text';

/**
 * The readers by format. A format without a reader here is answered 400 `INVALID_FORMAT` naming the supported list
 * (`supportedFormats`), which grows as readers arrive (docx/pptx/xlsx/odf/epub: helper ooxml; eml/msg: mailbook).
 * `pdf` and `image` have no reader: the API routes them to their own pipelines.
 */
export const DOCUMENT_READERS: Partial<Record<DocumentFormat, DocumentReader>> = {
  text: readText,
  markdown: readMarkdown,
  csv: readCsv,
  tsv: readTsv,
  html: readHtml,
};

/** The formats the document endpoint answers: those with a reader, and PDF and images (their own pipelines). */
export const supportedFormats = (): DocumentFormat[] => [
  ...(Object.keys(DOCUMENT_READERS) as DocumentFormat[]),
  'pdf',
  'image',
];

export const readerFor = (format: DocumentFormat): DocumentReader | undefined => DOCUMENT_READERS[format];
