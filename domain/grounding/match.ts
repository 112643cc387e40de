/**
 * Where a value stands in a text (contract §14, grounding): the service's own check of a template's answer, never the
 * model's word. A value is found, in this order:
 * 1. as it is written, up to case, accents, spaces and punctuation (`DE12680501010012345678` in `DE12 6805 0101
 *    0012 3456 78`, `1369,10` in `1.369,10 €`), starting and ending on word boundaries;
 * 2. as a date: an ISO date (`2025-04-22`, `2025-04`) where the text writes the same day in another way (`22. April
 *    2025`, `22.04.2025`, `April 22, 2025`, `22/04/2025`; a day and month without a year count when the text names
 *    the year elsewhere);
 * 3. by its words: every word of a short value (at most four words that carry meaning) close together, or, for a
 *    longer one (a summary, a description), at least {@link LONG_COVERAGE} of its words; every number a value holds
 *    must be in the text either way (an invented number, date or amount is what the check is there to catch).
 * Each answer is a span of the text (offsets into it, end exclusive) that holds what matched. Pure.
 */

export interface Span {
  start: number;
  end: number;
}

/** Of a long value's meaningful words, the share the text must hold. */
export const LONG_COVERAGE = 0.7;
/** A short value's words all stand within this many words of the text (plus three per word of the value). */
const NEAR_WORDS = 12;

/** A letter or digit of any script. */
const WORD_CHAR = /[\p{L}\p{N}]/u;

/** Lower case without accents; `ß` as `ss`. One character may fold to several or none. */
const fold = (s: string): string =>
  s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/ß/g, 'ss');

interface Compact {
  /** The text's letters and digits, folded. */
  chars: string;
  /** For each character of `chars`, the offset in the text of the character it came from. */
  from: number[];
}

function compact(text: string): Compact {
  let chars = '';
  const from: number[] = [];
  for (let i = 0; i < text.length;) {
    const cp = text.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    if (WORD_CHAR.test(ch))
      for (const c of fold(ch))
        if (WORD_CHAR.test(c)) {
          chars += c;
          from.push(i);
        }
    i += ch.length;
  }
  return { chars, from };
}

const isWordAt = (text: string, i: number): boolean => i >= 0 && i < text.length && WORD_CHAR.test(text[i]!);

/** The end (exclusive) of the text character `i` starts, a surrogate pair included. */
const charEnd = (text: string, i: number): number => i + String.fromCodePoint(text.codePointAt(i)!).length;

/** Rule 1: the value's letters and digits as a run of the text's, on word boundaries. */
function findWritten(text: string, c: Compact, value: string): Span | null {
  const v = compact(value).chars;
  if (!v) return null;
  for (let at = c.chars.indexOf(v); at !== -1; at = c.chars.indexOf(v, at + 1)) {
    const start = c.from[at]!;
    const end = charEnd(text, c.from[at + v.length - 1]!);
    if (!isWordAt(text, start - 1) && !isWordAt(text, end)) return withSigns(text, value, { start, end });
  }
  return null;
}

/** Currency signs and percent signs of the value, written just before or after the run: inside the span. */
const SIGN = /[\p{Sc}%]/u;
function withSigns(text: string, value: string, s: Span): Span {
  let { start, end } = s;
  const signs = new Set([...value].filter((c) => SIGN.test(c)));
  if (!signs.size) return s;
  const before = /([\p{Sc}%])\s?$/u.exec(text.slice(Math.max(0, start - 2), start));
  if (before && signs.has(before[1]!)) start -= before[0].length;
  const after = /^\s?([\p{Sc}%])/u.exec(text.slice(end, end + 2));
  if (after && signs.has(after[1]!)) end += after[0].length;
  return { start, end };
}

// ---- dates ---------------------------------------------------------------------------------------------------------

/** Month names (folded, as their first letters suffice: `sept`, `märz` → `marz`), English, German, French, Spanish, Italian, Dutch. */
const MONTHS: string[][] = [
  ['jan', 'janv', 'ene', 'gen', 'januar', 'jänner', 'janner'],
  ['feb', 'fev', 'febr'],
  ['mar', 'marz', 'mrz', 'mars', 'marzo', 'maart'],
  ['apr', 'avr', 'abr'],
  ['may', 'mai', 'mayo', 'mag', 'mei'],
  ['jun', 'juin', 'giu'],
  ['jul', 'juil', 'lug'],
  ['aug', 'aou', 'ago'],
  ['sep', 'set'],
  ['oct', 'okt', 'ott'],
  ['nov'],
  ['dec', 'dez', 'dic'],
];

function monthOf(word: string): number | null {
  const w = fold(word).replace(/\.$/, '');
  if (w.length < 3) return null;
  for (const [i, names] of MONTHS.entries())
    for (const n of names) if (w === n || (w.startsWith(n) && n.length >= 3 && w.length <= 10)) return i + 1;
  return null;
}

interface DateFound extends Span {
  year: number | null;
  month: number;
  day: number | null;
}

const year4 = (y: string): number => (y.length === 2 ? 2000 + Number(y) : Number(y));

/** The dates the text writes, each with its span. */
function datesIn(text: string): DateFound[] {
  const out: DateFound[] = [];
  const add = (m: RegExpMatchArray, year: number | null, month: number | null, day: number | null) => {
    if (month === null || month < 1 || month > 12 || (day !== null && (day < 1 || day > 31))) return;
    out.push({ start: m.index!, end: m.index! + m[0].length, year, month, day });
  };
  const word = '([\\p{L}]{3,}\\.?)';
  for (const m of text.matchAll(/\b(\d{4})-(\d{1,2})-(\d{1,2})\b/g)) add(m, year4(m[1]!), Number(m[2]), Number(m[3]));
  for (const m of text.matchAll(/\b(\d{1,2})\.\s?(\d{1,2})\.(?:\s?(\d{4}|\d{2}))?(?!\d)/g))
    add(m, m[3] ? year4(m[3]) : null, Number(m[2]), Number(m[1]));
  for (const m of text.matchAll(/\b(\d{1,2})[/-](\d{1,2})[/-](\d{4}|\d{2})\b/g)) {
    // Day first (most of the world) and month first (the US): both are read, the value decides.
    add(m, year4(m[3]!), Number(m[2]), Number(m[1]));
    add(m, year4(m[3]!), Number(m[1]), Number(m[2]));
  }
  const dayMonth = new RegExp(
    `\\b(\\d{1,2})(?:\\.|st|nd|rd|th|er)?\\s+(?:of\\s+|de\\s+)?${word}(?:\\s+(?:de\\s+)?(\\d{4}))?`,
    'gu',
  );
  for (const m of text.matchAll(dayMonth)) add(m, m[3] ? Number(m[3]) : null, monthOf(m[2]!), Number(m[1]));
  const monthDay = new RegExp(`${word}\\s+(\\d{1,2})(?:st|nd|rd|th)?(?:,?\\s+(\\d{4}))?(?!\\d)`, 'gu');
  for (const m of text.matchAll(monthDay)) add(m, m[3] ? Number(m[3]) : null, monthOf(m[1]!), Number(m[2]));
  const monthYear = new RegExp(`${word}\\s+(\\d{4})\\b`, 'gu');
  for (const m of text.matchAll(monthYear)) add(m, Number(m[2]), monthOf(m[1]!), null);
  return out;
}

const ISO_DATE = /^(\d{4})-(\d{2})(?:-(\d{2}))?$/;
const ISO_DATE_TIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{1,2}):(\d{2})(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?$/;
/** How far apart a date and its time may be written. */
const TIME_NEAR = 200;

/** Where the text writes a time of day: `18:00`, `18.00`, `18 Uhr`, `6 pm`, `6:00 p.m.`. */
function timesIn(text: string, hour: number, minute: number): Span[] {
  const mm = String(minute).padStart(2, '0');
  const h12 = hour % 12 || 12;
  const half = hour < 12 ? 'a' : 'p';
  const forms = [
    `\\b0?${hour}[:.]${mm}\\b`,
    ...(minute === 0 ? [`\\b0?${hour}\\s*(?:Uhr|h)\\b`] : []),
    `\\b${h12}(?:[:.]${mm})${minute === 0 ? '?' : ''}\\s*${half}\\.?\\s?m\\b\\.?`,
  ];
  return [...text.matchAll(new RegExp(forms.join('|'), 'gi'))].map((m) => ({
    start: m.index!,
    end: m.index! + m[0].length,
  }));
}

/** An ISO date and time: the day as rule 2 finds it, and the time written near it. */
function findDateTime(text: string, value: string): Span | null {
  const m = ISO_DATE_TIME.exec(value.trim());
  if (!m) return null;
  const day = findDate(text, m[1]!);
  if (!day) return null;
  const near = timesIn(text, Number(m[2]), Number(m[3]))
    .map((t) => ({ t, gap: Math.max(t.start - day.end, day.start - t.end) }))
    .filter((x) => x.gap <= TIME_NEAR)
    .sort((a, b) => a.gap - b.gap)[0];
  return near ? { start: Math.min(day.start, near.t.start), end: Math.max(day.end, near.t.end) } : null;
}

/** Rule 2: an ISO date the text writes otherwise. */
function findDate(text: string, value: string): Span | null {
  const m = ISO_DATE.exec(value.trim());
  if (!m) return findDateTime(text, value);
  const [year, month, day] = [Number(m[1]), Number(m[2]), m[3] ? Number(m[3]) : null];
  const found = datesIn(text).filter((d) => d.month === month && (day === null ? true : d.day === day));
  const full = found.find((d) => d.year === year && (day === null || d.day !== null));
  if (full) return full;
  // A day and month the text writes without a year: the year must be written elsewhere in it.
  const yearless = found.find((d) => d.year === null && d.day !== null);
  return yearless && new RegExp(`\\b${year}\\b`).test(text) ? yearless : null;
}

// ---- words ---------------------------------------------------------------------------------------------------------

/** Words that carry no meaning of their own (English, German, French, Spanish): not counted. */
const STOPWORDS = new Set(
  (
    'a an the and or but of to in on at by for from with as is are was were be been it its this that these those ' +
    'he she they we you i his her their our your not no so than then there which who whom what when where how ' +
    'der die das den dem des ein eine einen einem einer und oder aber von zu im in am an auf mit für fur bei aus ' +
    'ist sind war waren wird werden nicht kein keine sich es er sie wir ihr zum zur vom als wie auch ' +
    'le la les un une des et ou de du au aux en dans sur pour par avec est sont el los las y o del al con por para'
  ).split(' '),
);

interface Word extends Span {
  word: string;
}

function wordsOf(text: string): Word[] {
  const out: Word[] = [];
  for (const m of text.matchAll(/[\p{L}\p{N}]+/gu))
    out.push({ word: fold(m[0]), start: m.index!, end: m.index! + m[0].length });
  return out;
}

const isNumber = (w: string): boolean => /^\p{N}+$/u.test(w);

/** Whether two folded words are one: equal, one a form of the other (a shared start of five letters), or a compound holding it. */
function sameWord(valueWord: string, textWord: string): boolean {
  if (valueWord === textWord) return true;
  if (isNumber(valueWord) || isNumber(textWord)) return false;
  const shared = Math.min(valueWord.length, textWord.length);
  if (shared >= 5) {
    let i = 0;
    while (i < shared && valueWord[i] === textWord[i]) i++;
    if (i >= 5 && i >= shared - 3) return true;
  }
  return valueWord.length >= 6 && textWord.length > valueWord.length && textWord.includes(valueWord);
}

/** Rule 3: the value's meaningful words in the text, close together for a short value. */
function findWords(textWords: Word[], value: string): Span | null {
  const wanted = [...new Set(wordsOf(value).map((w) => w.word))].filter(
    (w) => !STOPWORDS.has(w) && (w.length > 1 || isNumber(w)),
  );
  if (!wanted.length) return null;
  // Where each wanted word stands in the text.
  const hits = wanted.map((w) => textWords.flatMap((t, i) => (sameWord(w, t.word) ? [i] : [])));
  // Every number of the value must be there.
  if (wanted.some((w, i) => isNumber(w) && hits[i]!.length === 0)) return null;
  const found = hits.filter((h) => h.length > 0).length;
  if (wanted.length <= 4) {
    if (found < wanted.length) return null;
    return nearest(textWords, hits, NEAR_WORDS + 3 * wanted.length);
  }
  if (found / wanted.length < LONG_COVERAGE) return null;
  // A long value: from the first word it holds to the last, each word at its first place in the text.
  const firsts = hits.filter((h) => h.length > 0).map((h) => h[0]!);
  return { start: textWords[Math.min(...firsts)]!.start, end: textWords[Math.max(...firsts)]!.end };
}

/** The shortest run of the text's words holding one place of each wanted word, if one is at most `limit` words long. */
function nearest(textWords: Word[], hits: number[][], limit: number): Span | null {
  const events = hits.flatMap((h, k) => h.map((i) => ({ i, k }))).sort((a, b) => a.i - b.i);
  const count = new Map<number, number>();
  let best: [number, number] | null = null;
  let lo = 0;
  for (let hi = 0; hi < events.length; hi++) {
    const e = events[hi]!;
    count.set(e.k, (count.get(e.k) ?? 0) + 1);
    while (count.size === hits.length) {
      const first = events[lo]!;
      if (!best || e.i - first.i < best[1] - best[0]) best = [first.i, e.i];
      const n = count.get(first.k)! - 1;
      if (n === 0) count.delete(first.k);
      else count.set(first.k, n);
      lo++;
    }
  }
  if (!best || best[1] - best[0] + 1 > limit) return null;
  return { start: textWords[best[0]]!.start, end: textWords[best[1]]!.end };
}

/** A text made ready for many lookups. */
export interface Source {
  text: string;
  compact: Compact;
  words: Word[];
}

export const sourceOf = (text: string): Source => ({ text, compact: compact(text), words: wordsOf(text) });

/** Where a value (a string) stands in the text, or null when the text does not hold it. */
export function findValue(source: Source, value: string): Span | null {
  const v = value.trim();
  if (!v) return null;
  return findWritten(source.text, source.compact, v) ?? findDate(source.text, v) ?? findWords(source.words, v);
}
