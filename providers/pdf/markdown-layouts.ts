/**
 * The layouts the Markdown rules read: the text (chunks with fonts and positions) and the outline from poppler
 * (`poppler-layout.ts`: fast, ligatures mapped), the drawings (rulings, bullets drawn as shapes) from the pages'
 * content streams (`content-drawings.ts`; pdf.js's operator list, `pdfjs-layout.ts`, for a file that reader cannot
 * read), only for the pages whose text shows they may need them (`markdown/needs-drawings.ts`).
 */
import { readFile } from 'node:fs/promises';
import { ContentDrawings } from '../../domain/pdf/content-drawings';
import { bulletsOf, type PageDrawings } from '../../domain/pdf/drawings';
import { needsDrawings } from '../../domain/pdf/markdown/needs-drawings';
import type { PageLayout } from '../../domain/pdf/markdown/types';
import { PdfUnsupported } from '../../domain/pdf/pdf-syntax';
import { pageDrawingsInThread } from './pdfjs-thread';
import { popplerPageLayouts } from './poppler-layout';

export interface MarkdownLayoutOptions {
  signal?: AbortSignal;
  /** pdftohtml processes that may run at once over parts of the range (default 1). */
  parallel?: number;
}

/**
 * Each asked page's layout for the Markdown rules; the drawings only where needed. pdftohtml's pages are parsed as it
 * writes them, and each page that needs drawings is read by our content-stream reader meanwhile (it needs no fonts:
 * about a millisecond a page, where pdf.js converts every font a page uses first). The pages of a file that reader
 * cannot read go to pdf.js's thread in one call at the end.
 */
export async function markdownPageLayouts(
  pdfPath: string,
  pages: readonly number[],
  opts: MarkdownLayoutOptions = {},
): Promise<Map<number, PageLayout>> {
  let failed = false;
  const drawings = new Map<number, PageDrawings>();
  const forPdfJs: number[] = [];
  let reader: Promise<ContentDrawings | undefined> | undefined;
  let reading = Promise.resolve();
  const draw = (page: number) => {
    // Opened at the first page that needs drawings (a document that needs none is not parsed twice).
    reader ??= readFile(pdfPath).then(
      (bytes) => {
        try {
          return new ContentDrawings(bytes);
        } catch {
          return undefined; // PdfUnsupported, or a file out of shape: pdf.js reads it (and names what is wrong)
        }
      },
      () => undefined,
    );
    const r = reader;
    reading = reading.then(async () => {
      const doc = await r;
      if (failed) return;
      try {
        if (!doc) throw new PdfUnsupported('not readable here');
        drawings.set(page, doc.pageDrawings(page));
      } catch {
        forPdfJs.push(page);
      }
    });
  };
  let layouts: Map<number, PageLayout>;
  try {
    layouts = await popplerPageLayouts(pdfPath, pages, {
      signal: opts.signal,
      parallel: opts.parallel,
      onPage: (l) => {
        if (needsDrawings(l)) draw(l.page);
      },
    });
  } catch (err) {
    failed = true;
    await reading;
    throw err;
  }
  await reading;
  if (forPdfJs.length) {
    const read = await pageDrawingsInThread(pdfPath, forPdfJs, { signal: opts.signal });
    for (const [p, d] of read) drawings.set(p, d);
  }
  for (const [page, d] of drawings) {
    const l = layouts.get(page);
    if (!l) continue;
    layouts.set(page, { ...l, segments: d.segments, items: [...l.items, ...bulletsOf(d.marks, l.items)] });
  }
  return layouts;
}
