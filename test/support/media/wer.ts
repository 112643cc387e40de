/** Word error rate of a transcript (speech tests). Pure. */
import { levenshtein } from '../documents/accuracy';

/** Lower-case words without punctuation (Unicode-aware: umlauts and ß stay). */
const words = (s: string): string[] =>
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

/**
 * Words of `expected` that `actual` drops: the deletions of a minimal word alignment (substitutions, where a word
 * was heard differently, and insertions do not count). Answers the count and the share of the expected words.
 */
export function droppedWords(expected: string, actual: string): { count: number; share: number } {
  const ref = words(expected);
  const hyp = words(actual);
  // cost[i][j]: edits aligning ref[i..] with hyp[j..]; ties prefer a substitution over a deletion.
  const cost = Array.from({ length: ref.length + 1 }, () => new Array<number>(hyp.length + 1).fill(0));
  for (let i = ref.length; i >= 0; i--) {
    for (let j = hyp.length; j >= 0; j--) {
      if (i === ref.length) cost[i][j] = hyp.length - j;
      else if (j === hyp.length) cost[i][j] = ref.length - i;
      else
        cost[i][j] = Math.min(cost[i + 1][j + 1] + (ref[i] === hyp[j] ? 0 : 1), cost[i + 1][j] + 1, cost[i][j + 1] + 1);
    }
  }
  let count = 0;
  for (let i = 0, j = 0; i < ref.length;) {
    if (j < hyp.length && cost[i][j] === cost[i + 1][j + 1] + (ref[i] === hyp[j] ? 0 : 1)) (i++, j++);
    else if (cost[i][j] === cost[i + 1][j] + 1) (count++, i++);
    else j++;
  }
  return { count, share: count / Math.max(1, ref.length) };
}
