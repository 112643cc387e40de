/**
 * The PDF engine behind one interface: what the activities ask of a document (its description, the text layer of
 * pages, which pages paint images, page renders and embedded images). The worker builds the real one
 * (providers/pdf/engine.ts `createPdfEngine`: pdf.js or poppler for the text, poppler for images); activity tests
 * inject an in-memory one.
 */
import type { PdfDescription } from '../pdf/description';
import type { PageLayout } from '../pdf/markdown/types';

export interface PdfCallOptions {
  /** Aborts the call: a running engine process or thread is killed, and the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Page images are bounded in pixels: larger pages render at the highest resolution that fits. */
export interface PdfRenderOptions extends PdfCallOptions {
  maxPixels?: number;
}

/** One rendered page image, in page order. */
export interface RenderedPage {
  page: number;
  path: string;
}

/** Bounds of an embedded-image extraction: past one, the call fails before (or while) writing files. */
export interface EmbeddedImageLimits {
  /** Images (masks included: each is a file) the pages may hold; default 2,000. */
  maxImages?: number;
  /** Pixels one image may declare; default 100 million. */
  maxImagePixels?: number;
  /** Bytes the extracted files may take together, declared (uncompressed) or on disk; default 1 GiB. */
  maxBytes?: number;
}

/**
 * Failures a client may see are `PdfError`s (domain/pdf/errors.ts: an `AppError` with its contract code:
 * `INVALID_FORMAT` for bytes that are no PDF, `UNPROCESSABLE_INPUT` for an encrypted, corrupt or empty one), which
 * the activity error boundary fails non-retryable; anything else (a crashed process) is left to the step's retry
 * policy.
 */
export interface PdfEngine {
  /** Checks that the file is a readable PDF with pages; its page count, title and author. */
  describe(pdfPath: string, opts?: PdfCallOptions): Promise<PdfDescription>;
  /** The text layer of each asked page (1-based), '' for a page without one; `parallel` processes may share a range. */
  readPageTexts(
    pdfPath: string,
    pages: readonly number[],
    opts?: PdfCallOptions & { parallel?: number },
  ): Promise<Map<number, string>>;
  /**
   * Each asked page's layout for Markdown (text items with fonts and bookmarks through poppler, rulings through pdf.js
   * where the text shows a table or drawn bullets may be there); `parallel` processes may share a range.
   */
  readPageLayouts(
    pdfPath: string,
    pages: readonly number[],
    opts?: PdfCallOptions & { parallel?: number },
  ): Promise<Map<number, PageLayout>>;
  /** Which of `pages` paint any image (a page without one has nothing to OCR). */
  pagesWithImages(pdfPath: string, pages: readonly number[], opts?: PdfCallOptions): Promise<Set<number>>;
  /** The pages as 300 dpi grayscale images in `outDir`, OCR input, in page order. */
  renderPages(pdfPath: string, pages: number[], outDir: string, opts?: PdfRenderOptions): Promise<RenderedPage[]>;
  /** One page as a PNG at `dpi` (for people and vision models); answers the written path. */
  renderPagePng(pdfPath: string, page: number, outPath: string, dpi: number, opts?: PdfRenderOptions): Promise<string>;
  /** The images embedded in pages `first`..`last`, as PNG files in `outDir`, in page order. */
  extractEmbeddedImages(
    pdfPath: string,
    first: number,
    last: number,
    outDir: string,
    opts?: PdfCallOptions & { limits?: EmbeddedImageLimits },
  ): Promise<string[]>;
}
