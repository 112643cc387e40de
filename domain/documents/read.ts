import { detectFormat, type DetectHints } from './detect';
import { DocumentError, type DocPart, type DocumentFormat, type DocumentModel, type ReadLimits } from './model';
import { readerFor, supportedFormats } from './readers';
import { readEml, type AttachmentReader } from './readers/eml';
import { readMsg } from './readers/msg';

/**
 * A document's bytes to its model, the way the document endpoint reads one: the format by content, then that
 * format's reader. PDFs and images are not read here (`routed`): the caller sends them to their own pipelines.
 */
export type DocumentRead =
  | { kind: 'model'; model: DocumentModel }
  | { kind: 'routed'; format: Extract<DocumentFormat, 'pdf' | 'image'>; mime: string };

/**
 * Reads a PDF or an image attached to an e-mail (the caller's engines: this code is pure) into the attachment's
 * parts; null lists it without content.
 */
export type RoutedReader = (r: {
  format: Extract<DocumentFormat, 'pdf' | 'image'>;
  mime: string;
  bytes: Uint8Array;
  filename?: string;
}) => Promise<DocPart[] | null>;

/** Why a format is refused: the API answers 400 INVALID_FORMAT with these details (contract §1, §12). */
export class UnsupportedDocumentError extends DocumentError {
  constructor(
    readonly detected: DocumentFormat | null,
    readonly supported: DocumentFormat[],
  ) {
    super(
      'INVALID_FORMAT',
      detected ? `unsupported_${detected}` : 'unknown_format',
      `${detected ? `The format ${detected} is not read by this version` : 'The format of the file is not one this endpoint reads'}; supported: ${supported.join(', ')}.`,
    );
  }

  /** `details` of the 400 answer. */
  get details(): { error_type: string; supported_formats: DocumentFormat[]; detected_format?: DocumentFormat } {
    return {
      error_type: this.reason,
      supported_formats: this.supported,
      ...(this.detected ? { detected_format: this.detected } : {}),
    };
  }
}

/** `routed`: how a PDF or an image attached to an e-mail is read; without it, such attachments are only listed. */
export function readDocument(
  bytes: Uint8Array,
  limits: ReadLimits,
  hints?: DetectHints,
  routed?: RoutedReader,
): Promise<DocumentRead> {
  return readAt(bytes, limits, hints, 0, routed);
}

/** `depth`: how deep in e-mails the document is (0 for the file itself; an e-mail's attachment is one deeper). */
async function readAt(
  bytes: Uint8Array,
  limits: ReadLimits,
  hints: DetectHints | undefined,
  depth: number,
  routed?: RoutedReader,
): Promise<DocumentRead> {
  const found = await detectFormat(bytes, limits, hints);
  if (found?.format === 'pdf' || found?.format === 'image')
    return { kind: 'routed', format: found.format, mime: found.mime };
  const reader = found ? readerFor(found.format) : undefined;
  if (!found || !reader) throw new UnsupportedDocumentError(found?.format ?? null, supportedFormats());
  if (found.format === 'eml' || found.format === 'msg') {
    // An e-mail attached as a plain file (not message/rfc822, not an embedded Outlook item) counts as nested too.
    if (depth > limits.maxMessageDepth)
      throw new DocumentError('UNPROCESSABLE_INPUT', 'too_deep', 'The e-mail is nested deeper than is read.');
    const ctx = { readAttachment: attachments(limits, routed), depth };
    const model = found.format === 'eml' ? await readEml(bytes, limits, ctx) : await readMsg(bytes, limits, ctx);
    return { kind: 'model', model };
  }
  return { kind: 'model', model: await reader(bytes, limits) };
}

/**
 * An e-mail's attachments read as documents of their own, by content, with the same readers (a nested e-mail, EML or
 * MSG, recursing one level deeper, bounded by `limits.maxMessageDepth`). PDFs and images need engines this pure
 * code has not: they are read by `routed` when the caller gives one, else listed without content, as is a format
 * without a reader or one that fails to read.
 */
const attachments =
  (limits: ReadLimits, routed?: RoutedReader): AttachmentReader =>
  async ({ filename, mime, bytes, depth }) => {
    try {
      const read = await readAt(bytes, limits, { filename, declaredType: mime }, depth + 1, routed);
      if (read.kind === 'routed')
        return routed ? routed({ format: read.format, mime: read.mime, bytes, filename }) : null;
      return read.model.parts;
    } catch (e) {
      if (e instanceof DocumentError) return null;
      throw e;
    }
  };
