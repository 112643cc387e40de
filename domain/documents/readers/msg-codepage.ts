import { decodeText } from '../text-decode';

/**
 * The character sets of an Outlook item's bytes (msg.ts). Two of them: its 8-bit string properties (PT_STRING8, a
 * non-Unicode item's subject and body) are in the Windows ANSI code page of the item (PidTagMessageCodepage, else the
 * one of its locale), and its HTML body (PidTagHtml, bytes) in its internet code page (PidTagInternetCodepage).
 */

/** Windows code pages to the WHATWG labels TextDecoder knows. */
const WHATWG: Record<number, string> = {
  65001: 'utf-8',
  1200: 'utf-16le',
  1201: 'utf-16be',
  874: 'windows-874',
  932: 'shift_jis',
  936: 'gbk',
  949: 'euc-kr',
  950: 'big5',
  20866: 'koi8-r',
  21866: 'koi8-u',
  50220: 'iso-2022-jp',
  50221: 'iso-2022-jp',
  50222: 'iso-2022-jp',
  51932: 'euc-jp',
  54936: 'gb18030',
};

function whatwgLabel(codepage: number): string | undefined {
  if (WHATWG[codepage]) return WHATWG[codepage];
  if (codepage >= 1250 && codepage <= 1258) return `windows-${codepage}`;
  if (codepage >= 28591 && codepage <= 28606) return `iso-8859-${codepage - 28590}`;
  return undefined;
}

/** PidTagHtml's text: in the internet code page when it names one this runtime decodes, else UTF-8 or Latin-1. */
export function decodeHtml(bytes: Uint8Array, codepage: number | undefined): string {
  const label = codepage === undefined ? undefined : whatwgLabel(codepage);
  if (label) {
    try {
      return new TextDecoder(label).decode(bytes);
    } catch {
      // a label this runtime's ICU lacks: the sniffed decoding below
    }
  }
  return decodeText(bytes);
}

/** The ANSI code pages msgreader can decode (through iconv-lite, as `cp<n>`). */
const ANSI = new Set([874, 932, 936, 949, 950, 1250, 1251, 1252, 1253, 1254, 1255, 1256, 1257, 1258]);

/** A locale's primary language (the LCID's low 10 bits) to its ANSI code page, where it is not 1252. */
const ANSI_OF_LANGUAGE: Record<number, number> = {
  0x01: 1256, // Arabic
  0x02: 1251, // Bulgarian
  0x05: 1250, // Czech
  0x08: 1253, // Greek
  0x0d: 1255, // Hebrew
  0x0e: 1250, // Hungarian
  0x11: 932, // Japanese
  0x12: 949, // Korean
  0x15: 1250, // Polish
  0x18: 1250, // Romanian
  0x19: 1251, // Russian
  0x1a: 1250, // Croatian, Serbian (Latin)
  0x1b: 1250, // Slovak
  0x1e: 874, // Thai
  0x1f: 1254, // Turkish
  0x22: 1251, // Ukrainian
  0x23: 1251, // Belarusian
  0x24: 1250, // Slovenian
  0x25: 1257, // Estonian
  0x26: 1257, // Latvian
  0x27: 1257, // Lithuanian
  0x29: 1256, // Persian
  0x2a: 1258, // Vietnamese
  0x2f: 1251, // Macedonian
  0x3f: 1251, // Kazakh
};

/**
 * The encoding label (for msgreader's `ansiEncoding`) of an item's 8-bit strings: its message code page, else its
 * locale's ANSI code page (Chinese by its sublanguage: simplified 936, traditional 950), else Windows-1252.
 */
export function ansiEncoding(messageCodepage: number | undefined, localeId: number | undefined): string {
  if (messageCodepage === 65001) return 'utf8';
  if (messageCodepage !== undefined && ANSI.has(messageCodepage)) return `cp${messageCodepage}`;
  if (localeId !== undefined) {
    const language = localeId & 0x3ff;
    if (language === 0x04) return [0x0804, 0x1004].includes(localeId & 0xffff) ? 'cp936' : 'cp950';
    const cp = ANSI_OF_LANGUAGE[language];
    if (cp) return `cp${cp}`;
  }
  return 'cp1252';
}
