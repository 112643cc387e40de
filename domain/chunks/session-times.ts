/**
 * The times of a session's chunks (contract §14): a chunk of the session's Markdown whose words are the transcript's
 * (a template that embeds `{{text}}`, or quotes the recording at length) is timed from the first of those words'
 * times to the last's; any other chunk gets none, as no time is ever guessed. Pure.
 */

/** A segment of a transcript with its times (seconds) and, where the speech engine timed them, its words. */
export interface TimedSegment {
  start: number;
  end: number;
  text: string;
  words?: { word: string; start: number; end: number }[];
}

/** A word of the transcript as matching reads it (lower case, letters and digits only) and when it was said. */
export interface TimedToken {
  token: string;
  start: number;
  end: number;
}

/** The words matched at each edge of a chunk: its first and its last this many. */
export const EDGE_WORDS = 6;
/** A chunk of fewer words is never timed: two or three common words are found in any talk. */
export const MIN_WORDS = 4;

/** A text's words as matching reads them: runs of letters and digits, lower case. */
export const tokensOf = (s: string): string[] =>
  s
    .normalize('NFKC')
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? [];

const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const noSpace = (s: string) => s.replace(/\s+/g, '');

/**
 * The segments of a transcription's result, kept when they are that transcript's: each well formed (times, text,
 * words' times where given), and together the same characters as `text`, spacing aside. Null otherwise: a text
 * after a template or a translation holds other words than the ones the segments time, and gets no times.
 */
export function transcriptSegments(text: string, raw: unknown): TimedSegment[] | null {
  if (!Array.isArray(raw) || raw.length === 0) return null;
  const out: TimedSegment[] = [];
  for (const s of raw as Record<string, unknown>[]) {
    if (!s || typeof s !== 'object' || !num(s.start) || !num(s.end) || typeof s.text !== 'string') return null;
    const seg: TimedSegment = { start: s.start, end: s.end, text: s.text };
    if (Array.isArray(s.words)) {
      const words = s.words as Record<string, unknown>[];
      if (!words.every((w) => w && typeof w.word === 'string' && num(w.start) && num(w.end))) return null;
      seg.words = words.map((w) => ({ word: w.word as string, start: w.start as number, end: w.end as number }));
    }
    out.push(seg);
  }
  const joined = noSpace(out.map((s) => s.text).join(''));
  return joined && joined === noSpace(text) ? out : null;
}

/**
 * The transcript's words in order with their times: a segment's timed words (a word of several runs, such as
 * `open-source`, gives each the word's times), or its text's words timed by where they stand in the segment.
 */
export function transcriptTokens(segments: readonly TimedSegment[]): TimedToken[] {
  const out: TimedToken[] = [];
  for (const s of segments) {
    const words = s.words?.filter((w) => tokensOf(w.word).length);
    if (words?.length) {
      for (const w of words) for (const token of tokensOf(w.word)) out.push({ token, start: w.start, end: w.end });
      continue;
    }
    const text = s.text.normalize('NFKC').toLowerCase();
    const span = Math.max(0, s.end - s.start);
    const at = (k: number) => s.start + (text.length ? (span * k) / text.length : 0);
    for (const m of text.matchAll(/[\p{L}\p{N}]+/gu))
      out.push({ token: m[0], start: at(m.index), end: at(m.index + m[0].length) });
  }
  return out;
}

/** Where `run` stands as contiguous words of `words`, from `from` on; -1 when it does not. */
function findRun(words: readonly TimedToken[], run: readonly string[], from: number): number {
  outer: for (let i = Math.max(0, from); i + run.length <= words.length; i++) {
    for (let k = 0; k < run.length; k++) if (words[i + k]!.token !== run[k]) continue outer;
    return i;
  }
  return -1;
}

const ms = (s: number) => Math.round(s * 1000) / 1000;

/**
 * When a chunk's words were said: its first and last {@link EDGE_WORDS} words found in order as contiguous runs of
 * the transcript, no more than twice the chunk's words apart and no less than half (a chunk of at most twice that
 * many words: all of them as one run), timed from the first matched word's start to the last's end. Null when they
 * are not found, or the chunk has fewer than {@link MIN_WORDS} words.
 */
export function chunkTimes(text: string, words: readonly TimedToken[]): { start: number; end: number } | null {
  const c = tokensOf(text);
  const n = c.length;
  if (n < MIN_WORDS || !words.length) return null;
  const timed = (first: number, last: number) => ({ start: ms(words[first]!.start), end: ms(words[last]!.end) });
  if (n <= 2 * EDGE_WORDS) {
    const i = findRun(words, c, 0);
    return i < 0 ? null : timed(i, i + n - 1);
  }
  const head = c.slice(0, EDGE_WORDS);
  const tail = c.slice(n - EDGE_WORDS);
  for (let i = findRun(words, head, 0); i >= 0; i = findRun(words, head, i + 1)) {
    // The first tail past this head that is not too far: a nearer head further on is tried only when there is none.
    for (let j = findRun(words, tail, i + EDGE_WORDS); j >= 0; j = findRun(words, tail, j + 1)) {
      const spanned = j + EDGE_WORDS - i;
      if (spanned > 2 * n) break;
      if (spanned * 2 >= n) return timed(i, j + EDGE_WORDS - 1);
    }
  }
  return null;
}

/** Each chunk with `start` and `end` (seconds) when its words are the transcript's; the others as they are. */
export function timeSessionChunks<C extends { text: string }>(
  chunks: readonly C[],
  segments: readonly TimedSegment[] | null,
): (C & { start?: number; end?: number })[] {
  const words = segments ? transcriptTokens(segments) : [];
  return chunks.map((c) => {
    const t = chunkTimes(c.text, words);
    return t ? { ...c, ...t } : c;
  });
}
