/**
 * Subtitles from a timed transcript (contract §9): SRT or WebVTT text, cues timed from the words. Pure: no I/O.
 *
 * Cues follow the usual broadcast rules: at most two lines of at most 42 characters and at most 7 s on screen; a cue
 * ends at a sentence end and at a pause in the speech, and never spans one. Lines break at the word boundary that
 * balances them best. A segment without word timings (a provider that gives none) is cut into words whose times are
 * shared out by their length.
 *
 * With speaker labels (`diarize`), a cue never spans a change of speaker: in SRT the first cue of each turn starts
 * with `[SPEAKER_n] ` (counted in its line), in WebVTT every cue is a voice span (`<v SPEAKER_n>`).
 */

export type SubtitleFormat = 'srt' | 'vtt';

/** A word as the transcript gives it: `word` keeps its leading space where the language writes one. */
export interface TimedWord {
  word: string;
  start: number;
  end: number;
  speaker?: string;
}

export interface TimedSegment {
  start: number;
  end: number;
  text: string;
  words?: TimedWord[];
  speaker?: string;
}

export interface Cue {
  start: number;
  end: number;
  /** One or two lines. */
  lines: string[];
  /** Who speaks it (with speaker labels). */
  speaker?: string;
}

export interface CueRules {
  maxLineChars: number;
  maxLines: number;
  maxSeconds: number;
  /** Silence between two words that ends a cue, in seconds. */
  pauseSeconds: number;
}

export const BROADCAST_RULES: CueRules = { maxLineChars: 42, maxLines: 2, maxSeconds: 7, pauseSeconds: 0.8 };

const SENTENCE_END = /[.!?…。！？]["'”’)\]]*$/;

/** The words of a segment; a segment without timings is cut at spaces, its time shared out by length. */
function wordsOf(s: TimedSegment): TimedWord[] {
  const timed = (s.words ?? []).filter((w) => w.word.trim()).map((w) => ({ ...w, speaker: w.speaker ?? s.speaker }));
  if (timed.length) return timed;
  const parts = s.text.trim().split(/\s+/).filter(Boolean);
  const total = parts.reduce((n, p) => n + p.length, 0) || 1;
  const span = Math.max(0, s.end - s.start);
  let at = s.start;
  return parts.map((p) => {
    const start = at;
    at += (span * p.length) / total;
    return { word: ` ${p}`, start, end: at, ...(s.speaker ? { speaker: s.speaker } : {}) };
  });
}

/**
 * The text in at most `rules.maxLines` lines of at most `rules.maxLineChars`, broken at spaces (the most balanced
 * break); null when it does not fit. A single word longer than a line is a line of its own (nothing else fits).
 */
export function breakLines(text: string, rules: CueRules = BROADCAST_RULES): string[] | null {
  const t = text.trim();
  if (t.length <= rules.maxLineChars) return [t];
  if (rules.maxLines < 2) return null;
  let best: string[] | null = null;
  let bestScore = Infinity;
  for (let i = t.indexOf(' '); i > 0; i = t.indexOf(' ', i + 1)) {
    const a = t.slice(0, i).trim();
    const b = t.slice(i + 1).trim();
    if (a.length > rules.maxLineChars) break;
    if (b.length > rules.maxLineChars) continue;
    // Balanced lines, with a small preference for a break after punctuation.
    const score = Math.abs(a.length - b.length) - (/[,;:]$/.test(a) ? 8 : 0);
    if (score < bestScore) [best, bestScore] = [[a, b], score];
  }
  return best;
}

const cueText = (words: TimedWord[]): string =>
  words
    .map((w) => w.word)
    .join('')
    .replace(/\s+/g, ' ')
    .trim();

/**
 * The cues of a transcript, in order, never overlapping. `markTurns`: the first cue of each speaker's turn starts
 * with `[SPEAKER_n] ` (SRT's convention; the mark counts in the line length).
 */
export function buildCues(
  segments: TimedSegment[],
  rules: CueRules = BROADCAST_RULES,
  opts: { markTurns?: boolean } = {},
): Cue[] {
  const words = segments.flatMap(wordsOf);
  const cues: Cue[] = [];
  let current: TimedWord[] = [];
  const mark = (first: TimedWord) =>
    opts.markTurns && first.speaker && first.speaker !== cues.at(-1)?.speaker ? `[${first.speaker}] ` : '';
  const textOf = (ws: TimedWord[]) => mark(ws[0]) + cueText(ws);
  const close = () => {
    if (!current.length) return;
    const text = textOf(current);
    const lines = breakLines(text, rules) ?? [text];
    const prevEnd = cues.at(-1)?.end ?? 0;
    const start = Math.max(current[0].start, prevEnd);
    const end = Math.max(current.at(-1)!.end, start + 0.001);
    const speaker = current[0].speaker;
    cues.push({ start, end, lines, ...(speaker ? { speaker } : {}) });
    current = [];
  };
  for (const w of words) {
    if (current.length) {
      const last = current.at(-1)!;
      const fits = breakLines(textOf([...current, w]), rules) !== null;
      const tooLong = w.end - current[0].start > rules.maxSeconds;
      const pause = w.start - last.end >= rules.pauseSeconds;
      const turn = w.speaker !== last.speaker;
      if (!fits || tooLong || pause || turn || SENTENCE_END.test(last.word.trim())) close();
    }
    current.push(w);
  }
  close();
  return cues;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `HH:MM:SS,mmm` (SRT) or `HH:MM:SS.mmm` (WebVTT). */
export function timecode(seconds: number, format: SubtitleFormat): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  return `${pad(h)}:${pad(m)}:${pad(s)}${format === 'srt' ? ',' : '.'}${pad(ms % 1000, 3)}`;
}

/** The cues as an SRT or WebVTT file's text. */
export function formatCues(cues: Cue[], format: SubtitleFormat): string {
  const blocks = cues.map((c, i) => {
    const times = `${timecode(c.start, format)} --> ${timecode(c.end, format)}`;
    if (format === 'srt') return `${i + 1}\n${times}\n${c.lines.join('\n')}`;
    return `${times}\n${c.speaker ? `<v ${c.speaker}>` : ''}${c.lines.join('\n')}`;
  });
  const body = blocks.join('\n\n');
  return format === 'vtt' ? `WEBVTT\n\n${body}${body ? '\n' : ''}` : `${body}${body ? '\n' : ''}`;
}

/** A transcript's subtitles as SRT or WebVTT text. */
export function subtitles(segments: TimedSegment[], format: SubtitleFormat, rules: CueRules = BROADCAST_RULES): string {
  return formatCues(buildCues(segments, rules, { markTurns: format === 'srt' }), format);
}

/** The MIME type of a subtitle file. */
export const SUBTITLE_MIME: Record<SubtitleFormat, string> = {
  srt: 'application/x-subrip; charset=utf-8',
  vtt: 'text/vtt; charset=utf-8',
};
