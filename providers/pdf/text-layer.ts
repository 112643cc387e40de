/**
 * Does a page's native text layer deserve trust? Contract §6 `combined` takes a page's native text "when the
 * page has a usable text layer" and OCRs it otherwise. A scan has no text layer or a stray line (a stamp, a page
 * number); a PDF with a broken font encoding has plenty of characters that are not text: replacement and
 * private-use glyphs, control characters, or words torn into single letters. Pure.
 */

export interface TextLayerScore {
  /** 0..1: how much the text looks like real text in sufficient quantity. */
  score: number;
  /** `score` reaches `USABLE_SCORE` and the page holds at least the minimum of characters. */
  usable: boolean;
}

/** Page size in points; a small page (a label, a card) needs fewer characters to count. */
export interface PageAreaHint {
  width: number;
  height: number;
}

/** Non-space characters a full A4 page needs before its text layer counts. */
export const MIN_CHARS = 20;
export const USABLE_SCORE = 0.5;
const A4_AREA = 595 * 842;

const BAD_CHAR =
  /[\uFFFD\uE000-\uF8FF\u{F0000}-\u{FFFFD}\u{100000}-\u{10FFFD}\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/u;
const GOOD_CHAR = /[\p{L}\p{M}\p{N}\p{P}\p{Sc}\p{Sm}°§©®™]/u;
const WORD = /^[\p{P}\p{S}]*\p{L}[\p{L}\p{M}'’\-]*\p{L}[\p{L}\p{M}]*[\p{P}\p{S}]*$/u;
const NUMBER = /^[\p{P}\p{Sc}+\-]*\p{N}[\p{N}.,:/%\-]*[\p{P}\p{Sc}%]*$/u;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}]/u;
const SINGLE_LETTER = /^[\p{P}]*\p{L}\p{M}*[\p{P}]*$/u;
const LATIN_LETTER = /\p{Script=Latin}/u;
const LATIN_VOWEL = /[aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿœ]/i;

const clamp01 = (x: number) => Math.max(0, Math.min(1, x));

/** The same patterns, global: counted over a whole string at once (per code point, as the `u` flag reads it). */
const BAD_CHARS = new RegExp(BAD_CHAR.source, 'gu');
const GOOD_CHARS = new RegExp(GOOD_CHAR.source, 'gu');
const LATIN_LETTERS = new RegExp(LATIN_LETTER.source, 'gu');
const SURROGATE_PAIRS = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;

const count = (s: string, re: RegExp): number => s.match(re)?.length ?? 0;

/**
 * A text without its whitespace, and how many code points (characters) remain: what `[...text]` without the
 * whitespace counts, without an array of one-character strings (a page's quality was about 1 ms a page that way).
 */
export function nonSpaceChars(text: string): { chars: string; n: number } {
  const chars = text.replace(/\s+/gu, '');
  return { chars, n: chars.length - count(chars, SURROGATE_PAIRS) };
}

/** Scores a page's native text (as extracted, any layout). */
export function scoreTextLayer(text: string, pageAreaHint?: PageAreaHint): TextLayerScore {
  const { chars, n } = nonSpaceChars(text);
  const area =
    pageAreaHint && pageAreaHint.width > 0 && pageAreaHint.height > 0
      ? pageAreaHint.width * pageAreaHint.height
      : A4_AREA;
  const minChars = Math.max(5, Math.round(MIN_CHARS * Math.min(1, area / A4_AREA)));
  if (n === 0) return { score: 0, usable: false };

  // Characters that are no text at all: replacement, private use, control.
  const bad = count(chars, BAD_CHARS);
  const cleanliness = clamp01(1 - 5 * (bad / n));
  // Characters that text is made of.
  const goodShare = count(chars, GOOD_CHARS) / n;
  const symbols = clamp01((goodShare - 0.5) / 0.4);

  // Tokens that are words (two letters or more), numbers or CJK runs.
  const tokens = text.split(/\s+/u).filter(Boolean);
  const valid = tokens.filter((t) => WORD.test(t) || NUMBER.test(t) || CJK.test(t)).length;
  const words = clamp01(valid / tokens.length / 0.6);
  // Words torn into single letters ("T h i s  i s"): a broken encoding or letter-spaced glyph runs.
  const singles = tokens.filter((t) => SINGLE_LETTER.test(t) && !CJK.test(t)).length / tokens.length;
  const torn = singles > 0.3 ? clamp01(1 - (singles - 0.3) * 2.5) : 1;
  // Latin text without vowels is a shifted or substituted encoding.
  const latin = chars.match(LATIN_LETTERS) ?? [];
  const vowelShare = latin.length > 0 ? latin.filter((c) => LATIN_VOWEL.test(c)).length / latin.length : 0.4;
  const vowels = latin.length >= 40 && vowelShare < 0.12 ? vowelShare / 0.12 : 1;

  const quantity = Math.min(1, n / minChars);
  const score = Math.round(quantity * cleanliness * symbols * words * torn * vowels * 1000) / 1000;
  return { score, usable: n >= minChars && score >= USABLE_SCORE };
}
