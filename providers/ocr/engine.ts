/** The real OCR engine (domain/engines/ocr.ts `OcrEngine`): the tesseract CLI, one process per image. */
import type { OcrEngine } from '../../domain/engines/ocr';
import { ocrLanguagesFor, ocrOriented } from './tesseract';

/** The real engine: the tesseract CLI (the adapter's own functions: a call goes straight to it). */
export function createTesseractOcr(): OcrEngine {
  return { languagesFor: ocrLanguagesFor, recognize: ocrOriented };
}
