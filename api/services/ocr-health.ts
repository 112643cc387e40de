import type { ApiEngines } from '../engines';
import type { Check } from './health';

/**
 * The OCR engine as `/api/health` shows it: tesseract's installed languages (what `ocr_language` may ask for; any
 * other is a 422 `language_not_installed`), or unavailable when tesseract cannot be run.
 */
export async function ocrHealth(installedLanguages: ApiEngines['ocrLanguages']): Promise<Record<string, Check>> {
  try {
    const languages = [...(await installedLanguages())].sort();
    return { ocr: { status: 'ok', engine: 'tesseract', languages } };
  } catch {
    return { ocr: { status: 'unavailable', engine: 'tesseract', message: 'tesseract cannot be run: OCR jobs fail' } };
  }
}
