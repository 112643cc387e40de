import { loadTemplate, TEMPLATES_DIR } from '../core/templates';

/**
 * The source of the named template a result-cache key holds (image OCR, audio and video: no target language), for
 * the parameters' `template`: undefined when none is named, null when the named one does not exist (the job answers
 * its 404 `TEMPLATE_NOT_FOUND`; the API then hands the request to the job).
 */
export async function keyTemplateSource(p: Record<string, unknown>): Promise<string | null | undefined> {
  const template = typeof p.template === 'string' && p.template ? p.template : undefined;
  if (!template) return undefined;
  return (await loadTemplate(TEMPLATES_DIR, template, undefined))?.source ?? null;
}
