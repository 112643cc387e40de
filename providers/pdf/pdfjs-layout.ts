/**
 * A page's layout for the Markdown rules (`markdown/types.ts`) from pdf.js: the text items with their fonts (bold and
 * monospace from the font's name, known once the operator list has loaded it), and the axis-aligned lines the page
 * strokes or fills thin (table rulings), with the current transform followed through save, restore, transforms and
 * form XObjects. The outline's bookmarks resolved to their pages. Runs where pdf.js runs (its thread).
 */
import type { PDFDocumentProxy, PDFPageProxy, TextItem, TextMarkedContent } from 'pdfjs-dist/types/src/display/api';
import type { LayoutItem, OutlineEntry, PageLayout, Segment } from './markdown/types';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
type Matrix = [number, number, number, number, number, number];

const BOLD = /bold|black|heavy|semibold|demi|cmbx|cmb\d|[-,+]bd|sfbx|ptmb|phvb/i;
const MONO = /mono|courier|consol|typewriter|cmtt|lmtt|menlo|inconsolata|sfmono|pcrr|ptmr8t-tt|code/i;

const mul = (m: Matrix, n: Matrix): Matrix => [
  m[0] * n[0] + m[2] * n[1],
  m[1] * n[0] + m[3] * n[1],
  m[0] * n[2] + m[2] * n[3],
  m[1] * n[2] + m[3] * n[3],
  m[0] * n[4] + m[2] * n[5] + m[4],
  m[1] * n[4] + m[3] * n[5] + m[5],
];
const apply = (m: Matrix, x: number, y: number): [number, number] => [
  m[0] * x + m[2] * y + m[4],
  m[1] * x + m[3] * y + m[5],
];

const round = (v: number) => Math.round(v * 100) / 100;

function segmentOf(a: [number, number], b: [number, number]): Segment | undefined {
  const s = { x0: Math.min(a[0], b[0]), y0: Math.min(a[1], b[1]), x1: Math.max(a[0], b[0]), y1: Math.max(a[1], b[1]) };
  const w = s.x1 - s.x0;
  const h = s.y1 - s.y0;
  if (w < 2 && h < 2) return undefined;
  if (h > 2 && w > 2) return undefined; // not axis-aligned
  return { x0: round(s.x0), y0: round(s.y0), x1: round(s.x1), y1: round(s.y1) };
}

/** A small filled shape about as wide as high: a list bullet drawn as a path. */
export interface Mark {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

/**
 * Rulings: stroked axis-aligned path pieces and thin filled rectangles, in page space; and marks: small filled
 * shapes about as wide as high (a list bullet drawn as a path, as browsers print them).
 */
function drawingsOf(
  pdfjs: PdfJs,
  ops: { fnArray: number[]; argsArray: unknown[] },
  max = 20_000,
): { segments: Segment[]; marks: Mark[] } {
  const O = pdfjs.OPS;
  const out: Segment[] = [];
  const marks: Mark[] = [];
  let ctm: Matrix = [1, 0, 0, 1, 0, 0];
  const stack: Matrix[] = [];
  for (let i = 0; i < ops.fnArray.length && out.length < max; i++) {
    const fn = ops.fnArray[i];
    const args = ops.argsArray[i] as unknown[];
    if (fn === O.save) stack.push(ctm);
    else if (fn === O.restore) ctm = stack.pop() ?? ctm;
    else if (fn === O.transform) ctm = mul(ctm, args as Matrix);
    else if (fn === O.paintFormXObjectBegin) {
      stack.push(ctm);
      if (Array.isArray(args[0])) ctm = mul(ctm, args[0] as Matrix);
    } else if (fn === O.paintFormXObjectEnd) ctm = stack.pop() ?? ctm;
    else if (fn === O.constructPath) {
      const [paint, data, minMax] = args as [number, [ArrayLike<number> | null], ArrayLike<number> | null];
      if (paint === O.endPath || !data?.[0] || !minMax) continue;
      const stroke = paint === O.stroke || paint === O.closeStroke;
      if (!stroke) {
        const a = apply(ctm, minMax[0], minMax[1]);
        const b = apply(ctm, minMax[2], minMax[3]);
        const w = Math.abs(a[0] - b[0]);
        const h = Math.abs(a[1] - b[1]);
        if ((w < 2 && h > 4) || (h < 2 && w > 4)) {
          const s = segmentOf(a, b);
          if (s) out.push(s);
        } else if (
          w >= 1.5 &&
          h >= 1.5 &&
          w <= 8 &&
          h <= 8 &&
          Math.max(w, h) / Math.min(w, h) < 1.6 &&
          marks.length < 2000
        )
          marks.push({
            x0: Math.min(a[0], b[0]),
            x1: Math.max(a[0], b[0]),
            y0: Math.min(a[1], b[1]),
            y1: Math.max(a[1], b[1]),
          });
        continue;
      }
      const d = data[0];
      let start: [number, number] = [0, 0];
      let cur: [number, number] = [0, 0];
      for (let k = 0; k < d.length;) {
        const code = d[k];
        if (code === 0) {
          cur = start = apply(ctm, d[k + 1], d[k + 2]);
          k += 3;
        } else if (code === 1) {
          const next = apply(ctm, d[k + 1], d[k + 2]);
          const s = segmentOf(cur, next);
          if (s) out.push(s);
          cur = next;
          k += 3;
        } else if (code === 2) {
          cur = apply(ctm, d[k + 5], d[k + 6]);
          k += 7;
        } else if (code === 3) {
          cur = apply(ctm, d[k + 3], d[k + 4]);
          k += 5;
        } else if (code === 4) {
          const s = segmentOf(cur, start);
          if (s) out.push(s);
          cur = start;
          k += 1;
        } else break;
      }
    }
  }
  return { segments: out, marks };
}

/** Marks that stand just left of a line's text, as bullets of that line. */
export function bulletsOf(marks: readonly Mark[], items: readonly LayoutItem[]): LayoutItem[] {
  const out: LayoutItem[] = [];
  for (const m of marks) {
    const next = items.find(
      (i) => m.y0 >= i.y - 0.2 * i.size && m.y1 <= i.y + 0.9 * i.size && i.x >= m.x1 && i.x - m.x1 < 2.5 * i.size,
    );
    if (next) out.push({ str: '•', x: round(m.x0), y: next.y, w: round(m.x1 - m.x0), size: next.size });
  }
  return out;
}

const isTextItem = (item: TextItem | TextMarkedContent): item is TextItem => typeof (item as TextItem).str === 'string';

/** Text items with font flags; neighbours in one font on one baseline merged (fewer, longer items). */
function itemsOf(
  page: PDFPageProxy,
  content: { items: (TextItem | TextMarkedContent)[]; styles: Record<string, { fontFamily?: string }> },
): LayoutItem[] {
  const fonts = new Map<string, { bold: boolean; mono: boolean }>();
  const flags = (fontName: string) => {
    let f = fonts.get(fontName);
    if (!f) {
      let name = '';
      try {
        if (page.commonObjs.has(fontName))
          name = String((page.commonObjs.get(fontName) as { name?: string })?.name ?? '');
      } catch {
        name = '';
      }
      const family = content.styles[fontName]?.fontFamily ?? '';
      f = { bold: BOLD.test(name), mono: MONO.test(name) || family === 'monospace' };
      fonts.set(fontName, f);
    }
    return f;
  };
  const out: (LayoutItem & { font: string })[] = [];
  for (const item of content.items) {
    if (!isTextItem(item) || item.str === '') continue;
    const [a, b, c, d, e, f] = item.transform as number[];
    if (Math.abs(b) > 0.01 || Math.abs(c) > 0.01 || a <= 0) continue; // rotated text: not part of the flow
    const size = Math.hypot(c, d) || item.height || 1;
    const fl = flags(item.fontName);
    // Spaces at either end carry widths that may reach into the next cell: the extent of the text itself counts.
    const perChar = item.width / item.str.length;
    const lead = item.str.length - item.str.trimStart().length;
    const str = item.str.trim();
    if (!str) continue;
    const x = e + lead * perChar;
    const w = str.length * perChar;
    const prev = out[out.length - 1];
    if (
      prev &&
      prev.font === item.fontName &&
      Math.abs(prev.y - f) < 0.01 &&
      Math.abs(prev.size - size) < 0.01 &&
      Math.abs(x - (prev.x + prev.w)) < 0.1 * size
    ) {
      prev.str += lead > 0 || /\s$/.test(prev.str) ? ` ${str}` : str;
      prev.w = round(x + w - prev.x);
      continue;
    }
    out.push({
      str,
      x: round(x),
      y: round(f),
      w: round(w),
      size: round(size),
      font: item.fontName,
      ...(fl.bold ? { bold: true } : {}),
      ...(fl.mono ? { mono: true } : {}),
    });
  }
  return out.map(({ font: _font, ...rest }) => rest);
}

/** What a page draws: rulings and bullet marks, in page space with the origin at the view's bottom left. */
export interface PageDrawings {
  segments: Segment[];
  marks: Mark[];
}

/** One page's drawings (1-based `n`) from its operator list, without its text. */
export async function readPageDrawings(pdfjs: PdfJs, doc: PDFDocumentProxy, n: number): Promise<PageDrawings> {
  const page = await doc.getPage(n);
  try {
    const [x0, y0] = page.view;
    const { segments, marks } = drawingsOf(pdfjs, await page.getOperatorList());
    if (!x0 && !y0) return { segments, marks };
    return {
      segments: segments.map((s) => ({ x0: s.x0 - x0, x1: s.x1 - x0, y0: s.y0 - y0, y1: s.y1 - y0 })),
      marks: marks.map((m) => ({ x0: m.x0 - x0, x1: m.x1 - x0, y0: m.y0 - y0, y1: m.y1 - y0 })),
    };
  } finally {
    page.cleanup();
  }
}

/** One page's layout (1-based `n`). */
export async function readPageLayout(pdfjs: PdfJs, doc: PDFDocumentProxy, n: number): Promise<PageLayout> {
  const page = await doc.getPage(n);
  try {
    const [x0, y0, x1, y1] = page.view;
    const ops = await page.getOperatorList();
    const content = await page.getTextContent();
    const text = itemsOf(page, content as never);
    const { segments, marks } = drawingsOf(pdfjs, ops);
    const items = [...text, ...bulletsOf(marks, text)];
    // Page space with the origin at the view's bottom left, as the text items are.
    return {
      page: n,
      width: round(x1 - x0),
      height: round(y1 - y0),
      items: x0 || y0 ? items.map((i) => ({ ...i, x: round(i.x - x0), y: round(i.y - y0) })) : items,
      segments:
        x0 || y0 ? segments.map((s) => ({ x0: s.x0 - x0, x1: s.x1 - x0, y0: s.y0 - y0, y1: s.y1 - y0 })) : segments,
    };
  } finally {
    page.cleanup();
  }
}

interface OutlineNode {
  title: string;
  dest: string | unknown[] | null;
  items: OutlineNode[];
}

/** The outline's bookmarks by page (1-based), at most `max` of them; an unreadable bookmark is left out. */
export async function outlineByPage(doc: PDFDocumentProxy, max = 5000): Promise<Map<number, OutlineEntry[]>> {
  const byPage = new Map<number, OutlineEntry[]>();
  const outline = ((await doc.getOutline()) ?? []) as OutlineNode[];
  let seen = 0;
  // One call for every named destination, and each page reference resolved once: an outline of thousands of
  // bookmarks would otherwise cost two round trips to pdf.js's worker each.
  let named: Promise<Record<string, unknown>> | undefined;
  const indexOf = new Map<string, Promise<number>>();
  const pageIndex = (ref: unknown): Promise<number> => {
    if (typeof ref === 'number') return Promise.resolve(ref);
    if (!ref || typeof ref !== 'object') return Promise.resolve(-1);
    const { num, gen } = ref as { num?: number; gen?: number };
    const key = `${num}R${gen}`;
    let p = indexOf.get(key);
    if (!p) indexOf.set(key, (p = doc.getPageIndex(ref as never).catch(() => -1)));
    return p;
  };
  const walk = async (nodes: OutlineNode[], level: number) => {
    for (const node of nodes) {
      if (seen++ >= max) return;
      try {
        let dest: unknown = node.dest;
        if (typeof dest === 'string') {
          named ??= doc.getDestinations() as Promise<Record<string, unknown>>;
          dest = (await named)[dest] ?? null;
        }
        const index = Array.isArray(dest) ? await pageIndex(dest[0]) : -1;
        if (index >= 0 && node.title) {
          const list = byPage.get(index + 1) ?? [];
          list.push({ title: node.title.replace(/\s+/g, ' ').trim(), level });
          byPage.set(index + 1, list);
        }
      } catch {
        // A broken destination: the bookmark confirms nothing.
      }
      if (node.items?.length && level < 6) await walk(node.items, level + 1);
    }
  };
  await walk(outline, 1);
  return byPage;
}
