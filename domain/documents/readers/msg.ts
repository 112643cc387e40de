import msgreader, { type FieldsData } from '@kenjiuno/msgreader';
import * as CFB from 'cfb';
import {
  DocumentError,
  type DocBlock,
  type DocImage,
  type DocPart,
  type DocumentModel,
  type ReadLimits,
} from '../model';
import { attachmentParts, headerFields, imageName, nestedParts, type MailHeaders, type MailReadContext } from './eml';
import { htmlToBlocks, textToBlocks } from './mail-html';
import { ansiEncoding, decodeHtml } from './msg-codepage';

// The package is CommonJS compiled from ES modules: Node's ESM loader hands over `module.exports`, whose `default` is
// the class; a bundler or TypeScript's own interop hands over the class itself.
const MsgReader = (msgreader as unknown as { default?: typeof msgreader }).default ?? msgreader;
type Reader = InstanceType<typeof MsgReader>;

/** An SMTP address (an Exchange sender's PidTagSenderEmailAddress is an X.500 DN, `/O=EXCHANGELABS/...`: not one). */
const smtp = (s: string | undefined): string | undefined => (s && /^[^\s@/]+@[^\s@]+$/.test(s) ? s : undefined);

/** `"Name" <address>` as mailparser writes it for the EML reader, or whichever of the two there is. */
function address(name: string | undefined, email: string | undefined): string | undefined {
  const n = name?.trim();
  if (n && email && n !== email) return `"${n.replace(/(["\\])/g, '\\$1')}" <${email}>`;
  return email ?? (n || undefined);
}

function recipients(f: FieldsData, type: 'to' | 'cc' | 'bcc'): string | undefined {
  const list = (f.recipients ?? [])
    .filter((r) => (r.recipType ?? 'to') === type)
    .map((r) => address(r.name, smtp(r.smtpAddress) ?? smtp(r.email)))
    .filter((a): a is string => !!a);
  return list.length ? list.join(', ') : undefined;
}

/** When it was sent: PidTagClientSubmitTime, else when it arrived, else the transport headers' `Date:`. */
function sentDate(f: FieldsData): Date | undefined {
  const header = f.headers && /^Date:[ \t]*(.+)$/im.exec(f.headers)?.[1];
  for (const s of [f.clientSubmitTime, f.messageDeliveryTime, header]) {
    const d = s ? new Date(s) : undefined;
    if (d && !Number.isNaN(d.getTime())) return d;
  }
  return undefined;
}

const IMAGE_BY_EXT: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.bmp': 'image/bmp',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.webp': 'image/webp',
};

/** A 32-bit property of the root's property stream (after its 32-byte header, 16-byte entries: tag, flags, value). */
function rootLong(stream: Uint8Array | undefined, tag: number): number | undefined {
  if (!stream) return undefined;
  const view = new DataView(stream.buffer, stream.byteOffset, stream.byteLength);
  for (let at = 32; at + 16 <= stream.byteLength; at += 16)
    if (view.getUint32(at, true) === tag) return view.getUint32(at + 8, true);
  return undefined;
}

/**
 * The file's properties, through msgreader. The compound file is first read with `cfb` (which detection already
 * trusts, and which refuses a broken one) and written again: msgreader follows sector and directory chains without
 * checking for loops, so it only ever sees a well-formed file. A non-Unicode item's 8-bit strings are decoded in its
 * ANSI code page (msg-codepage.ts), read here from the root's property stream before msgreader parses.
 */
function open(bytes: Uint8Array): { reader: Reader; fields: FieldsData } {
  try {
    const container = CFB.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { type: 'buffer' });
    // The root's own streams carry the message's properties ([MS-OXMSG] 2.1); without any, there is no message.
    const root = container.FullPaths.flatMap((n, i) => {
      const m = /^[^/]*\/(__substg1\.0_[0-9A-Fa-f]{8}|__properties_version1\.0)$/.exec(n);
      return m ? [{ name: m[1]!, entry: container.FileIndex[i]! }] : [];
    });
    if (!root.length) throw new Error('no message properties at the root of the compound file');
    const clean = CFB.write(container, { type: 'buffer' }) as Uint8Array;
    const reader = new MsgReader(new DataView(clean.buffer, clean.byteOffset, clean.byteLength));
    if (container.FullPaths.some((n) => /__substg1\.0_[0-9A-Fa-f]{4}001E$/i.test(n))) {
      const props = root.find((r) => r.name === '__properties_version1.0')?.entry.content as Uint8Array | undefined;
      reader.parserConfig = { ansiEncoding: ansiEncoding(rootLong(props, 0x3ffd0003), rootLong(props, 0x3ff10003)) };
    }
    const fields = reader.getFileData();
    if (fields.error || fields.dataType !== 'msg') throw new Error(fields.error ?? 'not an Outlook item');
    return { reader, fields };
  } catch (err) {
    throw new DocumentError(
      'UNPROCESSABLE_INPUT',
      'corrupt',
      `the Outlook item cannot be read: ${(err as Error).message}`,
    );
  }
}

interface Attached {
  filename: string;
  mime: string;
  bytes: Uint8Array;
  /** An embedded Outlook item (attach method 5), to read as a message. */
  message?: boolean;
}

/**
 * Reads an Outlook item (.msg, [MS-OXMSG]) with msgreader into the shape the EML reader gives an e-mail: one `message`
 * part (From, To, Cc, Bcc, Date, Subject, then the body: PidTagHtml as blocks when there is one, else PidTagBody as
 * paragraphs), then each attachment as parts of its own (`ctx.readAttachment`). An embedded item is read as a message
 * again down to `limits.maxMessageDepth` nestings, deeper ones listed unread. Inline images (an image attachment
 * with a Content-ID that the HTML shows or Outlook hides) go into `images`. A body stored only as compressed RTF is
 * not read: the message says so in a paragraph.
 */
export async function readMsg(bytes: Uint8Array, limits: ReadLimits, ctx: MailReadContext): Promise<DocumentModel> {
  const depth = ctx.depth ?? 0;
  const { reader, fields: f } = open(bytes);
  const htmlBody = f.bodyHtml ?? (f.html ? decodeHtml(f.html, f.internetCodepage) : undefined);

  let total = 0;
  const count = (n: number) => {
    total += n;
    if (total > limits.maxUncompressedBytes)
      throw new DocumentError(
        'PAYLOAD_TOO_LARGE',
        'expansion_too_large',
        `the Outlook item's attachments come to more than ${limits.maxUncompressedBytes} bytes`,
      );
  };
  const contentOf = (a: FieldsData): Uint8Array => {
    try {
      return reader.getAttachment(a).content;
    } catch (err) {
      throw new DocumentError(
        'UNPROCESSABLE_INPUT',
        'corrupt',
        `an attachment cannot be read: ${(err as Error).message}`,
      );
    }
  };
  const images: DocImage[] = [];
  const cids = new Map<string, string>();
  const others: Attached[] = [];
  for (const a of f.attachments ?? []) {
    if (a.innerMsgContent) {
      // An embedded storage: an Outlook item has a message class; an OLE object (attach method 6) has none and is
      // handed over as the compound file it is.
      const message = !!(a.innerMsgContentFields?.messageClass ?? a.innerMsgContentFields?.subject);
      const bytes = contentOf(a);
      count(bytes.byteLength);
      const filename = message ? `${a.name ?? 'message'}.msg` : (a.fileName ?? a.name ?? 'attachment');
      const mime = message ? 'application/vnd.ms-outlook' : 'application/octet-stream';
      others.push({ filename, mime, bytes, message });
      continue;
    }
    const filename = a.fileName ?? a.fileNameShort ?? a.name ?? 'attachment';
    const ext = (a.extension ?? /\.[^.]+$/.exec(filename)?.[0] ?? '').toLowerCase();
    const mime = a.attachMimeTag?.toLowerCase() || IMAGE_BY_EXT[ext] || 'application/octet-stream';
    count(a.contentLength ?? 0);
    // No data stream: an attachment by reference (a path or a URL), listed without content.
    const content = a.dataId === undefined ? new Uint8Array(0) : contentOf(a);
    const cid = a.pidContentId?.replace(/^<|>$/g, '').toLowerCase();
    const shown = !!cid && !!htmlBody && htmlBody.toLowerCase().includes(`cid:${cid}`);
    if (mime.startsWith('image/') && cid && content.byteLength && (shown || a.attachmentHidden === true)) {
      const name = imageName(images.length + 1, mime);
      images.push({ name, mime, data: content });
      cids.set(cid, name);
    } else others.push({ filename, mime, bytes: content });
  }

  const headers: MailHeaders = {
    from: address(
      f.senderName,
      smtp(f.senderSmtpAddress) ?? smtp(f.senderEmail) ?? smtp(f.sentRepresentingSmtpAddress),
    ),
    to: recipients(f, 'to'),
    cc: recipients(f, 'cc'),
    bcc: recipients(f, 'bcc'),
    date: sentDate(f),
    subject: f.subject || undefined,
  };
  const body = bodyBlocks(f, htmlBody, cids);
  const shownImages = new Set(body.flatMap((b) => (b.type === 'image' ? [b.name] : [])));
  for (const img of images) if (!shownImages.has(img.name)) body.push({ type: 'image', name: img.name });
  const parts: DocPart[] = [{ kind: 'message', name: headers.subject, blocks: [headerFields(headers), ...body] }];

  for (const att of others) {
    if (!att.message) {
      parts.push(...(await attachmentParts(att, depth, ctx)));
      continue;
    }
    const meta = { filename: att.filename, mime: att.mime, format: 'msg' as const, size: att.bytes.byteLength };
    if (depth + 1 > limits.maxMessageDepth)
      parts.push({ kind: 'attachment', name: att.filename, blocks: [], attachment: meta });
    else parts.push(...nestedParts(meta, await readMsg(att.bytes, limits, { ...ctx, depth: depth + 1 }), images));
  }
  return {
    format: 'msg',
    ...(headers.subject ? { title: headers.subject } : {}),
    ...(headers.from ? { author: headers.from } : {}),
    parts,
    images,
  };
}

/** The HTML body as blocks when there is one (it keeps headings, lists, tables), else the plain text's paragraphs. */
function bodyBlocks(f: FieldsData, html: string | undefined, cids: Map<string, string>): DocBlock[] {
  if (html && html.trim()) return htmlToBlocks(html, cids);
  if (f.body && f.body.trim()) return textToBlocks(f.body);
  if (f.compressedRtf?.byteLength)
    return [
      {
        type: 'paragraph',
        text: [{ text: 'The body of this message is stored only as compressed RTF, which is not read.', italic: true }],
      },
    ];
  return [];
}
