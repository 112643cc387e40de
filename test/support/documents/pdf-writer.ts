/**
 * A minimal PDF writer for test files: numbered objects, a cross-reference table with byte offsets, a trailer,
 * WinAnsi literal strings, and the standard security handler (RC4, 40 bit, revision 2) for encrypted files.
 */
import { createHash } from 'node:crypto';

// ---- strings -------------------------------------------------------------------------------------------------

const WIN_ANSI_HIGH: Record<string, number> = {
  '€': 0x80,
  '‚': 0x82,
  ƒ: 0x83,
  '„': 0x84,
  '…': 0x85,
  '†': 0x86,
  '‡': 0x87,
  ˆ: 0x88,
  '‰': 0x89,
  Š: 0x8a,
  '‹': 0x8b,
  Œ: 0x8c,
  Ž: 0x8e,
  '‘': 0x91,
  '’': 0x92,
  '“': 0x93,
  '”': 0x94,
  '•': 0x95,
  '–': 0x96,
  '—': 0x97,
  '˜': 0x98,
  '™': 0x99,
  š: 0x9a,
  '›': 0x9b,
  œ: 0x9c,
  ž: 0x9e,
  Ÿ: 0x9f,
};

/** Text as WinAnsi bytes; characters WinAnsi lacks become '?'. */
export function winAnsiBytes(text: string): Buffer {
  const out: number[] = [];
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x80 || (cp >= 0xa0 && cp <= 0xff)) out.push(cp);
    else out.push(WIN_ANSI_HIGH[ch] ?? 0x3f);
  }
  return Buffer.from(out);
}

/** A PDF literal string for a WinAnsi font: `(Gr\374\337e)`; bytes above 0x7E and `( ) \` escaped. */
export function pdfLiteral(text: string): string {
  let s = '(';
  for (const b of winAnsiBytes(text)) {
    if (b === 0x28 || b === 0x29 || b === 0x5c) s += `\\${String.fromCharCode(b)}`;
    else if (b < 0x20 || b > 0x7e) s += `\\${b.toString(8).padStart(3, '0')}`;
    else s += String.fromCharCode(b);
  }
  return `${s})`;
}

/** Bytes of a document-information string: ASCII as is, anything else UTF-16BE with a byte order mark. */
export const infoStringBytes = (text: string): Buffer =>
  /^[\x20-\x7e]*$/.test(text)
    ? Buffer.from(text, 'latin1')
    : Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]);

// ---- encryption (PDF 1.7 §7.6.3, algorithms 2, 3, 4; revision 2) ---------------------------------------------

const PAD = Buffer.from('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a', 'hex');
const md5 = (...parts: Buffer[]) => parts.reduce((h, p) => h.update(p), createHash('md5')).digest();
const padPassword = (pw: string) => Buffer.concat([Buffer.from(pw, 'latin1'), PAD]).subarray(0, 32);

/** RC4 in plain code: OpenSSL 3 keeps its own RC4 in the legacy provider, which Node may not load. */
function rc4(key: Buffer, data: Buffer): Buffer {
  const s = Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i] + key[i % key.length]) & 255;
    [s[i], s[j]] = [s[j], s[i]];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 255;
    j = (j + s[i]) & 255;
    [s[i], s[j]] = [s[j], s[i]];
    out[n] = data[n] ^ s[(s[i] + s[j]) & 255];
  }
  return out;
}

interface Encryption {
  key: Buffer;
  o: Buffer;
  u: Buffer;
  p: number;
  id: Buffer;
}

/** Encryption under a user password; `allowCopy` false clears the permission to copy text (bit 5 of /P). */
export function makeEncryption(userPassword: string, ownerPassword: string, allowCopy = true): Encryption {
  const id = md5(Buffer.from(`docproc-test-${userPassword}`));
  const p = allowCopy ? -44 : -60; // print (and copy) allowed, the rest not
  const o = rc4(md5(padPassword(ownerPassword)).subarray(0, 5), padPassword(userPassword));
  const pBytes = Buffer.alloc(4);
  pBytes.writeInt32LE(p);
  const key = md5(padPassword(userPassword), o, pBytes, id).subarray(0, 5);
  return { key, o, u: rc4(key, PAD), p, id };
}

function objectKey(enc: Encryption, num: number): Buffer {
  const suffix = Buffer.from([num & 255, (num >> 8) & 255, (num >> 16) & 255, 0, 0]);
  return md5(enc.key, suffix).subarray(0, Math.min(enc.key.length + 5, 16));
}

// ---- writer --------------------------------------------------------------------------------------------------

/** Builds a dictionary's entries; `str` writes a (possibly encrypted) hex string. */
type DictBuilder = (str: (bytes: Buffer) => string) => string;

export class PdfWriter {
  private readonly objects: ({ dict: DictBuilder; stream?: Buffer } | undefined)[] = [];

  reserve(): number {
    this.objects.push(undefined);
    return this.objects.length;
  }

  set(num: number, dict: DictBuilder, stream?: Buffer): void {
    this.objects[num - 1] = { dict, stream };
  }

  add(dict: DictBuilder, stream?: Buffer): number {
    const num = this.reserve();
    this.set(num, dict, stream);
    return num;
  }

  finish(rootNum: number, infoNum: number | undefined, enc: Encryption | undefined): Buffer {
    const encryptNum = enc
      ? this.add((str) => `/Filter /Standard /V 1 /R 2 /Length 40 /O ${str(enc.o)} /U ${str(enc.u)} /P ${enc.p}`)
      : undefined;
    const chunks: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
    let size = chunks[0].length;
    const offsets: number[] = [];
    const push = (b: Buffer) => {
      chunks.push(b);
      size += b.length;
    };
    this.objects.forEach((obj, i) => {
      const num = i + 1;
      if (!obj) throw new Error(`object ${num} reserved but never set`);
      const key = enc && num !== encryptNum ? objectKey(enc, num) : undefined;
      const crypt = (b: Buffer) => (key ? rc4(key, b) : b);
      offsets.push(size);
      const entries = obj.dict((b) => `<${crypt(b).toString('hex')}>`);
      if (obj.stream) {
        const data = crypt(obj.stream);
        push(Buffer.from(`${num} 0 obj\n<< ${entries} /Length ${data.length} >>\nstream\n`, 'latin1'));
        push(data);
        push(Buffer.from('\nendstream\nendobj\n', 'latin1'));
      } else {
        push(Buffer.from(`${num} 0 obj\n<< ${entries} >>\nendobj\n`, 'latin1'));
      }
    });
    const xrefAt = size;
    const rows = offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('');
    const trailer = [
      `/Size ${offsets.length + 1} /Root ${rootNum} 0 R`,
      infoNum ? `/Info ${infoNum} 0 R` : '',
      enc ? `/Encrypt ${encryptNum} 0 R /ID [<${enc.id.toString('hex')}> <${enc.id.toString('hex')}>]` : '',
    ].join(' ');
    push(
      Buffer.from(
        `xref\n0 ${offsets.length + 1}\n0000000000 65535 f \n${rows}trailer\n<< ${trailer} >>\nstartxref\n${xrefAt}\n%%EOF\n`,
        'latin1',
      ),
    );
    return Buffer.concat(chunks);
  }
}
