/** Character accuracy of recognised text (OCR tests and the PDF benchmark). Pure. */

/** Runs of whitespace as one space, no blank edges. */
export const normaliseSpace = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** Levenshtein distance, two rows. */
export function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

/** Character accuracy: 1 − Levenshtein / expected length, after whitespace normalisation. */
export function accuracy(expected: string, actual: string): number {
  const e = normaliseSpace(expected);
  return 1 - levenshtein(e, normaliseSpace(actual)) / e.length;
}
