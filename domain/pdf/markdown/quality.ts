/**
 * How far a page's text can be trusted, 0..1, with the signals behind the score: the text-layer score of
 * `text-layer.ts` (replacement, private-use and control characters, torn words, vowel-less Latin), the garbage
 * ratio, the share of tokens shaped like words (a dictionary-free stand-in for a dictionary hit rate: letters only,
 * one case pattern, a vowel in Latin words, no run of five consonants), glyphs per area (a page with a handful of
 * characters or with text printed over itself), and for OCR the engine's mean word confidence. Pure.
 */
import { nonSpaceChars, scoreTextLayer } from '../text-layer';

export interface PageQuality {
  score: number;
  signals: {
    chars: number;
    garbage_ratio: number;
    word_shape_rate: number;
    text_layer_score: number;
    /** Non-space characters per 1000 pt² of page. */
    glyphs_per_area?: number;
    /** OCR mean word confidence, 0..1. */
    ocr_confidence?: number;
  };
  /** For `combined`: why this page's text came from where it came from. */
  reason?: string;
}

const BAD = /[\uFFFD\uE000-\uF8FF\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/u;
const BADS = new RegExp(BAD.source, 'gu');
const WORDISH = /^[\p{P}]*(\p{Lu}?[\p{Ll}\p{M}'’-]+|[\p{Lu}\p{M}'’-]+)[\p{P}]*$/u;
const LATIN = /^[\p{Script=Latin}\p{M}'’-]+$/u;
const VOWEL = /[aeiouyäöüàáâãåæèéêëìíîïòóôõøùúûýœ]/i;
const CONSONANT_RUN = /[bcdfghjklmnpqrstvwxz]{6,}/i;

const clamp01 = (x: number) => Math.max(0, Math.min(1, x));
const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** A token: 0 not a letter token (fewer than two letters), 1 shaped like a word, 2 not. */
function tokenShape(t: string): number {
  if (!/\p{L}.*\p{L}/u.test(t)) return 0;
  const core = t.replace(/^[\p{P}\p{S}]+|[\p{P}\p{S}]+$/gu, '');
  if (!WORDISH.test(core)) return 2;
  if (LATIN.test(core) && core.length >= 3 && (!VOWEL.test(core) || CONSONANT_RUN.test(core))) return 2;
  return core.length <= 30 ? 1 : 2;
}

/** Tokens' shapes remembered (a page repeats its words; the Unicode patterns cost more than a lookup); bounded. */
const shapes = new Map<string, number>();

/** Share of letter tokens (two letters or more) that are shaped like words. */
export function wordShapeRate(text: string): number {
  let letterTokens = 0;
  let good = 0;
  for (const t of text.split(/\s+/u)) {
    let k = shapes.get(t);
    if (k === undefined) {
      k = tokenShape(t);
      if (shapes.size >= 50_000) shapes.clear();
      shapes.set(t, k);
    }
    if (k === 0) continue;
    letterTokens++;
    if (k === 1) good++;
  }
  return letterTokens === 0 ? 0 : good / letterTokens;
}

export function pageQuality(
  text: string,
  opts: { width?: number; height?: number; ocrConfidence?: number } = {},
): PageQuality {
  const { chars, n } = nonSpaceChars(text);
  const garbage = n ? (chars.match(BADS)?.length ?? 0) / n : 0;
  const layer = scoreTextLayer(
    text,
    opts.width && opts.height ? { width: opts.width, height: opts.height } : undefined,
  );
  const shape = wordShapeRate(text);
  const area = opts.width && opts.height ? opts.width * opts.height : 0;
  const density = area > 0 ? (1000 * n) / area : undefined;
  let score = layer.score * clamp01(shape / 0.75);
  // Text printed over itself (fake bold, duplicated layers) packs far more glyphs than a page can hold.
  if (density !== undefined && density > 40) score *= 0.5;
  if (opts.ocrConfidence !== undefined) score *= clamp01(opts.ocrConfidence / 90);
  return {
    score: r3(score),
    signals: {
      chars: n,
      garbage_ratio: r3(garbage),
      word_shape_rate: r3(shape),
      text_layer_score: layer.score,
      ...(density !== undefined ? { glyphs_per_area: r3(density) } : {}),
      ...(opts.ocrConfidence !== undefined ? { ocr_confidence: r3(opts.ocrConfidence / 100) } : {}),
    },
  };
}
