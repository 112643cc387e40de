/**
 * A small reader of a PDF's objects, without fonts or rendering: the cross-reference sections (tables and streams,
 * incremental updates followed), indirect objects (in object streams too), streams decoded (Flate and its PNG
 * predictors, ASCIIHex, ASCII85, RunLength), and the page tree with its inherited resources and boxes. It reads the
 * well-formed files that writers make; what it cannot read exactly (an encrypted file, a cross-reference that does
 * not point at its objects, a filter it does not know) throws `PdfUnsupported`, and the caller reads that file with
 * pdf.js instead. Limits bound what a hostile file can make it do: decoded sizes, nesting, page-tree depth.
 */
import { decodeWith } from './pdf-filters';
import {
  isDict,
  latin1,
  Lexer,
  nameOf,
  numbersOf,
  PdfRef,
  PdfStream,
  PdfUnsupported,
  type PdfDict,
  type PdfValue,
} from './pdf-syntax';

type XrefEntry = { offset: number } | { stream: number; index: number } | null;

/** The most all streams of a document may decode to (a page's content is far smaller). */
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
  private readonly reading = new Set<number>();
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
    // An object that needs itself to be read (a /Length, an object stream pointing into itself).
    if (this.reading.has(num)) throw new PdfUnsupported('an object that refers to itself');
    this.reading.add(num);
    try {
      const e = this.xref.get(num);
      let v: PdfValue | undefined = null;
      if (e && 'offset' in e) v = this.objectAt(e.offset, num);
      else if (e) v = this.inObjectStream(e.stream, num);
      this.cache.set(num, v);
      return v;
    } finally {
      this.reading.delete(num);
    }
  }

  /** The indirect object written at `offset` (`num` checked when given). */
  private objectAt(offset: number, num: number | undefined): PdfValue {
    const lex = new Lexer(this.b, offset);
    const n = lex.next();
    const gen = lex.next();
    const obj = lex.next();
    if (typeof n !== 'number' || typeof gen !== 'number' || obj !== 'obj' || (num !== undefined && n !== num))
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
