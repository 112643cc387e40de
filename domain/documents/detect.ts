import * as CFB from 'cfb';
import yauzl from 'yauzl';
import { DocumentError, type DocumentFormat, type ReadLimits } from './model';
import { decodeText, looksBinary } from './text-decode';

/**
 * The format of a document by its content (contract §12): magic bytes, a zip container by its entries, an OLE
 * compound file by its streams, text by its shape. The file name and the declared type only break a tie between
 * text formats (plain text or Markdown, a one-line CSV), never decide alone: a `.docx` name on a PNG is a PNG.
 */

export interface Detected {
  format: DocumentFormat;
  /** The media type of what was detected (an image's own type: `image/png`). */
  mime: string;
}

export interface DetectHints {
  filename?: string;
  declaredType?: string;
}

const startsWith = (b: Uint8Array, sig: number[], at = 0) => sig.every((v, i) => b[at + i] === v);
const ascii = (b: Uint8Array, from: number, to: number) => String.fromCharCode(...b.subarray(from, to));

/** The images the OCR pipeline reads, by their signatures. */
function imageMime(b: Uint8Array): string | null {
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(b, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(b, [0x49, 0x49, 0x2a, 0x00]) || startsWith(b, [0x4d, 0x4d, 0x00, 0x2a])) return 'image/tiff';
  if (ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP') return 'image/webp';
  if (ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a') return 'image/gif';
  // "BM" starts many texts: a bitmap also has its DIB header's size at offset 14 (one of the known sizes).
  if (ascii(b, 0, 2) === 'BM' && b.length >= 18) {
    const dib = b[14]! | (b[15]! << 8) | (b[16]! << 16) | (b[17]! << 24);
    if ([12, 40, 52, 56, 64, 108, 124].includes(dib)) return 'image/bmp';
  }
  return null;
}

const ODF_MIMETYPES: Record<string, DocumentFormat> = {
  'application/vnd.oasis.opendocument.text': 'odt',
  'application/vnd.oasis.opendocument.presentation': 'odp',
  'application/vnd.oasis.opendocument.spreadsheet': 'ods',
  'application/epub+zip': 'epub',
};

const MIME_OF: Partial<Record<DocumentFormat, string>> = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  doc: 'application/msword',
  xls: 'application/vnd.ms-excel',
  ppt: 'application/vnd.ms-powerpoint',
  msg: 'application/vnd.ms-outlook',
  odt: 'application/vnd.oasis.opendocument.text',
  odp: 'application/vnd.oasis.opendocument.presentation',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  epub: 'application/epub+zip',
  rtf: 'application/rtf',
  pdf: 'application/pdf',
  eml: 'message/rfc822',
  html: 'text/html',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  markdown: 'text/markdown',
  text: 'text/plain',
};

const found = (format: DocumentFormat, mime?: string): Detected => ({
  format,
  mime: mime ?? MIME_OF[format] ?? 'application/octet-stream',
});

/** A zip's entry names, and the first bytes of its `mimetype` entry; only names are read, nothing is inflated. */
function zipEntries(bytes: Uint8Array, limits: ReadLimits): Promise<{ names: string[]; mimetype?: string } | null> {
  return new Promise((resolve) => {
    yauzl.fromBuffer(
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      { lazyEntries: true },
      (err, zip) => {
        if (err || !zip) return resolve(null);
        const names: string[] = [];
        let mimetype: string | undefined;
        let failed: unknown = null;
        zip.on('error', () => resolve(null));
        zip.on('end', () => (failed ? resolve(null) : resolve({ names, mimetype })));
        zip.on('entry', (e: yauzl.Entry) => {
          names.push(e.fileName);
          if (names.length > limits.maxEntries) {
            zip.close();
            return resolve({ names, mimetype });
          }
          // The ODF and EPUB `mimetype` entry is a few dozen bytes; a larger one is not that entry.
          if (e.fileName !== 'mimetype' || e.uncompressedSize > 200) return zip.readEntry();
          zip.openReadStream(e, (e2, stream) => {
            if (e2 || !stream) {
              failed = e2;
              return zip.readEntry();
            }
            const chunks: Buffer[] = [];
            stream.on('data', (c: Buffer) => chunks.push(c));
            stream.on('error', () => zip.readEntry());
            stream.on('end', () => {
              mimetype = Buffer.concat(chunks).toString('latin1').trim();
              zip.readEntry();
            });
          });
        });
        zip.readEntry();
      },
    );
  });
}

async function detectZip(bytes: Uint8Array, limits: ReadLimits): Promise<Detected | null> {
  const z = await zipEntries(bytes, limits);
  // A zip whose directory cannot be read (truncated, damaged) is a corrupt container, not an unknown format.
  if (!z) throw new DocumentError('UNPROCESSABLE_INPUT', 'corrupt', 'The zip container is damaged or truncated.');
  if (z.names.length > limits.maxEntries)
    throw new DocumentError(
      'PAYLOAD_TOO_LARGE',
      'too_many_entries',
      `The container lists more than ${limits.maxEntries} entries.`,
    );
  if (z.mimetype && ODF_MIMETYPES[z.mimetype]) return found(ODF_MIMETYPES[z.mimetype]!);
  if (z.names.includes('[Content_Types].xml')) {
    if (z.names.some((n) => n.startsWith('word/'))) return found('docx');
    if (z.names.some((n) => n.startsWith('ppt/'))) return found('pptx');
    if (z.names.some((n) => n.startsWith('xl/'))) return found('xlsx');
  }
  return null;
}

/** An OLE compound file by its streams (Word, Excel, PowerPoint, Outlook); an encrypted OOXML file is one too. */
function detectCfb(bytes: Uint8Array): Detected | null {
  let names: string[];
  try {
    names = CFB.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { type: 'buffer' }).FullPaths;
  } catch {
    throw new DocumentError('UNPROCESSABLE_INPUT', 'corrupt', 'The compound file (OLE) cannot be read.');
  }
  // Only the root's own entries say what the file is: an Outlook item carrying a Word document as an OLE attachment
  // has a `WordDocument` stream too, down in that attachment's storage (and a Word file may embed an Outlook item).
  const root = names.flatMap((n) => {
    const m = /^[^/]*\/([^/]+)\/?$/.exec(n);
    return m ? [m[1]!] : [];
  });
  const has = (s: string) => root.includes(s);
  if (has('EncryptionInfo') && has('EncryptedPackage'))
    throw new DocumentError('UNPROCESSABLE_INPUT', 'encrypted', 'The document is encrypted (password protected).');
  if (has('WordDocument')) return found('doc');
  if (has('Workbook') || has('Book')) return found('xls');
  if (has('PowerPoint Document')) return found('ppt');
  // [MS-OXMSG]: an Outlook item's properties are `__substg1.0_<tag>` streams and the `__properties_version1.0` stream.
  if (root.some((n) => n.startsWith('__substg1.0_')) || has('__properties_version1.0')) return found('msg');
  return null;
}

/** Header names an e-mail carries; a header block needs two of them to be taken for one. */
const MAIL_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'subject',
  'date',
  'message-id',
  'mime-version',
  'received',
  'reply-to',
  'return-path',
  'delivered-to',
  'content-type',
]);

/** An RFC 5322 header block: `Name: value` lines (folded lines allowed) up to a blank line, with mail headers. */
export function looksLikeEmail(text: string): boolean {
  const end = text.search(/\r?\n\r?\n/);
  if (end <= 0) return false;
  let known = 0;
  for (const line of text.slice(0, end).split(/\r?\n/)) {
    if (/^[ \t]/.test(line)) continue; // a folded header's continuation
    const m = /^([!-9;-~]+):/.exec(line);
    if (!m) return false;
    if (MAIL_HEADERS.has(m[1]!.toLowerCase())) known++;
  }
  return known >= 2;
}

/** Markup that starts a web page (after comments and whitespace), or a page's landmarks early on. */
export function looksLikeHtml(text: string): boolean {
  const head = text.slice(0, 4096).replace(/^(\s|<!--[\s\S]*?-->)*/, '');
  if (/^<(!doctype\s+html|html|head|body)\b/i.test(head)) return true;
  if (/^<\?xml[^>]*>\s*<!doctype\s+html/i.test(head)) return true;
  // A fragment: it starts with a tag and most of its lines are inside known block elements.
  return /^<(div|p|table|h[1-6]|ul|ol|section|article|main|meta|title)\b[^>]*>/i.test(head) && /<\/\w+>/.test(head);
}

/** Counts `delim` outside double quotes on one line. */
function delimiters(line: string, delim: string): number {
  let n = 0;
  let quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (ch === delim && !quoted) n++;
  }
  return n;
}

/** CSV (`,` or `;`) or TSV: every one of the first lines has the same number (≥ 1) of the delimiter. */
export function delimitedFormat(text: string, minLines = 2): 'csv' | 'tsv' | null {
  const lines = text
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '')
    .slice(0, 50);
  if (lines.length < minLines) return null;
  for (const [delim, fmt] of [
    ['\t', 'tsv'],
    [',', 'csv'],
    [';', 'csv'],
  ] as const) {
    const n = delimiters(lines[0]!, delim);
    if (n >= 1 && lines.every((l) => delimiters(l, delim) === n)) return fmt;
  }
  return null;
}

/** Markdown's marks: ATX headings, fences, GFM tables, links, or list items; a plain text has none of them. */
export function looksLikeMarkdown(text: string): boolean {
  const sample = text.slice(0, 64 * 1024);
  if (/^#{1,6}[ \t]+\S/m.test(sample)) return true;
  if (/^(```|~~~)/m.test(sample)) return true;
  if (/^\|?[ \t]*:?-{3,}:?[ \t]*(\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*$/m.test(sample)) return true;
  if (/\[[^\]\n]+\]\([^)\s]+\)/.test(sample)) return true;
  const listItems = sample.match(/^[ \t]*([-*+]|\d{1,9}[.)])[ \t]+\S/gm)?.length ?? 0;
  return listItems >= 2;
}

function hinted(h: DetectHints | undefined, ext: string[], types: string[]): boolean {
  const name = h?.filename?.toLowerCase() ?? '';
  const type = h?.declaredType?.toLowerCase().split(';')[0]?.trim() ?? '';
  return ext.some((e) => name.endsWith(e)) || types.includes(type);
}

/** A text file's format: e-mail, HTML, CSV/TSV, Markdown or plain text (the hints break text ↔ Markdown ties). */
function detectText(text: string, hints?: DetectHints): Detected {
  if (looksLikeEmail(text)) return found('eml');
  if (looksLikeHtml(text)) return found('html');
  const delimited = delimitedFormat(text);
  if (delimited) return found(delimited);
  if (looksLikeMarkdown(text)) return found('markdown');
  // Ties: a single delimited line, or a text without marks, named or declared as what it could be.
  const oneLine = delimitedFormat(text, 1);
  if (oneLine && hinted(hints, ['.csv', '.tsv', '.tab'], ['text/csv', 'text/tab-separated-values']))
    return found(oneLine);
  if (hinted(hints, ['.md', '.markdown'], ['text/markdown', 'text/x-markdown'])) return found('markdown');
  return found('text');
}

/**
 * The document's format, or null when it is none the endpoint knows. Throws `DocumentError` for a container that
 * says what it is but cannot be opened (an encrypted Office file, a broken compound file) or lists too many entries.
 */
export async function detectFormat(
  bytes: Uint8Array,
  limits: ReadLimits,
  hints?: DetectHints,
): Promise<Detected | null> {
  if (bytes.length === 0) return null;
  if (Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 1024)).includes('%PDF-', 0, 'latin1'))
    return found('pdf');
  const image = imageMime(bytes);
  if (image) return found('image', image);
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04])) return detectZip(bytes, limits);
  if (startsWith(bytes, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) return detectCfb(bytes);
  if (ascii(bytes, 0, 5) === '{\\rtf') return found('rtf');
  if (looksBinary(bytes)) return null;
  return detectText(decodeText(bytes.subarray(0, 256 * 1024)), hints);
}
