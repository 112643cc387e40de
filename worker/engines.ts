import type { ActivityDeps } from '../activities/deps';
import type { Config } from '../core/config/config';
import { createFfmpegMedia } from '../providers/media/engine';
import { createTesseractOcr } from '../providers/ocr/engine';
import { createPdfEngine } from '../providers/pdf/engine';

/** The real engines the activities use (the speech engine is built with the workers, which close it). */
export function createEngines(config: Config): Pick<ActivityDeps, 'pdf' | 'ocr' | 'media'> {
  return { pdf: createPdfEngine(config.PDF_TEXT_ENGINE), ocr: createTesseractOcr(), media: createFfmpegMedia() };
}
