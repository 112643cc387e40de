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

/** The patterns the score applies to each character and token (a test writes the score plainly with them). */
export const TEXT_LAYER_PATTERNS = {
  BAD_CHAR,
  GOOD_CHAR,
  WORD,
  NUMBER,
  CJK,
  SINGLE_LETTER,
  LATIN_LETTER,
  LATIN_VOWEL,
};

const clamp01 = (x: number) => Math.max(0, Math.min(1, x));

const SURROGATE_PAIRS = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;

const count = (s: string, re: RegExp): number => s.match(re)?.length ?? 0;

/**
 * What a token is, by the patterns below (1: a word, number or CJK run; 2: a single letter), remembered: a page
 * repeats its words, and the Unicode patterns cost more than a lookup (a page's score was about 0.2 ms). Bounded: the
 * memory is dropped when it is full. Only a cache: the answer is the patterns'.
 */
const TOKEN_MEMORY = 50_000;
const tokenKinds = new Map<string, number>();
function tokenKind(t: string): number {
  let k = tokenKinds.get(t);
  if (k === undefined) {
    const cjk = CJK.test(t);
    k = (WORD.test(t) || NUMBER.test(t) || cjk ? 1 : 0) | (SINGLE_LETTER.test(t) && !cjk ? 2 : 0);
    if (tokenKinds.size >= TOKEN_MEMORY) tokenKinds.clear();
    tokenKinds.set(t, k);
  }
  return k;
}

/**
 * A text without its whitespace, and how many code points (characters) remain: what `[...text]` without the
 * whitespace counts, without an array of one-character strings (a page's quality was about 1 ms a page that way).
 */
export function nonSpaceChars(text: string): { chars: string; n: number } {
  const chars = text.replace(/\s+/gu, '');
  return { chars, n: chars.length - count(chars, SURROGATE_PAIRS) };
}

/** What a code point is to the score: flags of the patterns above, each tested on the code point alone. */
const WS = 1;
const BAD = 2;
const GOOD = 4;
const LATIN = 8;
const VOWEL = 16;
const WHITE = /\s/u;
function flagsOf(c: string): number {
  return (
    (WHITE.test(c) ? WS : 0) |
    (BAD_CHAR.test(c) ? BAD : 0) |
    (GOOD_CHAR.test(c) ? GOOD : 0) |
    (LATIN_LETTER.test(c) ? LATIN : 0) |
    (LATIN_VOWEL.test(c) ? VOWEL : 0)
  );
}
const ASCII_FLAGS = Array.from({ length: 128 }, (_, i) => flagsOf(String.fromCharCode(i)));
/** Flags of the other code points met so far (a text uses few); bounded. */
const otherFlags = new Map<number, number>();

/**
 * The counts the score needs, in one pass over the code points (the patterns run once per distinct code point, not
 * once per character: counting with global Unicode patterns was most of a page's score): code points that are not
 * white space, and of those the bad, the good, the Latin letters and the Latin vowels. The same counts as matching
 * each pattern over the text without its white space.
 */
function charCounts(text: string): { n: number; bad: number; good: number; latin: number; vowels: number } {
  let n = 0;
  let bad = 0;
  let good = 0;
  let latin = 0;
  let vowels = 0;
  for (let i = 0; i < text.length; i++) {
    let f: number | undefined;
    const u = text.charCodeAt(i);
    if (u < 128) f = ASCII_FLAGS[u];
    else {
      const cp = text.codePointAt(i)!;
      if (cp > 0xffff) i++;
      f = otherFlags.get(cp);
      if (f === undefined) {
        f = flagsOf(String.fromCodePoint(cp));
        if (otherFlags.size >= 65_536) otherFlags.clear();
        otherFlags.set(cp, f);
      }
    }
    if (f & WS) continue;
    n++;
    if (f & BAD) bad++;
    if (f & GOOD) good++;
    if (f & LATIN) {
      latin++;
      if (f & VOWEL) vowels++;
    }
  }
  return { n, bad, good, latin, vowels };
}

/** Scores a page's native text (as extracted, any layout). */
export function scoreTextLayer(text: string, pageAreaHint?: PageAreaHint): TextLayerScore {
  const { n, bad, good, latin, vowels: vowelCount } = charCounts(text);
  const area =
    pageAreaHint && pageAreaHint.width > 0 && pageAreaHint.height > 0
      ? pageAreaHint.width * pageAreaHint.height
      : A4_AREA;
  const minChars = Math.max(5, Math.round(MIN_CHARS * Math.min(1, area / A4_AREA)));
  if (n === 0) return { score: 0, usable: false };

  // Characters that are no text at all: replacement, private use, control.
  const cleanliness = clamp01(1 - 5 * (bad / n));
  // Characters that text is made of.
  const goodShare = good / n;
  const symbols = clamp01((goodShare - 0.5) / 0.4);

  // Tokens that are words (two letters or more), numbers or CJK runs.
  const tokens = text.split(/\s+/u).filter(Boolean);
  let valid = 0;
  let single = 0;
  for (const t of tokens) {
    const k = tokenKind(t);
    valid += k & 1;
    single += k >> 1;
  }
  const words = clamp01(valid / tokens.length / 0.6);
  // Words torn into single letters ("T h i s  i s"): a broken encoding or letter-spaced glyph runs.
  const singles = single / tokens.length;
  const torn = singles > 0.3 ? clamp01(1 - (singles - 0.3) * 2.5) : 1;
  // Latin text without vowels is a shifted or substituted encoding.
  const vowelShare = latin > 0 ? vowelCount / latin : 0.4;
  const vowels = latin >= 40 && vowelShare < 0.12 ? vowelShare / 0.12 : 1;

  const quantity = Math.min(1, n / minChars);
  const score = Math.round(quantity * cleanliness * symbols * words * torn * vowels * 1000) / 1000;
  return { score, usable: n >= minChars && score >= USABLE_SCORE };
}
