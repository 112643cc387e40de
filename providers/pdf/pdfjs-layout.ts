/**
 * A page's layout for the Markdown rules (`markdown/types.ts`) from pdf.js: the text items with their fonts (bold and
 * monospace from the font's name, known once the operator list has loaded it), and the axis-aligned lines the page
 * strokes or fills thin (table rulings), with the current transform followed through save, restore, transforms and
 * form XObjects. The outline's bookmarks resolved to their pages. Runs where pdf.js runs (its thread).
 */
import type { PDFDocumentProxy, PDFPageProxy, TextItem, TextMarkedContent } from 'pdfjs-dist/types/src/display/api';
import { bulletsOf, DrawingsSink, mul, round, type Matrix, type PageDrawings } from './drawings';
import type { LayoutItem, OutlineEntry, PageLayout } from './markdown/types';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');

const BOLD = /bold|black|heavy|semibold|demi|cmbx|cmb\d|[-,+]bd|sfbx|ptmb|phvb/i;
const MONO = /mono|courier|consol|typewriter|cmtt|lmtt|menlo|inconsolata|sfmono|pcrr|ptmr8t-tt|code/i;

/**
 * Each painted path of an operator list to `sink`, with the current transform followed through save, restore,
 * transforms and form XObjects.
 */
function drawingsOf(pdfjs: PdfJs, ops: { fnArray: number[]; argsArray: unknown[] }): DrawingsSink {
  const O = pdfjs.OPS;
  const sink = new DrawingsSink();
  let ctm: Matrix = [1, 0, 0, 1, 0, 0];
  const stack: Matrix[] = [];
  for (let i = 0; i < ops.fnArray.length && sink.open; i++) {
    const fn = ops.fnArray[i];
    const args = ops.argsArray[i] as unknown[];
    if (fn === O.save) stack.push(ctm);
    else if (fn === O.restore) ctm = stack.pop() ?? ctm;
    else if (fn === O.transform) ctm = mul(ctm, args as Matrix);
    else if (fn === O.paintFormXObjectBegin) {
      stack.push(ctm);
      // The form's matrix comes as a Float32Array.
      const m = args[0] as ArrayLike<number> | null;
      if (m && m.length === 6) ctm = mul(ctm, Array.from(m) as Matrix);
    } else if (fn === O.paintFormXObjectEnd) ctm = stack.pop() ?? ctm;
    else if (fn === O.constructPath) {
      const [paint, data, minMax] = args as [number, [ArrayLike<number> | null], ArrayLike<number> | null];
      if (paint === O.endPath || !data?.[0] || !minMax) continue;
      sink.add(paint === O.stroke || paint === O.closeStroke, data[0], minMax, ctm);
    }
  }
  return sink;
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

/** One page's drawings (1-based `n`) from its operator list, without its text. */
export async function readPageDrawings(pdfjs: PdfJs, doc: PDFDocumentProxy, n: number): Promise<PageDrawings> {
  const page = await doc.getPage(n);
  try {
    const [x0, y0] = page.view;
    return drawingsOf(pdfjs, await page.getOperatorList()).result(x0, y0);
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
