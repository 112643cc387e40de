/**
 * What the PDF-to-Markdown rules read of a page: positioned text items with their font, and the straight lines and
 * thin rectangles the page draws (table rulings). Plain data (JSON-safe): the pdf.js thread and the OCR step build
 * it, a page result carries it, and the document's Markdown is built from all pages at once (`document.ts`).
 */

/** One text item in PDF user space (points, origin bottom left); `y` is the baseline. */
export interface LayoutItem {
  str: string;
  x: number;
  y: number;
  /** Advance width. */
  w: number;
  /** Font size (for OCR words: the line's height). */
  size: number;
  bold?: boolean;
  mono?: boolean;
  /**
   * The producer's own paragraph (tesseract's block and paragraph numbers): lines of one group form one paragraph,
   * lines of different groups never do. Absent for a text layer (paragraphs come from the geometry).
   */
  group?: string;
}

/** An axis-aligned drawn line (a stroke, or a thin filled rectangle), normalised: x0 ≤ x1, y0 ≤ y1. */
export interface Segment {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** A bookmark of the document's outline that points at this page. */
export interface OutlineEntry {
  title: string;
  /** 1 for a top-level bookmark. */
  level: number;
}

export interface PageLayout {
  /** 1-based page number. */
  page: number;
  width: number;
  height: number;
  items: LayoutItem[];
  segments: Segment[];
  outline?: OutlineEntry[];
}
