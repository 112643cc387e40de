/**
 * A document's Markdown from its pages as the readers give them (contract §9), shared by the pdf job (the
 * `readPdfText` and `extractPdfPages` activities, `finishPdf`) and the API's direct answer to a small `native`
 * Markdown request (`native-markdown-thread.ts`), so both give the same Markdown and the same per-page quality. Pure.
 */
import { documentMarkdown, type MarkdownOptions } from './document';
import type { PageBlock } from './provenance';
import { pageQuality, type PageQuality } from './quality';
import type { PageLayout } from './types';

/** A page as read: its text, and with `output_format=markdown` its layout and quality. */
export interface ReadPage {
  page: number;
  text: string;
  method: string;
  layout?: PageLayout;
  quality?: PageQuality;
}

/** The page's size in points, for the quality's glyphs-per-area signal; nothing without a layout. */
export const pageDims = (layout: PageLayout | undefined) =>
  layout ? { width: layout.width, height: layout.height } : {};

/** A text-layer page; with its layout (Markdown) its quality. */
export const nativePage = (page: number, text: string, layout: PageLayout | undefined) => ({
  page,
  text,
  method: 'native' as const,
  ...(layout ? { layout, quality: pageQuality(text, pageDims(layout)) } : {}),
});

/**
 * The document's Markdown and each page's, with each page's quality (the page's own, else its text's) and blocks. A page read by
 * a vision model has no layout and answers Markdown already: it is taken as it is, and the document is then its pages
 * one after the other (the rules across pages, such as a table joined over a page break, apply among the pages with a
 * layout).
 */
export function pagesMarkdown(
  contents: readonly ReadPage[],
  options: MarkdownOptions = {},
): {
  markdown: string;
  pages: { markdown: string; quality: PageQuality; blocks: PageBlock[] }[];
} {
  const withLayout = contents.filter((c) => c.layout);
  const doc = documentMarkdown(
    withLayout.map((c) => c.layout!),
    options,
  );
  const byPage = new Map(doc.pages.map((p) => [p.page, p]));
  // A page a vision model read has no positions: its blocks are none (contract §13), never made up.
  const pages = contents.map((c) => ({
    markdown: c.layout ? (byPage.get(c.page)?.markdown ?? '') : c.text.trim(),
    quality: c.quality ?? pageQuality(c.text),
    blocks: c.layout ? (byPage.get(c.page)?.blocks ?? []) : [],
  }));
  if (withLayout.length === contents.length) return { markdown: doc.markdown, pages };
  return {
    markdown: pages
      .map((p) => p.markdown)
      .filter(Boolean)
      .join('\n\n'),
    pages,
  };
}
