import { pageQuality } from '../domain/pdf/markdown/quality';
import { pageDims } from '../domain/pdf/markdown/pages';
import { scoreTextLayer } from '../domain/pdf/text-layer';
import type { PageResult } from './pdf-types';

/** OCR confidence under which `combined` asks the vision model (when one is configured). */
export const LOW_CONFIDENCE = 60;

/** How `combined` reads a page other than by its text layer; each is called only when the rule needs it. */
export interface CombinedReaders {
  /** Whether the page paints an image (something to OCR). */
  paintsImage(): Promise<boolean>;
  ocr(): Promise<PageResult>;
  /** The vision model's reading; undefined when no model is configured. */
  vision?: () => Promise<PageResult>;
}

/**
 * `combined` per page: the text layer when it is usable; else, on a page that paints an image, the OCR, unless the
 * text layer scores better than the OCR (`pageQuality`); the vision model when the OCR's confidence is low and one is
 * configured. The page's `quality.reason` says which and why.
 */
export async function combinedPage(nat: PageResult, read: CombinedReaders): Promise<PageResult> {
  const nq = nat.quality ?? pageQuality(nat.text, pageDims(nat.layout));
  const layer = scoreTextLayer(nat.text);
  const why = (r: PageResult, reason: string): PageResult => ({ ...r, quality: { ...(r.quality ?? nq), reason } });
  if (layer.usable) return why(nat, `text layer usable (score ${layer.score})`);
  // A page that paints no image has nothing to OCR: its text layer is the answer, however short.
  if (!(await read.paintsImage()))
    return why(nat, `text layer not usable (score ${layer.score}), but the page paints no image to OCR`);
  const o = await read.ocr();
  const oq = o.quality!;
  if (nat.text.trim() && nq.score >= oq.score)
    return why(nat, `text layer (quality ${nq.score}) reads at least as well as OCR (quality ${oq.score})`);
  if ((o.confidence ?? 0) < LOW_CONFIDENCE && read.vision) {
    const v = await read.vision();
    return why(
      { ...v, quality: pageQuality(v.text, pageDims(o.layout)) },
      `text layer not usable (score ${layer.score}); OCR confidence ${o.confidence} below ${LOW_CONFIDENCE}: vision model`,
    );
  }
  return why(o, `text layer not usable (score ${layer.score}); OCR quality ${oq.score} above the layer's ${nq.score}`);
}
