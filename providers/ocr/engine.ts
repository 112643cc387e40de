/** The real OCR engine (domain/engines/ocr.ts `OcrEngine`): the tesseract CLI, one process per image. */
import type { OcrEngine } from '../../domain/engines/ocr';
import { ocrLanguagesFor, ocrOriented } from './tesseract';

/** The real engine: the tesseract CLI. */
export function createTesseractOcr(): OcrEngine {
  return {
    languagesFor: (requested) => ocrLanguagesFor(requested),
    recognize: (imagePath, opts) => ocrOriented(imagePath, opts),
  };
}
