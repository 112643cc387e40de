import { simpleParser, type AddressObject, type Attachment } from 'mailparser';
import {
  DocumentError,
  type DocBlock,
  type DocImage,
  type DocPart,
  type DocumentModel,
  type ReadLimits,
} from '../model';
import { htmlToBlocks, textToBlocks } from './mail-html';

/**
 * Reads an attachment of an e-mail as a document of its own: the caller (the document activity) detects its format
 * by content and reads it with the registry's readers, a PDF or an image through its pipeline. `null`: no reader for
 * it (or nothing to read): the attachment is listed without content. `depth` is the message depth it was found at.
 */
export type AttachmentReader = (attachment: {
  filename: string;
  mime: string;
  bytes: Uint8Array;
  depth: number;
}) => Promise<DocPart[] | null>;

export interface MailReadContext {
  readAttachment: AttachmentReader;
  /** How deep this message is nested in others (0 for the file itself); set by the recursion, not the caller. */
  depth?: number;
}

/** One message's header fields, in the order the front block shows them. */
export interface MailHeaders {
  from?: string;
  to?: string;
  cc?: string;
  /** Only a sent item keeps its Bcc (an Outlook .msg); a received message does not show it. */
  bcc?: string;
  date?: Date;
  subject?: string;
}

/** The front block of a message: From, To, Cc, Bcc, Date (ISO 8601), Subject; missing ones left out. */
export function headerFields(h: MailHeaders): DocBlock {
  const fields: Array<[string, string]> = [];
  if (h.from) fields.push(['From', h.from]);
  if (h.to) fields.push(['To', h.to]);
  if (h.cc) fields.push(['Cc', h.cc]);
  if (h.bcc) fields.push(['Bcc', h.bcc]);
  if (h.date && !Number.isNaN(h.date.getTime())) fields.push(['Date', h.date.toISOString()]);
  if (h.subject) fields.push(['Subject', h.subject]);
  return { type: 'fields', fields };
}

/** The extension an image's name gets from its MIME type (names are ours, never the message's). */
const IMAGE_EXT: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/bmp': 'bmp',
  'image/tiff': 'tiff',
  'image/svg+xml': 'svg',
};

export const imageName = (index: number, mime: string): string => `image-${index}.${IMAGE_EXT[mime] ?? 'bin'}`;

/**
 * A non-inline attachment as parts: its own content through `readAttachment` (name and size on the first part), or
 * one empty `attachment` part listing it when nothing could read it.
 */
export async function attachmentParts(
  att: { filename: string; mime: string; bytes: Uint8Array },
  depth: number,
  ctx: MailReadContext,
): Promise<DocPart[]> {
  const meta = { filename: att.filename, mime: att.mime, size: att.bytes.byteLength };
  const read = await ctx.readAttachment({ ...att, depth });
  if (!read || !read.length) return [{ kind: 'attachment', name: att.filename, blocks: [], attachment: meta }];
  const [first, ...rest] = read;
  return [
    { ...first!, kind: 'attachment', name: att.filename, attachment: { ...first!.attachment, ...meta } },
    ...rest,
  ];
}

const addresses = (a: AddressObject | AddressObject[] | undefined): string | undefined => {
  const list = a === undefined ? [] : Array.isArray(a) ? a : [a];
  const text = list.map((x) => x.text).join(', ');
  return text || undefined;
};

const isInlineImage = (a: Attachment): boolean =>
  a.contentType.startsWith('image/') && !!a.cid && (a.related === true || a.contentDisposition === 'inline');

/**
 * Reads an RFC 5322 message (EML) with mailparser: one `message` part (the header fields, then the body: the HTML
 * body as blocks when there is one, else text/plain; see `bodyBlocks`), then each attachment as parts of its own
 * (`ctx.readAttachment`); a `message/rfc822` attachment is read as an e-mail again, down to `limits.maxMessageDepth`
 * nestings, deeper ones listed unread. Inline images (`cid:`) go into `images`, in place in the HTML body. Nothing is
 * fetched: remote images and links stay as the message wrote them.
 */
export async function readEml(bytes: Uint8Array, limits: ReadLimits, ctx: MailReadContext): Promise<DocumentModel> {
  const depth = ctx.depth ?? 0;
  let mail;
  try {
    mail = await simpleParser(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
      skipHtmlToText: true,
      skipTextToHtml: true,
      skipImageLinks: true,
      skipTextLinks: true,
    });
  } catch (err) {
    throw new DocumentError('UNPROCESSABLE_INPUT', 'corrupt', `the e-mail cannot be parsed: ${(err as Error).message}`);
  }
  const images: DocImage[] = [];
  const cids = new Map<string, string>();
  const others: Attachment[] = [];
  let total = 0;
  for (const a of mail.attachments) {
    total += a.size;
    if (total > limits.maxUncompressedBytes)
      throw new DocumentError(
        'PAYLOAD_TOO_LARGE',
        'expansion_too_large',
        `the e-mail's attachments decode to more than ${limits.maxUncompressedBytes} bytes`,
      );
    if (isInlineImage(a)) {
      const name = imageName(images.length + 1, a.contentType);
      images.push({ name, mime: a.contentType, data: new Uint8Array(a.content) });
      cids.set(a.cid!.toLowerCase(), name);
    } else others.push(a);
  }
  const headers: MailHeaders = {
    from: addresses(mail.from),
    to: addresses(mail.to),
    cc: addresses(mail.cc),
    date: mail.date,
    subject: mail.subject,
  };
  const body = bodyBlocks(mail.text, typeof mail.html === 'string' ? mail.html : undefined, cids);
  // An inline image the HTML body does not show (a plain-text body with a related image) still gets its block.
  const shown = new Set(body.flatMap((b) => (b.type === 'image' ? [b.name] : [])));
  for (const img of images) if (!shown.has(img.name)) body.push({ type: 'image', name: img.name });
  const parts: DocPart[] = [{ kind: 'message', name: headers.subject, blocks: [headerFields(headers), ...body] }];

  for (const a of others) {
    const filename = a.filename ?? (a.contentType === 'message/rfc822' ? 'message.eml' : 'attachment');
    const att = { filename, mime: a.contentType, bytes: new Uint8Array(a.content) };
    if (a.contentType === 'message/rfc822') parts.push(...(await nestedMessage(att, limits, ctx, depth, images)));
    else parts.push(...(await attachmentParts(att, depth, ctx)));
  }
  return {
    format: 'eml',
    ...(headers.subject ? { title: headers.subject } : {}),
    ...(headers.from ? { author: headers.from } : {}),
    parts,
    images,
  };
}

/**
 * The body: the plain text when the message has one that is not just a stand-in for the HTML; else the HTML body as
 * blocks. mailparser gives `text` only from a text/plain part (HTML-to-text is skipped), so a message with both
 * (multipart/alternative) is read from its HTML, which keeps the structure (headings, lists, tables) the plain
 * alternative has lost.
 */
function bodyBlocks(text: string | undefined, html: string | undefined, cids: Map<string, string>): DocBlock[] {
  if (html && html.trim()) return htmlToBlocks(html, cids);
  return text ? textToBlocks(text) : [];
}

/**
 * An e-mail attached to an e-mail: read as a message again, its parts after its parent's (see `nestedParts`); past
 * `maxMessageDepth` nestings it is listed, not read.
 */
async function nestedMessage(
  att: { filename: string; mime: string; bytes: Uint8Array },
  limits: ReadLimits,
  ctx: MailReadContext,
  depth: number,
  images: DocImage[],
): Promise<DocPart[]> {
  const meta = { filename: att.filename, mime: att.mime, format: 'eml' as const, size: att.bytes.byteLength };
  if (depth + 1 > limits.maxMessageDepth)
    return [{ kind: 'attachment', name: att.filename, blocks: [], attachment: meta }];
  return nestedParts(meta, await readEml(att.bytes, limits, { ...ctx, depth: depth + 1 }), images);
}

/**
 * A nested message's parts, to follow its parent's (eml.ts and msg.ts): its own message part turned into an
 * `attachment` part named by the file (`meta`), its images renamed into the parent's list (`images`, appended to).
 */
export function nestedParts(
  meta: NonNullable<DocPart['attachment']>,
  inner: DocumentModel,
  images: DocImage[],
): DocPart[] {
  const renamed = new Map<string, string>();
  for (const img of inner.images) {
    const name = imageName(images.length + 1, img.mime);
    renamed.set(img.name, name);
    images.push({ ...img, name });
  }
  const rename = (b: DocBlock): DocBlock => (b.type === 'image' ? { ...b, name: renamed.get(b.name) ?? b.name } : b);
  return inner.parts.map((p, i) => ({
    ...p,
    blocks: p.blocks.map(rename),
    ...(i === 0 ? { kind: 'attachment' as const, name: meta.filename, attachment: meta } : {}),
  }));
}
