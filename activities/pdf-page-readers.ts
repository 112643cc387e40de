import fs from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import type { Scratch } from '../core/stores/scratch';
import { pageQuality } from '../domain/pdf/markdown/quality';
import { ocrPageLayout } from '../domain/pdf/markdown/ocr-layout';
import type { LlmUsage } from '../domain/engines/llm';
import { imagePart } from '../providers/llm';
import type { ActivityDeps } from './deps';
import { jobModel } from './model-journal';
import { pageDims } from '../domain/pdf/markdown/pages';
import type { PageResult } from './pdf-types';

/**
 * How a PDF page is read other than by its text layer (domain/pdf/markdown/pages.ts `nativePage`, text read by the
 * caller): rendered and recognised by tesseract (`ocrPage`), or rendered and transcribed by the vision model
 * (`visionPage`). `llm` is the model that reads images, or null.
 */
export function createPageReaders(deps: {
  store: ActivityDeps['store'];
  config: ActivityDeps['config'];
  pdf: ActivityDeps['pdf'];
  ocr: ActivityDeps['ocr'];
  llm: ActivityDeps['llm'] | null;
  scratch: Scratch;
}) {
  const { store, config, pdf, ocr, llm, scratch } = deps;

  /** One page rendered and recognised (tens of seconds on a busy machine: `extractPdfPages` heartbeats throughout). */
  async function ocrPage(
    pdfPath: string,
    page: number,
    languages: string[],
    signal: AbortSignal,
    markdown = false,
  ): Promise<PageResult> {
    return scratch.withDir('ocr-', async (dir) => {
      const [rendered] = await pdf.renderPages(pdfPath, [page], dir, { signal, maxPixels: config.MAX_IMAGE_PIXELS });
      const r = await ocr.recognize(rendered.path, { languages, signal });
      const layout = markdown && r.layout ? ocrPageLayout(page, r.layout) : undefined;
      return {
        page,
        text: r.text,
        method: 'local_ocr',
        confidence: Math.round(r.confidence),
        ...(r.rotation ? { rotation: r.rotation } : {}),
        ...(layout ? { layout } : {}),
        quality: pageQuality(r.text, { ...pageDims(layout), ocrConfidence: r.words > 0 ? r.confidence : 0 }),
      };
    });
  }

  async function visionPage(
    jobId: string,
    pdfPath: string,
    page: number,
    signal: AbortSignal,
    usages: LlmUsage[],
  ): Promise<PageResult> {
    const model = jobModel(llm, store, jobId);
    if (!model)
      throw ApplicationFailure.nonRetryable(
        'vision_llm needs a language model: set LLM_BASE_URL, LLM_API_KEY and LLM_MODEL.',
        'PROVIDER_NOT_CONFIGURED',
        {},
      );
    return scratch.withDir('vision-', async (dir) => {
      const png = await pdf.renderPagePng(pdfPath, page, path.join(dir, `p${page}.png`), 150, {
        signal,
        maxPixels: config.MAX_IMAGE_PIXELS,
      });
      const r = await model.chatText({
        purpose: 'vision_ocr',
        vision: true,
        signal,
        system: 'Transcribe all text of this document page in reading order, as Markdown. Answer with the text only.',
        user: [{ type: 'text', text: `Page ${page}` }, imagePart(await fs.readFile(png), 'image/png')],
      });
      usages.push(r.usage);
      return { page, text: r.text.trim(), method: 'vision_llm' };
    });
  }

  return { ocrPage, visionPage };
}
