/**
 * The layouts the Markdown rules read, from two engines: the text (chunks with fonts and positions) and the outline
 * from poppler (`poppler-layout.ts`: fast, ligatures mapped), the drawings (rulings, bullets drawn as shapes) from
 * pdf.js's operator list (`pdfjs-layout.ts`), only for the pages whose text shows they may need them
 * (`markdown/needs-drawings.ts`).
 */
import { needsDrawings } from './markdown/needs-drawings';
import type { PageLayout } from './markdown/types';
import { bulletsOf } from './pdfjs-layout';
import { pageDrawingsInThread } from './pdfjs-thread';
import { popplerPageLayouts } from './poppler-layout';

export interface MarkdownLayoutOptions {
  signal?: AbortSignal;
  /** pdftohtml processes that may run at once over parts of the range (default 1). */
  parallel?: number;
}

/** Each asked page's layout for the Markdown rules; the drawings only where needed. */
export async function markdownPageLayouts(
  pdfPath: string,
  pages: readonly number[],
  opts: MarkdownLayoutOptions = {},
): Promise<Map<number, PageLayout>> {
  const layouts = await popplerPageLayouts(pdfPath, pages, opts);
  const need = pages.filter((p) => {
    const l = layouts.get(p);
    return l !== undefined && needsDrawings(l);
  });
  if (need.length === 0) return layouts;
  const drawings = await pageDrawingsInThread(pdfPath, need, { signal: opts.signal });
  for (const [page, d] of drawings) {
    const l = layouts.get(page)!;
    layouts.set(page, { ...l, segments: d.segments, items: [...l.items, ...bulletsOf(d.marks, l.items)] });
  }
  return layouts;
}
