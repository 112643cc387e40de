import fs from 'node:fs';
import type { ActivityDeps } from '../activities/deps';
import { libreOfficePath, mediaSlots, type Config } from '../core/config/config';
import { createFfmpegMedia } from '../providers/media/engine';
import { LibreOfficeEngine } from '../providers/office/libreoffice';
import { createTesseractOcr } from '../providers/ocr/engine';
import { createPdfEngine } from '../providers/pdf/engine';

/** LibreOffice processes kept running at most: each holds 150-250 MB once it has converted a document. */
const MAX_OFFICE_SLOTS = 2;

/**
 * The real engines the activities use (the speech engine is built with the workers, which close it; the office
 * engine is closed by them too). LibreOffice starts on the first conversion that needs it, one process per slot.
 */
export function createEngines(config: Config): Pick<ActivityDeps, 'pdf' | 'ocr' | 'media' | 'office'> {
  const soffice = libreOfficePath(config);
  return {
    pdf: createPdfEngine(config.PDF_TEXT_ENGINE),
    ocr: createTesseractOcr(),
    media: createFfmpegMedia(),
    office: fs.existsSync(soffice)
      ? new LibreOfficeEngine({ sofficePath: soffice, slots: Math.min(MAX_OFFICE_SLOTS, mediaSlots(config)) })
      : null,
  };
}
