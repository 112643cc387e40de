/**
 * The OCR engine behind one interface: the languages a request may use, and the text of one image. The worker
 * builds the real one (providers/ocr/engine.ts `createTesseractOcr`: the tesseract CLI, one process per image);
 * activity tests inject an in-memory one.
 */
import type { OcrLayout } from '../pdf/markdown/ocr-layout';

export interface OcrCallOptions {
  /** Engine language codes, as `languagesFor` answers them. */
  languages: string[];
  /** Resolution of the image when its header carries none (default 300). */
  dpi?: number;
  /** Aborts the call: the engine process is killed, and the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** What the engine read in one image. */
export interface OcrResult {
  text: string;
  /** Mean word confidence, 0..100 (0 when no word was found). */
  confidence: number;
  words: number;
  /** The words with their boxes and tesseract's blocks and paragraphs (for Markdown); absent from older results. */
  layout?: OcrLayout;
}

/** One image's text, its mean word confidence and the degrees (clockwise) it was turned before reading (0: upright). */
export type OcrPage = OcrResult & { rotation: number };

/**
 * Failures a client may see are `AppError`s (`UNPROCESSABLE_INPUT` for a language that is not installed or an image
 * the engine cannot read), which the activity error boundary fails non-retryable; anything else is retried.
 */
export interface OcrEngine {
  /**
   * The engine languages for a request's `ocr_language` (ISO 639-1 or engine codes, `de+en`): every one asked must be
   * installed (else 422 `language_not_installed`); nothing asked: the default languages.
   */
  languagesFor(requested: string | undefined): Promise<string[]>;
  /** Reads an image's text; a page that reads badly is turned upright first when the engine sees it on its side. */
  recognize(imagePath: string, opts: OcrCallOptions): Promise<OcrPage>;
}
