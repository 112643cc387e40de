/**
 * The real PDF engine (domain/engines/pdf.ts `PdfEngine`): the text layer from the configured text engine, the
 * layouts from poppler and the content streams, images through poppler.
 */
import type { PdfEngine } from '../../domain/engines/pdf';
import { markdownPageLayouts } from './markdown-layouts';
import { pagesWithImages } from './poppler';
import { extractEmbeddedImages, renderPagePng, renderPages } from './render';
import { describePdf, readPageTexts, type PdfTextEngine } from './text-engine';

/** The real engine: the text layer from `textEngine` (`PDF_TEXT_ENGINE`), images through poppler. */
export function createPdfEngine(textEngine: PdfTextEngine): PdfEngine {
  return {
    describe: (pdfPath, opts) => describePdf(pdfPath, textEngine, opts),
    readPageTexts: (pdfPath, pages, opts) => readPageTexts(pdfPath, pages, textEngine, opts),
    readPageLayouts: (pdfPath, pages, opts) => markdownPageLayouts(pdfPath, pages, opts),
    pagesWithImages: (pdfPath, pages, opts) => pagesWithImages(pdfPath, pages, opts),
    renderPages: (pdfPath, pages, outDir, opts) => renderPages(pdfPath, pages, outDir, opts),
    renderPagePng: (pdfPath, page, outPath, dpi, opts) => renderPagePng(pdfPath, page, outPath, dpi, opts),
    extractEmbeddedImages: (pdfPath, first, last, outDir, opts) =>
      extractEmbeddedImages(pdfPath, first, last, outDir, opts),
  };
}
