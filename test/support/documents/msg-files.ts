/**
 * Outlook items (.msg, [MS-OXMSG]) written by the tests with the `cfb` package: the MAPI property streams
 * (`__substg1.0_<tag>`), the fixed-size properties (`__properties_version1.0`), recipient and attachment storages,
 * and an embedded message as an attachment's `__substg1.0_3701000D` storage. No real .msg file ships in a licence the
 * repository can take, so the structure each test expects is written here, property by property.
 */
import * as CFB from 'cfb';

export interface MsgRecipient {
  name?: string;
  email: string;
  /** MAPI_TO 1, MAPI_CC 2, MAPI_BCC 3. */
  type?: 1 | 2 | 3;
}

export type MsgAttachment =
  | { filename: string; data: Uint8Array; mime?: string; contentId?: string; hidden?: boolean }
  /** An embedded message (attach method 5): `name` is its display name. */
  | { name: string; message: MsgSpec }
  /** An embedded OLE object (attach method 6): its compound file's streams, by path, in the attachment's storage. */
  | { name: string; ole: Record<string, Uint8Array> };

export interface MsgSpec {
  subject?: string;
  senderName?: string;
  /** PidTagSenderEmailAddress: an SMTP address, or an Exchange DN with `senderAddressType` 'EX'. */
  senderEmail?: string;
  senderAddressType?: string;
  senderSmtpAddress?: string;
  recipients?: MsgRecipient[];
  /** PidTagClientSubmitTime. */
  sent?: Date;
  body?: string;
  /** PidTagHtml: as a binary stream (`10130102`, Outlook's usual form) or as a string (`1013001F`). */
  html?: string;
  htmlAs?: 'binary' | 'unicode';
  /** PidTagRtfCompressed: any bytes (the reader does not read it). */
  compressedRtf?: Uint8Array;
  attachments?: MsgAttachment[];
}

const PT_LONG = 0x0003;
const PT_BOOLEAN = 0x000b;
const PT_SYSTIME = 0x0040;
const PT_UNICODE = 0x001f;
const PT_BINARY = 0x0102;

const hex = (n: number) => n.toString(16).toUpperCase().padStart(8, '0');
const utf16 = (s: string) => Buffer.from(`${s}\0`, 'utf16le');

/** One storage's streams (paths relative to it) and its fixed-size properties. */
class Storage {
  readonly streams = new Map<string, Buffer>();
  private readonly fixed: Buffer[] = [];

  prop(id: number, type: number, value: Buffer): void {
    const tag = ((id << 16) | type) >>> 0;
    this.streams.set(`__substg1.0_${hex(tag)}`, value);
    // Variable-size properties are listed in the property stream with their size.
    this.entry(tag, (e) => e.writeUInt32LE(value.length, 8));
  }

  str(id: number, value: string | undefined): void {
    if (value !== undefined) this.prop(id, PT_UNICODE, utf16(value));
  }

  long(id: number, value: number): void {
    this.entry(((id << 16) | PT_LONG) >>> 0, (e) => e.writeUInt32LE(value, 8));
  }

  bool(id: number, value: boolean): void {
    this.entry(((id << 16) | PT_BOOLEAN) >>> 0, (e) => e.writeUInt16LE(value ? 1 : 0, 8));
  }

  time(id: number, value: Date): void {
    // FILETIME: 100 ns ticks since 1601-01-01.
    const ticks = BigInt(value.getTime() + 11_644_473_600_000) * 10_000n;
    this.entry(((id << 16) | PT_SYSTIME) >>> 0, (e) => e.writeBigUInt64LE(ticks, 8));
  }

  private entry(tag: number, fill: (e: Buffer) => void): void {
    const e = Buffer.alloc(16);
    e.writeUInt32LE(tag, 0);
    e.writeUInt32LE(0x6, 4); // PROPATTR_READABLE | PROPATTR_WRITABLE
    fill(e);
    this.fixed.push(e);
  }

  /** The property stream after a header (32 bytes for the top message, 24 for an embedded one, 8 elsewhere). */
  properties(header: Buffer): Buffer {
    return Buffer.concat([header, ...this.fixed]);
  }
}

/** A message's streams, by path relative to its storage. */
function messageStreams(m: MsgSpec, embedded: boolean): Map<string, Buffer> {
  const s = new Storage();
  s.str(0x001a, 'IPM.Note');
  s.str(0x0037, m.subject);
  s.str(0x0c1a, m.senderName);
  s.str(0x0c1e, m.senderAddressType ?? (m.senderEmail ? 'SMTP' : undefined));
  s.str(0x0c1f, m.senderEmail);
  s.str(0x5d01, m.senderSmtpAddress);
  s.str(0x1000, m.body);
  if (m.html !== undefined) {
    if (m.htmlAs === 'unicode') s.str(0x1013, m.html);
    else s.prop(0x1013, PT_BINARY, Buffer.from(m.html, 'utf8'));
    s.long(0x3fde, 65001); // PidTagInternetCodepage: UTF-8
  }
  if (m.compressedRtf) s.prop(0x1009, PT_BINARY, Buffer.from(m.compressedRtf));
  if (m.sent) s.time(0x0039, m.sent);
  const out = new Map<string, Buffer>();
  const recipients = m.recipients ?? [];
  recipients.forEach((r, i) => {
    const rs = new Storage();
    rs.str(0x3001, r.name ?? r.email);
    rs.str(0x3002, 'SMTP');
    rs.str(0x3003, r.email);
    rs.str(0x39fe, r.email);
    rs.long(0x0c15, r.type ?? 1);
    const dir = `__recip_version1.0_#${hex(i)}`;
    for (const [name, data] of rs.streams) out.set(`${dir}/${name}`, data);
    out.set(`${dir}/__properties_version1.0`, rs.properties(Buffer.alloc(8)));
  });
  const attachments = m.attachments ?? [];
  attachments.forEach((a, i) => {
    const as = new Storage();
    const dir = `__attach_version1.0_#${hex(i)}`;
    as.long(0x0e21, i); // PidTagAttachNumber
    if ('message' in a) {
      as.str(0x3001, a.name);
      as.long(0x3705, 5); // ATTACH_EMBEDDED_MSG
      for (const [name, data] of messageStreams(a.message, true)) out.set(`${dir}/__substg1.0_3701000D/${name}`, data);
    } else if ('ole' in a) {
      as.str(0x3001, a.name);
      as.long(0x3705, 6); // ATTACH_OLE
      for (const [name, data] of Object.entries(a.ole))
        out.set(`${dir}/__substg1.0_3701000D/${name}`, Buffer.from(data));
    } else {
      as.str(0x3001, a.filename);
      as.str(0x3707, a.filename);
      as.str(0x3703, a.filename.includes('.') ? a.filename.slice(a.filename.lastIndexOf('.')) : undefined);
      as.str(0x370e, a.mime);
      as.str(0x3712, a.contentId);
      as.prop(0x3701, PT_BINARY, Buffer.from(a.data));
      as.long(0x3705, 1); // ATTACH_BY_VALUE
      if (a.hidden !== undefined) as.bool(0x7ffe, a.hidden);
    }
    for (const [name, data] of as.streams) out.set(`${dir}/${name}`, data);
    out.set(`${dir}/__properties_version1.0`, as.properties(Buffer.alloc(8)));
  });
  for (const [name, data] of s.streams) out.set(name, data);
  // [MS-OXMSG] 2.4.1: reserved 8 bytes, next recipient id, next attachment id, recipient count, attachment count.
  const header = Buffer.alloc(embedded ? 24 : 32);
  header.writeUInt32LE(recipients.length, 8);
  header.writeUInt32LE(attachments.length, 12);
  header.writeUInt32LE(recipients.length, 16);
  header.writeUInt32LE(attachments.length, 20);
  out.set('__properties_version1.0', s.properties(header));
  return out;
}

/** An Outlook .msg file for `spec`. */
export function buildMsg(spec: MsgSpec): Buffer {
  const c = CFB.utils.cfb_new();
  for (const [path, data] of messageStreams(spec, false)) CFB.utils.cfb_add(c, `/${path}`, data);
  // The named-property mapping storage every .msg has (empty tables: no named properties).
  for (const t of ['00020102', '00030102', '00040102'])
    CFB.utils.cfb_add(c, `/__nameid_version1.0/__substg1.0_${t}`, Buffer.alloc(0));
  return Buffer.from(CFB.write(c, { type: 'buffer' }) as Uint8Array);
}

/** A compound file of the given streams, by path (a Word-like one: `WordDocument`, `1Table`...). */
export function buildCfb(streams: Record<string, Uint8Array>): Buffer {
  const c = CFB.utils.cfb_new();
  for (const [path, data] of Object.entries(streams)) CFB.utils.cfb_add(c, `/${path}`, Buffer.from(data));
  return Buffer.from(CFB.write(c, { type: 'buffer' }) as Uint8Array);
}
