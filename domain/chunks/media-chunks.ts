/**
 * A transcript cut into chunks for retrieval (contract §14): its words (a segment's timed words, or its text's words
 * with times spread over the segment by their place in it) read into sentences, cut at sentence ends and, with
 * speakers, at every change of speaker; the sentences packed in order into chunks of at most `maxTokens`. A sentence
 * over the budget is cut between words, at the longest pause near the end of what fits. No cut falls inside a word.
 * `overlapTokens` of the chunk before (whole sentences, the same speaker's) open the next. Pure.
 */
import type { AudioSegment } from '../../core/results/result-shapes';
import { tokenCounter, type TokenCounter, type TokenizerName } from './tokens';

export interface MediaChunkOptions {
  maxTokens: number;
  overlapTokens: number;
  tokenizer: TokenizerName;
  /** Speaker labels on (diarize): a change of speaker is a boundary. */
  speakers: boolean;
}

export interface MediaChunk {
  index: number;
  text: string;
  tokens: number;
  start: number;
  end: number;
  speakers: string[];
  segments: number[];
}

interface Word {
  text: string;
  start: number;
  end: number;
  segment: number;
  speaker?: string;
}

/** A run of words: a sentence, or a part of one over the budget. */
interface Run {
  from: number;
  to: number;
  tokens: number;
}

const SENTENCE_END = /[.!?…。！？]["'”’)\]]*$/u;
/** A pause this long between two words is a good place for a cut inside a sentence (seconds). */
const PAUSE = 1;

/** The transcript's words in order, each with its times, segment and speaker. */
function wordsOf(segments: readonly AudioSegment[]): Word[] {
  const out: Word[] = [];
  segments.forEach((s, i) => {
    const timed = s.words?.filter((w) => w.word.trim() !== '');
    if (timed?.length) {
      for (const w of timed)
        out.push({ text: w.word.trim(), start: w.start, end: w.end, segment: i, speaker: w.speaker ?? s.speaker });
      return;
    }
    // No word timings: the segment's words, timed by where they stand in its text.
    const text = s.text;
    const span = Math.max(0, s.end - s.start);
    const at = (k: number) => s.start + (text.length ? (span * k) / text.length : 0);
    for (const m of text.matchAll(/\S+/g))
      out.push({ text: m[0], start: at(m.index), end: at(m.index + m[0].length), segment: i, speaker: s.speaker });
  });
  return out;
}

const joined = (words: readonly Word[], from: number, to: number) =>
  words
    .slice(from, to)
    .map((w) => w.text)
    .join(' ');

/** A word over the budget alone (a long number, a run of letters) as parts that fit, each with the word's times. */
function fitting(w: Word, max: number, count: TokenCounter): Word[] {
  if (w.text.length <= max && count.count(w.text) <= max) return [w];
  const parts: Word[] = [];
  let rest = w.text;
  while (rest) {
    let size = Math.min(rest.length, max);
    while (size > 1 && count.count(rest.slice(0, size)) > max) size = Math.ceil(size / 2);
    parts.push({ ...w, text: rest.slice(0, size) });
    rest = rest.slice(size);
  }
  return parts;
}

/**
 * `[from, to)` cut into runs within `max` tokens (each word fits alone: {@link fitting}): as many words as fit, the
 * cut moved back to the longest pause of at least PAUSE in the run's second half when there is one.
 */
function splitRun(words: readonly Word[], from: number, to: number, max: number, count: TokenCounter): Run[] {
  const runs: Run[] = [];
  let at = from;
  while (at < to) {
    // Words are added on an estimate (each one's own count with its space); near the budget, the text is counted.
    let end = at + 1;
    let estimate = count.count(words[at].text);
    while (end < to) {
      const next = estimate + count.count(' ' + words[end].text);
      if (next > max - 8 && count.count(joined(words, at, end + 1)) > max) break;
      estimate = next;
      end++;
    }
    if (end < to) {
      let best = -1;
      let gap = PAUSE;
      for (let k = Math.ceil((at + end) / 2); k < end; k++) {
        const g = words[k].start - words[k - 1].end;
        if (g >= gap) [best, gap] = [k, g];
      }
      if (best > at) end = best;
    }
    let tokens = count.count(joined(words, at, end));
    // The estimate may miss what the spaces between words add: the run gives back words until it fits.
    while (tokens > max && end > at + 1) tokens = count.count(joined(words, at, --end));
    runs.push({ from: at, to: end, tokens });
    at = end;
  }
  return runs;
}

/** The sentences of the words: cut after a sentence's end mark, and before a change of speaker when asked. */
function sentencesOf(words: readonly Word[], opts: MediaChunkOptions, count: TokenCounter): Run[] {
  const max = opts.maxTokens;
  const runs: Run[] = [];
  let from = 0;
  for (let i = 0; i < words.length; i++) {
    const last = i + 1 === words.length;
    const turn = opts.speakers && !last && words[i + 1].speaker !== words[i].speaker;
    if (!last && !turn && !SENTENCE_END.test(words[i].text)) continue;
    const tokens = count.count(joined(words, from, i + 1));
    if (tokens <= max) runs.push({ from, to: i + 1, tokens });
    else runs.push(...splitRun(words, from, i + 1, max, count));
    from = i + 1;
  }
  return runs;
}

/** The transcript's chunks, each within `maxTokens`. */
export function chunkTranscript(segments: readonly AudioSegment[], opts: MediaChunkOptions): MediaChunk[] {
  const count = tokenCounter(opts.tokenizer);
  const max = Math.max(1, opts.maxTokens);
  const overlap = Math.min(Math.max(0, opts.overlapTokens), max - 1);
  const words = wordsOf(segments).flatMap((w) => fitting(w, max, count));
  const runs = sentencesOf(words, { ...opts, maxTokens: max }, count);
  const speakerOf = (r: Run) => words[r.from].speaker;
  const chunks: MediaChunk[] = [];
  let at = 0;
  while (at < runs.length) {
    let from = at;
    if (overlap > 0 && chunks.length) {
      let sum = 0;
      while (
        from > 0 &&
        (!opts.speakers || speakerOf(runs[from - 1]) === speakerOf(runs[at])) &&
        sum + runs[from - 1].tokens + 1 <= overlap
      ) {
        from--;
        sum += runs[from].tokens + 1;
      }
    }
    let to = at + 1;
    let estimate = runs[from].tokens;
    for (let k = from + 1; k < at + 1; k++) estimate += runs[k].tokens + 1;
    while (to < runs.length) {
      if (opts.speakers && speakerOf(runs[to]) !== speakerOf(runs[to - 1])) break;
      const next = estimate + runs[to].tokens + 1;
      if (next > max - 4 && count.count(joined(words, runs[from].from, runs[to].to)) > max) break;
      estimate = next;
      to++;
    }
    let tokens = count.count(joined(words, runs[from].from, runs[to - 1].to));
    while (tokens > max && from < at) tokens = count.count(joined(words, runs[++from].from, runs[to - 1].to));
    while (tokens > max && to > at + 1) tokens = count.count(joined(words, runs[from].from, runs[--to - 1].to));
    const first = runs[from].from;
    const last = runs[to - 1].to;
    const covered = words.slice(first, last);
    chunks.push({
      index: chunks.length,
      text: joined(words, first, last),
      tokens,
      start: covered[0].start,
      end: covered[covered.length - 1].end,
      speakers: [...new Set(covered.map((w) => w.speaker).filter((s): s is string => s !== undefined))],
      segments: [...new Set(covered.map((w) => w.segment))],
    });
    at = to;
  }
  return chunks;
}
