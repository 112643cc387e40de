/**
 * A page's drawings (`drawings.ts`: rulings and bullet marks) read from its content stream by us, without pdf.js: the
 * path operators, the transform (`q`, `Q`, `cm`) and form XObjects, nothing else. pdf.js gives the same from its
 * operator list, but only after converting every font a page uses, which is most of its time; the Markdown rules need
 * no glyph. The paths are built as pdf.js builds them (`buildPath` in its evaluator: rectangles, `v` and `y` curves,
 * closing strokes, bounds with exact curve extremes, float32 coordinates), so both give the same drawings; a test
 * compares them on real documents. A file this reader cannot read (`PdfUnsupported`) is read by pdf.js.
 */
import {
  bezierBounds,
  CLOSE,
  CURVE,
  DrawingsSink,
  LINE,
  MOVE,
  mul,
  point,
  type Matrix,
  type PageDrawings,
} from './drawings';
import { PdfObjects, type PdfPage } from './pdf-objects';
import {
  isDict,
  Lexer,
  nameOf,
  numbersOf,
  PdfName,
  PdfStream,
  PdfUnsupported,
  skipInlineImage,
  type PdfDict,
} from './pdf-syntax';

/** Form XObjects nested deeper than this are not followed (pdf.js stops at a loop; real documents nest 2–3). */
const MAX_FORM_DEPTH = 12;
/**
 * Operators read at most per page (forms included; a page of real text is some 10 000) and per document: past them
 * the reader runs in the caller's thread no longer, and pdf.js (in a thread it can stop) reads what is left.
 */
const MAX_PAGE_OPERATORS = 2_000_000;
const MAX_DOCUMENT_OPERATORS = 20_000_000;

const f32 = Math.fround;

/** The drawings of each page of one document, read from its content streams. */
export class ContentDrawings {
  private readonly objects: PdfObjects;
  /** Form XObjects' decoded content, by stream (a form drawn on every page is decoded once). */
  private readonly forms = new Map<PdfStream, Uint8Array>();
  /** Operators read so far in this document. */
  operators = 0;

  /** Throws `PdfUnsupported` for a file this reader leaves to pdf.js. */
  constructor(bytes: Uint8Array) {
    this.objects = new PdfObjects(bytes);
    this.objects.pages();
  }

  get pageCount(): number {
    return this.objects.pages().length;
  }

  /** Page `n`'s (1-based) drawings in page space, the view's bottom left at the origin, as pdf.js's reader gives them. */
  pageDrawings(n: number): PageDrawings {
    const page: PdfPage | undefined = this.objects.pages()[n - 1];
    if (!page) throw new PdfUnsupported(`no page ${n}`);
    const sink = new DrawingsSink();
    const run = new Run(this, sink);
    run.read(this.pageContent(page.dict), page.resources, [1, 0, 0, 1, 0, 0], 0);
    return sink.result(page.view[0], page.view[1]);
  }

  /** A page's content streams decoded and joined. */
  private pageContent(dict: PdfDict): Uint8Array {
    const c = this.objects.get(dict, 'Contents');
    const streams = (Array.isArray(c) ? c.map((x) => this.objects.resolve(x)) : [c]).filter(
      (s): s is PdfStream => s instanceof PdfStream,
    );
    const parts = streams.map((s) => this.objects.decode(s));
    if (parts.length === 1) return parts[0];
    // Joined with a line break: a content stream may end in the middle of nothing, never of a token.
    const joined = new Uint8Array(parts.reduce((n, p) => n + p.length + 1, 0));
    let at = 0;
    for (const p of parts) {
      joined.set(p, at);
      joined[at + p.length] = 10;
      at += p.length + 1;
    }
    return joined;
  }

  /** The form XObject `name` of `resources`, with its decoded content; undefined for an image or a missing one. */
  form(resources: PdfDict | undefined, name: string): { stream: PdfStream; content: Uint8Array } | undefined {
    if (!resources) return undefined;
    const xobjects = this.objects.get(resources, 'XObject');
    if (!isDict(xobjects)) return undefined;
    const x = this.objects.get(xobjects, name);
    if (!(x instanceof PdfStream) || nameOf(this.objects.resolve(x.dict.get('Subtype'))) !== 'Form') return undefined;
    let content = this.forms.get(x);
    if (!content) this.forms.set(x, (content = this.objects.decode(x)));
    return { stream: x, content };
  }

  resolveDict(v: Parameters<PdfObjects['resolve']>[0]): PdfDict | undefined {
    const r = this.objects.resolve(v);
    return isDict(r) ? r : undefined;
  }

  matrixOf(stream: PdfStream): Matrix | undefined {
    const m = numbersOf(this.objects.resolve(stream.dict.get('Matrix')), 6);
    // As float32, as pdf.js passes it on (both readers give the same drawings to the last digit).
    return m ? (m.map(f32) as Matrix) : undefined;
  }
}

/** One page's reading: the path being built, the transform and its saved states. */
class Run {
  private ctm: Matrix = [1, 0, 0, 1, 0, 0];
  private readonly stack: Matrix[] = [];
  private path: number[] = [];
  private readonly minMax = [Infinity, Infinity, -Infinity, -Infinity];
  private cx = 0;
  private cy = 0;
  private operators = 0;
  /** Forms being read (a form that draws itself is not read again inside). */
  private readonly active = new Set<PdfStream>();

  constructor(
    private readonly doc: ContentDrawings,
    private readonly sink: DrawingsSink,
  ) {}

  read(content: Uint8Array, resources: PdfDict | undefined, ctm: Matrix, depth: number): void {
    this.ctm = ctm;
    const lex = new Lexer(content);
    const nums: number[] = [];
    let lastName: string | undefined;
    const mm = this.minMax;
    for (;;) {
      const t = lex.next();
      if (t === undefined) return;
      if (typeof t === 'number') {
        nums.push(t);
        continue;
      }
      if (t instanceof PdfName) {
        lastName = t.name;
        nums.length = 0;
        continue;
      }
      if (typeof t !== 'string') {
        nums.length = 0;
        continue;
      }
      if (t === '[' || t === '<<') {
        // An array or dictionary operand (TJ, d, BDC): read whole and left.
        lex.value(t, false);
        nums.length = 0;
        continue;
      }
      if (++this.operators > MAX_PAGE_OPERATORS || ++this.doc.operators > MAX_DOCUMENT_OPERATORS)
        throw new PdfUnsupported('too many operators');
      if (!this.sink.open) return;
      const k = nums.length;
      switch (t) {
        case 'q':
          this.stack.push(this.ctm);
          break;
        case 'Q':
          this.ctm = this.stack.pop() ?? this.ctm;
          break;
        case 'cm':
          if (k >= 6) this.ctm = mul(this.ctm, nums.slice(k - 6) as Matrix);
          break;
        case 'm':
        case 'l':
          if (k >= 2) this.to(t === 'm' ? MOVE : LINE, nums[k - 2], nums[k - 1]);
          break;
        // A cubic curve; `v` takes the current point as its first control point, `y` its end as the second.
        case 'c':
          if (k >= 6) this.curve(nums[k - 6], nums[k - 5], nums[k - 4], nums[k - 3], nums[k - 2], nums[k - 1]);
          break;
        case 'v':
          if (k >= 4) this.curve(this.cx, this.cy, nums[k - 4], nums[k - 3], nums[k - 2], nums[k - 1]);
          break;
        case 'y':
          if (k >= 4) this.curve(nums[k - 4], nums[k - 3], nums[k - 2], nums[k - 1], nums[k - 2], nums[k - 1]);
          break;
        case 'h':
          this.path.push(CLOSE);
          break;
        case 're':
          if (k >= 4) {
            const [x, y, w, h] = nums.slice(k - 4);
            this.cx = x;
            this.cy = y;
            const xw = x + w;
            const yh = y + h;
            if (w === 0 || h === 0) this.path.push(MOVE, f32(x), f32(y), LINE, f32(xw), f32(yh), CLOSE);
            else
              this.path.push(
                MOVE,
                f32(x),
                f32(y),
                LINE,
                f32(xw),
                f32(y),
                LINE,
                f32(xw),
                f32(yh),
                LINE,
                f32(x),
                f32(yh),
                CLOSE,
              );
            point(mm, Math.min(x, xw), Math.min(y, yh));
            point(mm, Math.max(x, xw), Math.max(y, yh));
          }
          break;
        case 'S':
        case 's':
        case 'f':
        case 'F':
        case 'f*':
        case 'B':
        case 'B*':
        case 'b':
        case 'b*':
        case 'n':
          this.paint(t);
          break;
        case 'Do':
          if (lastName !== undefined) this.form(resources, lastName, depth);
          break;
        case 'BI':
          skipInlineImage(lex);
          break;
        default:
          break;
      }
      nums.length = 0;
      lastName = undefined;
    }
  }

  private to(code: number, x: number, y: number): void {
    this.cx = x;
    this.cy = y;
    this.path.push(code, f32(x), f32(y));
    point(this.minMax, x, y);
  }

  private curve(x1: number, y1: number, x2: number, y2: number, x: number, y: number): void {
    bezierBounds(this.cx, this.cy, x1, y1, x2, y2, x, y, this.minMax);
    this.cx = x;
    this.cy = y;
    this.path.push(CURVE, f32(x1), f32(y1), f32(x2), f32(y2), f32(x), f32(y));
  }

  private paint(op: string): void {
    if (op === 's' || op === 'b' || op === 'b*') this.path.push(CLOSE);
    const mm = this.minMax;
    if (this.path.length && op !== 'n') {
      this.sink.add(op === 'S' || op === 's', this.path, [f32(mm[0]), f32(mm[1]), f32(mm[2]), f32(mm[3])], this.ctm);
    }
    this.path = [];
    mm[0] = mm[1] = Infinity;
    mm[2] = mm[3] = -Infinity;
  }

  private form(resources: PdfDict | undefined, name: string, depth: number): void {
    if (depth >= MAX_FORM_DEPTH) return;
    const f = this.doc.form(resources, name);
    if (!f || this.active.has(f.stream)) return;
    const own = this.doc.resolveDict(f.stream.dict.get('Resources'));
    const matrix = this.doc.matrixOf(f.stream);
    const saved = this.ctm;
    const savedDepth = this.stack.length;
    // A form starts a path of its own (pdf.js's `newPath`); the page's goes on after it.
    const path = this.path;
    const mm = [...this.minMax];
    this.path = [];
    this.minMax.splice(0, 4, Infinity, Infinity, -Infinity, -Infinity);
    this.active.add(f.stream);
    try {
      this.read(f.content, own ?? resources, matrix ? mul(saved, matrix) : saved, depth + 1);
    } finally {
      this.active.delete(f.stream);
      this.stack.length = Math.min(this.stack.length, savedDepth);
      this.ctm = saved;
      this.path = path;
      this.minMax.splice(0, 4, ...mm);
    }
  }
}
