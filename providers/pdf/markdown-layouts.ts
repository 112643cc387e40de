/**
 * The layouts the Markdown rules read, from two engines: the text (chunks with fonts and positions) and the outline
 * from poppler (`poppler-layout.ts`: fast, ligatures mapped), the drawings (rulings, bullets drawn as shapes) from
 * pdf.js's operator list (`pdfjs-layout.ts`), only for the pages whose text shows they may need them
 * (`markdown/needs-drawings.ts`).
 */
import { randomUUID } from 'node:crypto';
import { needsDrawings } from './markdown/needs-drawings';
import type { PageLayout } from './markdown/types';
import { bulletsOf, type PageDrawings } from './pdfjs-layout';
import { pageDrawingsInThread } from './pdfjs-thread';
import { popplerPageLayouts } from './poppler-layout';

export interface MarkdownLayoutOptions {
  signal?: AbortSignal;
  /** pdftohtml processes that may run at once over parts of the range (default 1). */
  parallel?: number;
}

/**
 * Pages needing drawings that make a pdf.js call worth starting while pdftohtml still reads (a call costs a message
 * each way; the document stays open in the thread between the calls of one reading).
 */
const DRAWINGS_BATCH = 2;

/**
 * Each asked page's layout for the Markdown rules; the drawings only where needed. The two engines overlap: pdftohtml's
 * pages are parsed as it writes them, and the pages that need drawings go to pdf.js's thread in batches (one call at
 * a time) while pdftohtml reads on; what is left when it ends goes in a last call.
 */
export async function markdownPageLayouts(
  pdfPath: string,
  pages: readonly number[],
  opts: MarkdownLayoutOptions = {},
): Promise<Map<number, PageLayout>> {
  // A failure of either engine stops the other.
  const stop = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
  const session = randomUUID();
  const pending: number[] = [];
  const drawings = new Map<number, PageDrawings>();
  let running: Promise<void> | undefined;
  let failure: unknown;
  let popplerDone = false;
  // Whether the last call asked its thread to keep the document: then a last call ends the session (with no pages
  // when none are left: it only closes the document).
  let kept = false;
  const launch = (): void => {
    if (running || failure !== undefined) return;
    if (!popplerDone && pending.length < DRAWINGS_BATCH) return;
    if (pending.length === 0 && !kept) return;
    const batch = pending.splice(0);
    kept = !popplerDone;
    // The document stays open in pdf.js's thread until the last call (fonts are loaded once).
    running = pageDrawingsInThread(pdfPath, batch, { signal, session: { id: session, keep: kept } })
      .then((d) => {
        for (const [page, x] of d) drawings.set(page, x);
      })
      .catch((err: unknown) => {
        failure ??= err;
        stop.abort(err);
      })
      .finally(() => {
        running = undefined;
        launch();
      });
  };
  let layouts: Map<number, PageLayout>;
  try {
    layouts = await popplerPageLayouts(pdfPath, pages, {
      signal,
      parallel: opts.parallel,
      onPage: (l) => {
        if (needsDrawings(l)) {
          pending.push(l.page);
          launch();
        }
      },
    });
  } catch (err) {
    // pdftohtml's own error, unless it was stopped by a failure of pdf.js.
    failure ??= err;
    stop.abort(err);
  }
  popplerDone = true;
  launch();
  while (running) await running;
  if (failure !== undefined) throw failure;
  for (const [page, d] of drawings) {
    const l = layouts!.get(page);
    if (!l) continue;
    layouts!.set(page, { ...l, segments: d.segments, items: [...l.items, ...bulletsOf(d.marks, l.items)] });
  }
  return layouts!;
}
