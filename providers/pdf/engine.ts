/**
 * The real PDF engine (domain/engines/pdf.ts `PdfEngine`): the text layer from the configured text engine, the
 * layouts from poppler and the content streams, images through poppler. The methods are the adapters' own functions,
 * so a call goes straight to the adapter.
 */
import type { PdfEngine } from '../../domain/engines/pdf';
import { markdownPageLayouts } from './markdown-layouts';
import { pagesWithImages } from './poppler';
import { extractEmbeddedImages, renderPagePng, renderPages } from './render';
import { textLayer, type PdfTextEngine } from './text-engine';

/** The real engine: the text layer from `textEngine` (`PDF_TEXT_ENGINE`), images through poppler. */
export function createPdfEngine(textEngine: PdfTextEngine): PdfEngine {
  return {
    ...textLayer(textEngine),
    readPageLayouts: markdownPageLayouts,
    pagesWithImages,
    renderPages,
    renderPagePng,
    extractEmbeddedImages,
  };
}
