/** Word error rate of a transcript (speech tests). Pure. */
import { levenshtein } from './accuracy';

/** Lower-case words without punctuation (Unicode-aware: umlauts and ß stay). */
export const words = (s: string): string[] =>
  s
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s'-]/gu, ' ')
    .split(/\s+/)
    .filter(Boolean);

/** Word error rate: word-level edit distance (substitutions, insertions, deletions) / words expected. */
export function wordErrorRate(expected: string, actual: string): number {
  const ref = words(expected);
  const hyp = words(actual);
  // One private-use character per distinct word turns the word sequences into strings for `levenshtein`.
  const codes = new Map<string, string>();
  const encode = (ws: string[]) =>
    ws
      .map((w) => {
        if (!codes.has(w)) codes.set(w, String.fromCharCode(0xe000 + codes.size));
        return codes.get(w)!;
      })
      .join('');
  return levenshtein(encode(ref), encode(hyp)) / Math.max(1, ref.length);
}
