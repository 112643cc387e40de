/**
 * A text file's characters: UTF-8 (with or without its BOM), UTF-16 by its BOM, else Latin-1 (every byte a
 * character, so a legacy file never fails to decode). Shared by detection and the text, CSV and HTML readers.
 */

const hasBom = (b: Uint8Array, ...sig: number[]) => sig.every((v, i) => b[i] === v);

/** The encoding `bytes` are read with. */
export function textEncoding(bytes: Uint8Array): 'utf-8' | 'utf-16le' | 'utf-16be' | 'latin1' {
  if (hasBom(bytes, 0xef, 0xbb, 0xbf)) return 'utf-8';
  if (hasBom(bytes, 0xff, 0xfe)) return 'utf-16le';
  if (hasBom(bytes, 0xfe, 0xff)) return 'utf-16be';
  try {
    // `stream`: a sequence cut at the end of a sample is not an error.
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
    return 'utf-8';
  } catch {
    return 'latin1';
  }
}

/** The text of `bytes`, its BOM removed. */
export function decodeText(bytes: Uint8Array): string {
  const enc = textEncoding(bytes);
  // TextDecoder drops the BOM of the encoding it decodes (ignoreBOM false).
  return new TextDecoder(enc === 'latin1' ? 'latin1' : enc).decode(bytes);
}

/** True for bytes no text file holds: NUL bytes (outside UTF-16) or many control characters in the first 8 KiB. */
export function looksBinary(bytes: Uint8Array): boolean {
  if (hasBom(bytes, 0xff, 0xfe) || hasBom(bytes, 0xfe, 0xff)) return false;
  const sample = bytes.subarray(0, 8192);
  let control = 0;
  for (const b of sample) {
    if (b === 0) return true;
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c) control++;
  }
  return control > sample.length / 100;
}
