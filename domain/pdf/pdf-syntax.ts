/**
 * PDF's syntax (ISO 32000 §7.2–7.3) over bytes, for the object reader (`pdf-objects.ts`) and the content-stream reader
 * (`content-drawings.ts`): tokens and values. Strings keep their raw bytes (nothing here needs their text).
 */

export class PdfName {
  constructor(readonly name: string) {}
}
export class PdfRef {
  constructor(
    readonly num: number,
    readonly gen: number,
  ) {}
}
export class PdfString {
  constructor(readonly raw: string) {}
}
export type PdfDict = Map<string, PdfValue>;
/** A stream: its dictionary and its bytes as stored (not decoded). */
export class PdfStream {
  constructor(
    readonly dict: PdfDict,
    readonly bytes: Uint8Array,
  ) {}
}
export type PdfValue = number | boolean | null | PdfName | PdfString | PdfRef | PdfValue[] | PdfDict | PdfStream;

/** What this reader cannot read exactly: the caller reads the file with pdf.js instead. */
export class PdfUnsupported extends Error {}

/** A token: a number, a name, a string, or a keyword (operators and `[`, `]`, `<<`, `>>`, `{`, `}` included). */
export type Token = number | PdfName | PdfString | string;

const WS = new Uint8Array(256);
for (const c of [0, 9, 10, 12, 13, 32]) WS[c] = 1;
const DELIM = new Uint8Array(256);
for (const c of '()<>[]{}/%') DELIM[c.charCodeAt(0)] = 1;
/** Ends a regular token: white space or a delimiter. */
const END = WS.map((w, i) => w | DELIM[i]);

const hex = (c: number) =>
  c >= 48 && c <= 57 ? c - 48 : c >= 65 && c <= 70 ? c - 55 : c >= 97 && c <= 102 ? c - 87 : -1;

/** Reads tokens from `b[pos..end)`. */
export class Lexer {
  pos: number;

  constructor(
    readonly b: Uint8Array,
    start = 0,
    readonly end = b.length,
  ) {
    this.pos = start;
  }

  skipSpace(): void {
    const { b, end } = this;
    let p = this.pos;
    while (p < end) {
      const c = b[p];
      if (WS[c]) p++;
      else if (c === 37) {
        while (p < end && b[p] !== 10 && b[p] !== 13) p++;
      } else break;
    }
    this.pos = p;
  }

  /** The next token, or undefined at the end. */
  next(): Token | undefined {
    this.skipSpace();
    const { b, end } = this;
    let p = this.pos;
    if (p >= end) return undefined;
    const c = b[p];
    // A number: sign, digits, a point.
    if ((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46) {
      let neg = false;
      if (c === 43 || c === 45) {
        neg = c === 45;
        p++;
      }
      // Digits as an integer, divided once by the power of ten of the decimals (as pdf.js reads numbers: the same
      // double for the same text).
      let v = 0;
      let digits = 0;
      let divide = 1;
      while (p < end && b[p] >= 48 && b[p] <= 57) {
        v = v * 10 + b[p++] - 48;
        digits++;
      }
      if (p < end && b[p] === 46) {
        p++;
        while (p < end && b[p] >= 48 && b[p] <= 57) {
          v = v * 10 + b[p++] - 48;
          divide *= 10;
          digits++;
        }
      }
      if (divide > 1) v /= divide;
      // Writers sometimes put a sign twice (`--5`) or a stray sign: pdf.js reads 0 for a lone sign; so do we.
      while (p < end && !END[b[p]]) p++;
      this.pos = p;
      return digits ? (neg ? -v : v) : 0;
    }
    if (c === 47) {
      // A name; #xx is a byte in hex.
      p++;
      const start = p;
      let escaped = false;
      while (p < end && !END[b[p]]) {
        if (b[p] === 35) escaped = true;
        p++;
      }
      this.pos = p;
      let name = latin1(b, start, p);
      if (escaped) name = name.replace(/#([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
      return new PdfName(name);
    }
    if (c === 40) {
      // A literal string: balanced parentheses, backslash escapes.
      const start = ++p;
      let depth = 1;
      while (p < end) {
        const d = b[p];
        if (d === 92) p += 2;
        else {
          if (d === 40) depth++;
          else if (d === 41 && --depth === 0) break;
          p++;
        }
      }
      this.pos = Math.min(end, p + 1);
      return new PdfString(latin1(b, start, Math.min(p, end)));
    }
    if (c === 60) {
      if (b[p + 1] === 60) {
        this.pos = p + 2;
        return '<<';
      }
      const start = ++p;
      while (p < end && b[p] !== 62) p++;
      this.pos = Math.min(end, p + 1);
      let raw = '';
      let half = -1;
      for (let i = start; i < p; i++) {
        const h = hex(b[i]);
        if (h < 0) continue;
        if (half < 0) half = h;
        else {
          raw += String.fromCharCode(half * 16 + h);
          half = -1;
        }
      }
      if (half >= 0) raw += String.fromCharCode(half * 16);
      return new PdfString(raw);
    }
    if (c === 62) {
      this.pos = b[p + 1] === 62 ? p + 2 : p + 1;
      return '>>';
    }
    if (c === 91 || c === 93 || c === 123 || c === 125) {
      this.pos = p + 1;
      return String.fromCharCode(c);
    }
    if (c === 41) {
      // A stray closing parenthesis: skipped as one character.
      this.pos = p + 1;
      return ')';
    }
    const start = p;
    while (p < end && !END[b[p]]) p++;
    this.pos = p;
    return latin1(b, start, p);
  }

  /**
   * The value starting with `first` (the token just read). `refs`: whether `n g R` is a reference (in objects; not in
   * content streams). Nested deeper than 100 levels is unsupported.
   */
  value(first: Token | undefined, refs: boolean, depth = 0): PdfValue {
    if (depth > 100) throw new PdfUnsupported('values nested too deep');
    if (typeof first === 'number') {
      if (refs && Number.isInteger(first) && first >= 0) {
        const save = this.pos;
        const gen = this.next();
        if (typeof gen === 'number' && Number.isInteger(gen)) {
          const r = this.next();
          if (r === 'R') return new PdfRef(first, gen);
        }
        this.pos = save;
      }
      return first;
    }
    if (first instanceof PdfName || first instanceof PdfString) return first;
    if (first === '[') {
      const out: PdfValue[] = [];
      for (;;) {
        const t = this.next();
        if (t === ']' || t === undefined) return out;
        out.push(this.value(t, refs, depth + 1));
      }
    }
    if (first === '<<') {
      const dict: PdfDict = new Map();
      for (;;) {
        const k = this.next();
        if (k === '>>' || k === undefined) return dict;
        if (!(k instanceof PdfName)) continue; // a stray token where a key should be: skipped, as pdf.js does
        const t = this.next();
        if (t === '>>' || t === undefined) {
          dict.set(k.name, null);
          return dict;
        }
        dict.set(k.name, this.value(t, refs, depth + 1));
      }
    }
    if (first === 'true') return true;
    if (first === 'false') return false;
    return null;
  }
}

export function latin1(b: Uint8Array, start: number, end: number): string {
  // Short runs (names, keywords) are faster char by char than through a decoder.
  if (end - start < 32) {
    let s = '';
    for (let i = start; i < end; i++) s += String.fromCharCode(b[i]);
    return s;
  }
  return Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('latin1');
}

export const isDict = (v: PdfValue | undefined): v is PdfDict => v instanceof Map;
export const nameOf = (v: PdfValue | undefined): string | undefined => (v instanceof PdfName ? v.name : undefined);
export const numbersOf = (v: PdfValue | undefined, n: number): number[] | undefined =>
  Array.isArray(v) && v.length === n && v.every((x) => typeof x === 'number') ? (v as number[]) : undefined;

/**
 * Past an inline image (`BI` … `ID` data `EI`): its dictionary, then its data up to an `EI` that stands alone (white
 * space before, white space or the end after), or `/L` bytes when the dictionary gives its length.
 */
export function skipInlineImage(lex: Lexer): void {
  let length: number | undefined;
  for (;;) {
    const t = lex.next();
    if (t === undefined) return;
    if (t === 'ID') break;
    if (t instanceof PdfName && (t.name === 'L' || t.name === 'Length')) {
      const v = lex.next();
      if (typeof v === 'number') length = v;
    }
  }
  const b = lex.b;
  let p = lex.pos + 1; // one white-space byte after ID
  if (length !== undefined) {
    lex.pos = Math.min(lex.end, p + length);
    return;
  }
  const ws = (c: number | undefined) => c === undefined || c === 32 || c === 10 || c === 13 || c === 9 || c === 0;
  for (; p + 1 < lex.end; p++) {
    if (b[p] === 69 && b[p + 1] === 73 && ws(b[p - 1]) && (p + 2 >= lex.end || ws(b[p + 2]))) {
      lex.pos = p + 2;
      return;
    }
  }
  lex.pos = lex.end;
}
