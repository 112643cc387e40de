/**
 * The stream filters a page's content and a file's structure use (ISO 32000 §7.4): Flate with PNG predictors,
 * ASCIIHex, ASCII85, RunLength. Others (TIFF predictors, LZW, image codecs, crypt filters) are `PdfUnsupported`: the
 * caller leaves the file to pdf.js.
 */
import zlib from 'node:zlib';
import { PdfUnsupported, type PdfDict, type PdfValue } from './pdf-syntax';

/** The most one stream may decode to (a page's content is far smaller). */
const MAX_DECODED = 64 * 1024 * 1024;

export function decodeWith(
  name: string | undefined,
  data: Uint8Array,
  parms: PdfDict | undefined,
  resolve: (v: PdfValue | undefined) => PdfValue | undefined,
): Uint8Array {
  switch (name) {
    case 'FlateDecode':
    case 'Fl': {
      let out: Uint8Array;
      try {
        // Sync flush: a stream cut short still gives what it holds, as pdf.js reads it.
        out = zlib.inflateSync(data, { finishFlush: zlib.constants.Z_SYNC_FLUSH, maxOutputLength: MAX_DECODED });
      } catch {
        throw new PdfUnsupported('a Flate stream zlib cannot read');
      }
      return predicted(out, parms, resolve);
    }
    case 'ASCIIHexDecode':
    case 'AHx':
      return asciiHex(data);
    case 'ASCII85Decode':
    case 'A85':
      return ascii85(data);
    case 'RunLengthDecode':
    case 'RL':
      return runLength(data);
    default:
      throw new PdfUnsupported(`filter ${name ?? '?'}`);
  }
}

/** Undoes a PNG predictor (10–15); TIFF's (2) is unsupported. */
function predicted(
  data: Uint8Array,
  parms: PdfDict | undefined,
  resolve: (v: PdfValue | undefined) => PdfValue | undefined,
): Uint8Array {
  const predictor = parms ? resolve(parms.get('Predictor')) : undefined;
  if (typeof predictor !== 'number' || predictor <= 1) return data;
  if (predictor < 10) throw new PdfUnsupported('a TIFF predictor');
  const num = (k: string, d: number) => {
    const v = resolve(parms!.get(k));
    return typeof v === 'number' ? v : d;
  };
  const colors = num('Colors', 1);
  const bpc = num('BitsPerComponent', 8);
  const columns = num('Columns', 1);
  const bpp = Math.max(1, Math.ceil((colors * bpc) / 8));
  const rowLength = Math.ceil((colors * bpc * columns) / 8);
  if (rowLength <= 0 || rowLength > MAX_DECODED) throw new PdfUnsupported('a predictor row');
  const rows = Math.floor(data.length / (rowLength + 1));
  const out = new Uint8Array(rows * rowLength);
  let prev = new Uint8Array(rowLength);
  for (let r = 0; r < rows; r++) {
    const type = data[r * (rowLength + 1)];
    const src = data.subarray(r * (rowLength + 1) + 1, (r + 1) * (rowLength + 1));
    const row = out.subarray(r * rowLength, (r + 1) * rowLength);
    for (let i = 0; i < rowLength; i++) {
      const left = i >= bpp ? row[i - bpp] : 0;
      const up = prev[i];
      const upLeft = i >= bpp ? prev[i - bpp] : 0;
      let v = src[i];
      if (type === 1) v += left;
      else if (type === 2) v += up;
      else if (type === 3) v += (left + up) >> 1;
      else if (type === 4) {
        const p = left + up - upLeft;
        const pa = Math.abs(p - left);
        const pb = Math.abs(p - up);
        const pc = Math.abs(p - upLeft);
        v += pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
      }
      row[i] = v & 0xff;
    }
    prev = row;
  }
  return out;
}

function asciiHex(data: Uint8Array): Uint8Array {
  const out: number[] = [];
  let half = -1;
  for (const c of data) {
    if (c === 62) break;
    const h = c >= 48 && c <= 57 ? c - 48 : c >= 65 && c <= 70 ? c - 55 : c >= 97 && c <= 102 ? c - 87 : -1;
    if (h < 0) continue;
    if (half < 0) half = h;
    else {
      out.push(half * 16 + h);
      half = -1;
    }
  }
  if (half >= 0) out.push(half * 16);
  return Uint8Array.from(out);
}

function ascii85(data: Uint8Array): Uint8Array {
  const out: number[] = [];
  const group: number[] = [];
  const flush = (n: number) => {
    let v = 0;
    for (let i = 0; i < 5; i++) v = v * 85 + (group[i] ?? 84);
    for (let i = 0; i < n - 1; i++) out.push((v >>> (24 - 8 * i)) & 0xff);
  };
  for (let i = 0; i < data.length; i++) {
    const c = data[i];
    if (c === 126) break; // ~>
    if (c === 122 && group.length === 0) {
      out.push(0, 0, 0, 0);
      continue;
    }
    if (c < 33 || c > 117) continue;
    group.push(c - 33);
    if (group.length === 5) {
      flush(5);
      group.length = 0;
    }
  }
  if (group.length > 1) flush(group.length);
  return Uint8Array.from(out);
}

function runLength(data: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < data.length && out.length <= MAX_DECODED;) {
    const n = data[i++];
    if (n === 128) break;
    if (n < 128) {
      for (let k = 0; k <= n && i < data.length; k++) out.push(data[i++]);
    } else {
      const v = data[i++];
      for (let k = 0; k < 257 - n; k++) out.push(v);
    }
  }
  return Uint8Array.from(out);
}
