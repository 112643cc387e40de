/** Types the PDF activities share (their own module, so pdf.activities and pdf-results import no cycle). */
import type { PageQuality } from '../domain/pdf/markdown/quality';
import type { PageLayout } from '../domain/pdf/markdown/types';

/** One page's text and the method that produced it. */
export interface PageResult {
  page: number;
  text: string;
  method: string;
  confidence?: number;
  /** Degrees (clockwise) the scanned page was turned before OCR; absent when it was upright. */
  rotation?: number;
  /** With `output_format=markdown`: the page's layout, from which the document's Markdown is built at the end. */
  layout?: PageLayout;
  /** With `output_format=markdown` (and always for `combined`, whose choice it explains). */
  quality?: PageQuality;
}

export interface PdfMeta {
  pageCount: number;
  title: string;
  author: string;
  pages: number[];
}
