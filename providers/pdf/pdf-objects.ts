/**
 * A small reader of a PDF's objects, without fonts or rendering: the cross-reference sections (tables and streams,
 * incremental updates followed), indirect objects (in object streams too), streams decoded (Flate and its PNG
 * predictors, ASCIIHex, ASCII85, RunLength), and the page tree with its inherited resources and boxes. It reads the
 * well-formed files that writers make; what it cannot read exactly (an encrypted file, a cross-reference that does
 * not point at its objects, a filter it does not know) throws `PdfUnsupported`, and the caller reads that file with
 * pdf.js instead. Limits bound what a hostile file can make it do: decoded sizes, nesting, page-tree depth.
 */
import zlib from 'node:zlib';
import {
  isDict,
  latin1,
  Lexer,
  nameOf,
  numbersOf,
  PdfName,
  PdfRef,
  PdfStream,
  PdfUnsupported,
  type PdfDict,
  type PdfValue,
} from './pdf-syntax';

type XrefEntry = { offset: number } | { stream: number; index: number } | null;

/** The most one stream, and all streams of a document, may decode to (a page's content is far smaller). */
const MAX_DECODED = 64 * 1024 * 1024;
const MAX_DECODED_TOTAL = 256 * 1024 * 1024;
const MAX_PAGES = 100_000;

/** A page: its dictionary, resources (inherited), and its view (crop box within the media box) as pdf.js has it. */
export interface PdfPage {
  dict: PdfDict;
  resources: PdfDict | undefined;
  view: [number, number, number, number];
}

export class PdfObjects {
  private readonly xref = new Map<number, XrefEntry>();
  private readonly cache = new Map<number, PdfValue>();
  private readonly objectStreams = new Map<
    number,
    { bytes: Uint8Array; first: number; offsets: Map<number, number> }
  >();
  private readonly trailer: PdfDict;
  private pageList?: PdfPage[];
  /** Bytes decoded so far (bounded: a file may point at one huge stream many times). */
  private decoded = 0;

  constructor(private readonly b: Uint8Array) {
    this.trailer = this.readXref();
    if (this.trailer.has('Encrypt')) throw new PdfUnsupported('encrypted');
  }

  /** The object `v` refers to (`v` itself when it is no reference). */
  resolve(v: PdfValue | undefined, depth = 0): PdfValue | undefined {
    if (!(v instanceof PdfRef)) return v;
    if (depth > 16) throw new PdfUnsupported('a chain of references');
    return this.resolve(this.object(v.num), depth + 1);
  }

  /** `dict[key]`, resolved. */
  get(dict: PdfDict, key: string): PdfValue | undefined {
    return this.resolve(dict.get(key));
  }

  /** The pages in order (the page tree walked once). */
  pages(): PdfPage[] {
    if (this.pageList) return this.pageList;
    const root = this.resolve(this.trailer.get('Root'));
    if (!isDict(root)) throw new PdfUnsupported('no catalog');
    const top = this.get(root, 'Pages');
    if (!isDict(top)) throw new PdfUnsupported('no page tree');
    const out: PdfPage[] = [];
    const seen = new Set<PdfDict>();
    const walk = (node: PdfDict, inherited: Inherited, depth: number) => {
      if (seen.has(node) || depth > 64 || out.length > MAX_PAGES) throw new PdfUnsupported('a page tree out of shape');
      seen.add(node);
      const here: Inherited = {
        resources: this.get(node, 'Resources') ?? inherited.resources,
        media: this.get(node, 'MediaBox') ?? inherited.media,
        crop: this.get(node, 'CropBox') ?? inherited.crop,
      };
      const kids = this.get(node, 'Kids');
      if (Array.isArray(kids) && nameOf(node.get('Type')) !== 'Page') {
        for (const k of kids) {
          const kid = this.resolve(k);
          if (!isDict(kid)) throw new PdfUnsupported('a page tree out of shape');
          walk(kid, here, depth + 1);
        }
        return;
      }
      out.push({
        dict: node,
        resources: isDict(here.resources) ? here.resources : undefined,
        view: viewOf(here.media, here.crop),
      });
    };
    walk(top, {}, 0);
    // pdf.js numbers pages by the tree's /Count when it can; a tree that disagrees is left to pdf.js.
    const count = this.get(top, 'Count');
    if (typeof count !== 'number' || count !== out.length) throw new PdfUnsupported('page count disagrees');
    this.pageList = out;
    return out;
  }

  /** A stream's bytes, decoded by its filters. */
  decode(s: PdfStream): Uint8Array {
    const filters = this.resolve(s.dict.get('Filter') ?? s.dict.get('F'));
    const parms = this.resolve(s.dict.get('DecodeParms') ?? s.dict.get('DP'));
    const list = Array.isArray(filters) ? filters : filters == null ? [] : [filters];
    let data = s.bytes;
    list.forEach((f, i) => {
      const name = nameOf(this.resolve(f));
      const p = this.resolve(Array.isArray(parms) ? parms[i] : parms);
      data = decodeWith(name, data, isDict(p) ? p : undefined, (v) => this.resolve(v));
      this.decoded += data.length;
      if (this.decoded > MAX_DECODED_TOTAL) throw new PdfUnsupported('streams that decode to too much');
    });
    return data;
  }

  // ---- cross-reference -------------------------------------------------------------------------------------------

  private readXref(): PdfDict {
    const b = this.b;
    const tailStart = Math.max(0, b.length - 2048);
    const tail = latin1(b, tailStart, b.length);
    const at = tail.lastIndexOf('startxref');
    if (at < 0) throw new PdfUnsupported('no startxref');
    const lex = new Lexer(b, tailStart + at + 9);
    let offset = lex.next();
    let trailer: PdfDict | undefined;
    const visited = new Set<number>();
    while (typeof offset === 'number') {
      if (visited.has(offset) || offset < 0 || offset >= b.length || visited.size > 1000)
        throw new PdfUnsupported('a cross-reference chain out of shape');
      visited.add(offset);
      const section = this.readSection(offset);
      trailer ??= section;
      const prev = section.get('Prev');
      offset = typeof prev === 'number' ? prev : undefined;
    }
    if (!trailer) throw new PdfUnsupported('no trailer');
    return trailer;
  }

  /** One cross-reference section at `offset` (a table, or a stream); its entries fill in what newer ones left. */
  private readSection(offset: number): PdfDict {
    const lex = new Lexer(this.b, offset);
    const first = lex.next();
    if (first === 'xref') {
      const entries: [number, XrefEntry][] = [];
      for (;;) {
        const t = lex.next();
        if (t === 'trailer') break;
        const count = lex.next();
        if (typeof t !== 'number' || typeof count !== 'number') throw new PdfUnsupported('a cross-reference table');
        for (let i = 0; i < count; i++) {
          const off = lex.next();
          lex.next();
          const kind = lex.next();
          if (typeof off !== 'number' || (kind !== 'n' && kind !== 'f'))
            throw new PdfUnsupported('a cross-reference table');
          entries.push([t + i, kind === 'n' ? { offset: off } : null]);
        }
      }
      const trailer = lex.value(lex.next(), true);
      if (!isDict(trailer)) throw new PdfUnsupported('a trailer');
      // A hybrid file: its stream holds the objects of object streams, which the table lists as free.
      const stm = trailer.get('XRefStm');
      if (typeof stm === 'number') this.readXrefStream(stm, true);
      for (const [num, e] of entries) if (!this.xref.has(num)) this.xref.set(num, e);
      return trailer;
    }
    if (typeof first === 'number') return this.readXrefStream(offset);
    throw new PdfUnsupported('no cross-reference at startxref');
  }

  private readXrefStream(offset: number, hybrid = false): PdfDict {
    const s = this.objectAt(offset, undefined);
    if (!(s instanceof PdfStream) || nameOf(s.dict.get('Type')) !== 'XRef')
      throw new PdfUnsupported('a cross-reference stream');
    const w = numbersOf(s.dict.get('W'), 3);
    const size = s.dict.get('Size');
    if (!w || typeof size !== 'number' || w.some((x) => x < 0 || x > 8)) throw new PdfUnsupported('a /W');
    const index = (s.dict.get('Index') as number[] | undefined) ?? [0, size];
    const data = this.decode(s);
    const rowLength = w[0] + w[1] + w[2];
    let p = 0;
    const field = (n: number, dflt: number) => {
      if (n === 0) return dflt;
      let v = 0;
      for (let k = 0; k < n; k++) v = v * 256 + data[p++];
      return v;
    };
    for (let i = 0; i + 1 < index.length; i += 2) {
      const start = index[i];
      const count = index[i + 1];
      for (let k = 0; k < count; k++) {
        if (p + rowLength > data.length) throw new PdfUnsupported('a short cross-reference stream');
        const type = field(w[0], 1);
        const a = field(w[1], 0);
        const c = field(w[2], 0);
        const num = start + k;
        if (this.xref.has(num)) continue;
        if (type === 1) this.xref.set(num, { offset: a });
        else if (type === 2) this.xref.set(num, { stream: a, index: c });
        else if (type === 0 && !hybrid) this.xref.set(num, null);
      }
    }
    return s.dict;
  }

  // ---- objects ---------------------------------------------------------------------------------------------------

  private object(num: number): PdfValue | undefined {
    if (this.cache.has(num)) return this.cache.get(num);
    const e = this.xref.get(num);
    let v: PdfValue | undefined = null;
    if (e && 'offset' in e) v = this.objectAt(e.offset, num);
    else if (e) v = this.inObjectStream(e.stream, num);
    this.cache.set(num, v);
    return v;
  }

  /** The indirect object written at `offset` (`num` checked when given). */
  private objectAt(offset: number, num: number | undefined): PdfValue {
    const lex = new Lexer(this.b, offset);
    const n = lex.next();
    lex.next();
    const obj = lex.next();
    if (typeof n !== 'number' || obj !== 'obj' || (num !== undefined && n !== num))
      throw new PdfUnsupported('a cross-reference that misses its object');
    const v = lex.value(lex.next(), true);
    if (!isDict(v)) return v;
    const save = lex.pos;
    if (lex.next() !== 'stream') {
      lex.pos = save;
      return v;
    }
    // The data starts after the keyword's end of line (CR LF or LF).
    let start = lex.pos;
    if (this.b[start] === 13) start++;
    if (this.b[start] === 10) start++;
    const length = v.get('Length');
    const len = typeof length === 'number' ? length : (this.resolveLength(length) ?? -1);
    let end = start + len;
    if (len < 0 || end > this.b.length || !this.endstreamAt(end)) {
      // A wrong /Length: the data ends at `endstream`.
      const at = Buffer.from(this.b.buffer, this.b.byteOffset, this.b.length).indexOf('endstream', start, 'latin1');
      if (at < 0) throw new PdfUnsupported('a stream without its end');
      end = at;
      if (this.b[end - 1] === 10) end--;
      if (this.b[end - 1] === 13) end--;
    }
    return new PdfStream(v, this.b.subarray(start, end));
  }

  private resolveLength(v: PdfValue | undefined): number | undefined {
    if (!(v instanceof PdfRef)) return undefined;
    const r = this.resolve(v);
    return typeof r === 'number' ? r : undefined;
  }

  private endstreamAt(p: number): boolean {
    const b = this.b;
    while (p < b.length && (b[p] === 10 || b[p] === 13 || b[p] === 32)) p++;
    return latin1(b, p, Math.min(b.length, p + 9)) === 'endstream';
  }

  private inObjectStream(streamNum: number, num: number): PdfValue {
    let os = this.objectStreams.get(streamNum);
    if (!os) {
      const s = this.object(streamNum);
      if (!(s instanceof PdfStream)) throw new PdfUnsupported('an object stream');
      const n = s.dict.get('N');
      const first = s.dict.get('First');
      if (typeof n !== 'number' || typeof first !== 'number') throw new PdfUnsupported('an object stream');
      const bytes = this.decode(s);
      const lex = new Lexer(bytes, 0, Math.min(first, bytes.length));
      const offsets = new Map<number, number>();
      for (let i = 0; i < n; i++) {
        const objNum = lex.next();
        const off = lex.next();
        if (typeof objNum !== 'number' || typeof off !== 'number') throw new PdfUnsupported('an object stream');
        offsets.set(objNum, off);
      }
      os = { bytes, first, offsets };
      this.objectStreams.set(streamNum, os);
    }
    const off = os.offsets.get(num);
    if (off === undefined) throw new PdfUnsupported('an object missing from its object stream');
    const lex = new Lexer(os.bytes, os.first + off);
    return lex.value(lex.next(), true);
  }
}

interface Inherited {
  resources?: PdfValue;
  media?: PdfValue;
  crop?: PdfValue;
}

/** A box normalised (x0 ≤ x1, y0 ≤ y1), or undefined when it is no box with an area. */
function boxOf(v: PdfValue | undefined): [number, number, number, number] | undefined {
  const n = numbersOf(v, 4);
  if (!n) return undefined;
  const box: [number, number, number, number] = [
    Math.min(n[0], n[2]),
    Math.min(n[1], n[3]),
    Math.max(n[0], n[2]),
    Math.max(n[1], n[3]),
  ];
  return box[2] - box[0] > 0 && box[3] - box[1] > 0 ? box : undefined;
}

/** pdf.js's `page.view`: the crop box within the media box (US Letter without one). */
function viewOf(media: PdfValue | undefined, crop: PdfValue | undefined): [number, number, number, number] {
  const m = boxOf(media) ?? [0, 0, 612, 792];
  const c = boxOf(crop);
  if (!c) return m;
  const x = [Math.max(m[0], c[0]), Math.max(m[1], c[1]), Math.min(m[2], c[2]), Math.min(m[3], c[3])] as [
    number,
    number,
    number,
    number,
  ];
  return x[2] > x[0] && x[3] > x[1] ? x : m;
}

function decodeWith(
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

export { PdfName, PdfUnsupported };
