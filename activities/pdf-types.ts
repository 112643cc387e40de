/** Types the PDF activities share (their own module, so pdf.activities and pdf-results import no cycle). */

/** One page's text and the method that produced it. */
export interface PageResult {
  page: number;
  text: string;
  method: string;
  confidence?: number;
  /** Degrees (clockwise) the scanned page was turned before OCR; absent when it was upright. */
  rotation?: number;
}

export interface PdfMeta {
  pageCount: number;
  title: string;
  author: string;
  pages: number[];
}
