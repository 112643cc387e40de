/**
 * The document model every reader of a non-PDF format produces (contract §12): parts (pages, slides, sheets,
 * chapters, messages, attachments) of typed blocks, with the document's metadata and its embedded images. One
 * renderer (`render.ts`) turns it into the endpoint's `extracted_text`, `markdown` and `metadata.text_contents[]`, so
 * no reader writes Markdown of its own and every format's output follows the same rules.
 *
 * Pure data: readers build it from the file's bytes (its XML, its MIME parts), never from the file's name.
 */

/** The formats the document endpoint reads, by content (`detect.ts`). */
export const DOCUMENT_FORMATS = [
  'docx',
  'doc',
  'odt',
  'rtf',
  'pptx',
  'ppt',
  'odp',
  'xlsx',
  'xls',
  'ods',
  'csv',
  'tsv',
  'epub',
  'eml',
  'msg',
  'html',
  'markdown',
  'text',
  'pdf',
  'image',
] as const;
export type DocumentFormat = (typeof DOCUMENT_FORMATS)[number];

/** Inline text with its emphasis, as the reader saw it; the renderer escapes and marks it. */
export interface InlineRun {
  text: string;
  bold?: boolean;
  italic?: boolean;
  code?: boolean;
  strike?: boolean;
  /** A hyperlink's target as the file states it (never fetched). */
  href?: string;
}

/** A block's text: a plain string, or runs with emphasis and links. */
export type Inline = string | InlineRun[];

export interface TableCell {
  text: Inline;
  /** Columns and rows this cell spans (1 when absent); a spanning cell makes the table an HTML table in Markdown. */
  colspan?: number;
  rowspan?: number;
  header?: boolean;
}

export type NoteKind = 'footnote' | 'endnote' | 'comment' | 'speaker_notes';

export type DocBlock =
  | { type: 'heading'; level: number; text: Inline }
  | { type: 'paragraph'; text: Inline }
  /** `level` 0 is the outermost list; `ordered` lists keep their number when the file gives one (`number`). */
  | { type: 'list_item'; level: number; ordered: boolean; number?: number; text: Inline }
  /**
   * Rows of cells as the file lays them out: a cell a span covers is NOT repeated (the spanning cell carries
   * `colspan`/`rowspan`). `headerRows`: how many leading rows are the header (default 1 when the first row is one).
   */
  | { type: 'table'; rows: TableCell[][]; headerRows?: number; caption?: string }
  | { type: 'code'; text: string; language?: string }
  | { type: 'quote'; text: Inline }
  /** A footnote, endnote, comment or slide's speaker notes: marked as such in the Markdown. */
  | { type: 'note'; kind: NoteKind; label?: string; author?: string; text: Inline }
  /** An embedded image, by its name in `DocumentModel.images`. */
  | { type: 'image'; name: string; alt?: string }
  /** Header fields shown as a front block (an e-mail's From, To, Date, Subject...). */
  | { type: 'fields'; fields: Array<[string, string]> }
  | { type: 'rule' }
  /**
   * Markdown source kept as the file wrote it (a Markdown file's own blocks): rendered verbatim into the Markdown,
   * its marks stripped for the text. Only a reader of Markdown produces it.
   */
  | { type: 'markdown'; text: string };

export type PartKind = 'page' | 'slide' | 'sheet' | 'chapter' | 'message' | 'attachment' | 'document';

export interface DocPart {
  kind: PartKind;
  /** The slide's title, the sheet's name, the chapter's title, an attachment's file name. */
  name?: string;
  blocks: DocBlock[];
  /**
   * An attachment (of an e-mail) processed as its own document: its result, rendered as a part of its own. A PDF or
   * an image attachment is read by its pipeline and arrives here as its text (`blocks`) after the fact.
   */
  attachment?: { filename: string; mime?: string; format?: DocumentFormat; size: number };
}

export interface DocImage {
  /** Unique within the document, a safe file name (`image-3.png`). */
  name: string;
  mime: string;
  data: Uint8Array;
}

export interface DocumentModel {
  format: DocumentFormat;
  title?: string;
  author?: string;
  /** As the document declares it (BCP 47 or the file's own code), never guessed. */
  language?: string;
  /** Pages as the file counts them (a word processor's saved page count), when it does. */
  pageCount?: number;
  parts: DocPart[];
  images: DocImage[];
}

/** What a reader may use: the budgets of the input (contract §10), enforced while it reads. */
export interface ReadLimits {
  /** Largest total of uncompressed bytes read from a container (zip bomb guard). */
  maxUncompressedBytes: number;
  /** Most entries a container may list. */
  maxEntries: number;
  /** Largest ratio of an entry's uncompressed to compressed size. */
  maxCompressionRatio: number;
  /** Deepest nesting of XML elements (and of e-mails in e-mails, `maxDepth` below). */
  maxXmlDepth: number;
  /** Most e-mails nested in e-mails read (deeper ones are listed as attachments, not read). */
  maxMessageDepth: number;
}

export const DEFAULT_READ_LIMITS: ReadLimits = {
  maxUncompressedBytes: 512 * 1024 * 1024,
  maxEntries: 10_000,
  maxCompressionRatio: 200,
  maxXmlDepth: 256,
  maxMessageDepth: 3,
};

/** A reader: the file's bytes to the model. Throws `DocumentError` for what the file cannot give. */
export type DocumentReader = (bytes: Uint8Array, limits: ReadLimits) => Promise<DocumentModel>;

/** Why a document cannot be read: the API answers `code`'s status (422 `UNPROCESSABLE_INPUT`, 413, 400). */
export class DocumentError extends Error {
  constructor(
    readonly code: 'UNPROCESSABLE_INPUT' | 'PAYLOAD_TOO_LARGE' | 'INVALID_FORMAT',
    /** `encrypted`, `password_protected`, `corrupt`, `too_many_entries`, `expansion_too_large`, `too_deep`... */
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'DocumentError';
  }
}
