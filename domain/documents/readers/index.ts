import type { DocumentFormat, DocumentReader } from '../model';
import { readCsv, readTsv } from './csv';
import { readDocx } from './docx';
import { readEml } from './eml';
import { readEpub } from './epub';
import { readHtml } from './html';
import { readMsg } from './msg';
import { readOdp, readOds, readOdt } from './odf';
import { readPptx } from './pptx';
import { readMarkdown, readText } from './text';
import { readXlsx } from './xlsx';

/**
 * The readers by format. A format without a reader here is answered 400 `INVALID_FORMAT` naming the supported list
 * (`supportedFormats`), which grows as readers arrive (DOC, XLS, PPT and RTF, through LibreOffice, are still to come).
 * `pdf` and `image` have no reader: the API routes them to their own pipelines.
 */
export const DOCUMENT_READERS: Partial<Record<DocumentFormat, DocumentReader>> = {
  text: readText,
  markdown: readMarkdown,
  csv: readCsv,
  tsv: readTsv,
  html: readHtml,
  docx: readDocx,
  xlsx: readXlsx,
  pptx: readPptx,
  odt: readOdt,
  ods: readOds,
  odp: readOdp,
  // Read alone, an e-mail's (EML, MSG) attachments are listed without their content; `readDocument` (../read.ts)
  // reads them.
  eml: (bytes, limits) => readEml(bytes, limits, { readAttachment: () => Promise.resolve(null) }),
  msg: (bytes, limits) => readMsg(bytes, limits, { readAttachment: () => Promise.resolve(null) }),
  epub: readEpub,
};

/** The formats the document endpoint answers: those with a reader, and PDF and images (their own pipelines). */
export const supportedFormats = (): DocumentFormat[] => [
  ...(Object.keys(DOCUMENT_READERS) as DocumentFormat[]),
  'pdf',
  'image',
];

export const readerFor = (format: DocumentFormat): DocumentReader | undefined => DOCUMENT_READERS[format];
