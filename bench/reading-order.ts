/**
 * The reading-order score of the PDF Markdown bench, and the text normalisation its scores share.
 *
 * Truth: the words of `pdftotext -raw`, which writes a page's text in content-stream order. TeX (every paper here is
 * LaTeX) ships a page's material in the order it was set: the title block, then each column top to bottom, floats
 * where the output routine placed them and footnotes after their column, so the stream order is the author's order
 * and no layout analysis (ours, pymupdf4llm's or pdftotext's) is in the truth. The pages' running headers and footers
 * are taken out (they sit mid-sentence in the stream), and so is every run that holds a word hyphenated across a line
 * end (outputs differ on joining it, which is no matter of order).
 *
 * Score: the reference words cut into consecutive 8-word runs; each run is looked up (whole, words contiguous) in the
 * normalised output; the share of runs that form the longest chain found in increasing positions is the score (a run
 * missing or read out of place counts against it, a run misplaced early does not hide all the runs after it).
 */
import { execFileSync } from 'node:child_process';

// NFKC: a ligature character ("ﬁ", which pdftotext passes on) and its letters ("fi") are the same text.
export const norm = (t: string) =>
  t
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[*_#`|>]/g, ' ')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();

/**
 * The pages' running headers and footers are no part of a sentence: pdftotext -raw writes them where the content
 * stream has them, in the middle of a sentence that runs on to the next page, or glued to a sentence (no capital after
 * "application." in "application. 1 Shared MIME-info Database 1.3. Language…", so no sentence break). A line among
 * the first two and the last two of a page is taken out of the reference text when it is a bare page number, when it
 * stands there (numbers aside) on 40 % of the pages, or when it starts or ends with a number that runs with the page
 * (the same text and the same difference between its number and the page's) on three pages or more: Texinfo's
 * "Chapter 4: Function reference 12". The rules under test find furniture by their own (`document.ts`).
 */
export function withoutRunningLines(raw: string): string {
  const pages = raw.split('\f').map((p) => p.split('\n'));
  const key = (l: string) => l.trim().toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ');
  const edges = (lines: string[]) => {
    const idx = lines.map((l, i) => [l, i] as const).filter(([l]) => l.trim() !== '');
    return new Set([...idx.slice(0, 2), ...idx.slice(-2)].map(([, i]) => i));
  };
  const synced = (l: string, p: number) =>
    [...l.trim().matchAll(/^\d+|\d+$/g)].map((m) => `${key(l)}@${Number(m[0]) - p}`);
  const count = new Map<string, number>();
  pages.forEach((lines, p) => {
    const keys = new Set([...edges(lines)].flatMap((i) => [key(lines[i]), ...synced(lines[i], p)]));
    for (const k of keys) count.set(k, (count.get(k) ?? 0) + 1);
  });
  const many = Math.max(2, Math.ceil(0.4 * pages.length));
  const running = (l: string, p: number) =>
    /^(\d{1,4}|[ivxlc]{1,6})$/i.test(l.trim()) ||
    (/\p{L}/u.test(l) && ((count.get(key(l)) ?? 0) >= many || synced(l, p).some((k) => (count.get(k) ?? 0) >= 3)));
  return pages
    .map((lines, p) => {
      const e = edges(lines);
      return lines.filter((l, i) => !(e.has(i) && running(l, p))).join('\n');
    })
    .join('\f');
}

const RUN = 8;

/** The reference runs of the first `pages` pages of `pdf`, each 8 normalised words. */
export function referenceRuns(pdf: string, pages: number): string[] {
  const raw = withoutRunningLines(
    execFileSync('pdftotext', ['-raw', '-l', String(pages), '-enc', 'UTF-8', pdf, '-']).toString(),
  );
  const words = raw
    .replace(/\f/g, '\n')
    .replace(/(\p{L})-\n(?=\p{L})/gu, '$1\u0000')
    .split(/\s+/)
    .flatMap((w) => (w.includes('\u0000') ? ['\u0000'] : norm(w).split(' ')))
    .filter(Boolean);
  const runs: string[] = [];
  for (let i = 0; i + RUN <= words.length; i += RUN) {
    const run = words.slice(i, i + RUN);
    if (!run.includes('\u0000')) runs.push(run.join(' '));
  }
  return runs;
}

/** Length of the longest strictly increasing subsequence. */
function longestIncreasing(v: number[]): number {
  const tails: number[] = [];
  for (const x of v) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (tails[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    tails[lo] = x;
  }
  return tails.length;
}

/** Share of `runs` found in order in `text` (NaN without runs). */
export function orderShare(text: string, runs: string[]): number {
  if (!runs.length) return NaN;
  const t = ` ${norm(text)} `;
  const positions = runs.map((r) => t.indexOf(` ${r} `)).filter((p) => p >= 0);
  return longestIncreasing(positions) / runs.length;
}
