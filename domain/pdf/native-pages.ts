/**
 * The `native` read of a page range, shared by the `readPdfText` activity and the API's direct answer
 * (`native-markdown-thread.ts`): the text layer and, for Markdown, the layouts read at once, each page built by
 * `nativePage` (its quality from its text and layout).
 */
import type { PdfEngine } from '../engines/pdf';
import { nativePage } from './markdown/pages';

export interface NativePagesOptions {
  signal?: AbortSignal;
  /** Processes each reader may run at once over parts of the range. */
  parallel?: number;
  /** Read the layouts too (`output_format=markdown`). */
  markdown: boolean;
}

export async function readNativePages(
  pdf: Pick<PdfEngine, 'readPageTexts' | 'readPageLayouts'>,
  pdfPath: string,
  pages: readonly number[],
  opts: NativePagesOptions,
): Promise<ReturnType<typeof nativePage>[]> {
  const { signal, parallel } = opts;
  // The layouts (Markdown) are read by their own processes while the text layer is.
  const [texts, layouts] = await Promise.all([
    pdf.readPageTexts(pdfPath, pages, { signal, parallel }),
    opts.markdown ? pdf.readPageLayouts(pdfPath, pages, { signal, parallel }) : undefined,
  ]);
  return pages.map((page) => nativePage(page, texts.get(page) ?? '', layouts?.get(page)));
}
