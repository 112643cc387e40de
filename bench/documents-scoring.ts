/**
 * Scores of bench/documents.bench.ts: a tool's Markdown (or plain text) against the truth bench/documents_truth.py read
 * from the file's own structure. Every score is a recall: the share of the truth's items found in the output.
 *
 * - text: body paragraphs (headings and list items among them, table cells not) found whole in the output, after
 *   markup, entities and whitespace are normalised; words: the share of the truth's words (all of them, cells too)
 *   found, counted with their multiplicity.
 * - headings: truth headings found as a Markdown heading (`#` … `######`, or `<h1>`…`<h6>`).
 * - lists: truth list items found as a Markdown list item (`-`, `*`, `+`, `1.`).
 * - tables: non-empty truth cells found as a cell of a Markdown table (GFM row or HTML `<td>`/`<th>`).
 * - slides: slide titles found as a heading; sheets: sheet names found as a heading, and sheet values as table
 *   cells (numbers compared as numbers). For plain text (LibreOffice → PDF → pdftotext) only text, words and
 *   sheet values count, values found as words in the text.
 * - mail: the From and To addresses and the Subject found in the output.
 */

export interface Truth {
  paragraphs: string[];
  headings: string[];
  lists: string[];
  tables: string[][][];
  slides: string[];
  sheets: { name: string; values: string[] }[];
  mail: Record<string, string[]>;
  /** An e-mail's multipart/alternative parts: each group's options, of which the best found counts. */
  alternatives?: string[][][];
  error?: string;
}

export const SCORES = ['text', 'words', 'headings', 'lists', 'tables', 'slides', 'sheets', 'values', 'mail'] as const;
export type ScoreName = (typeof SCORES)[number];
/** found / total of each score; total 0 when the document has nothing of that kind (not scored). */
export type Scores = Record<ScoreName, { found: number; total: number }>;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
const decode = (s: string) =>
  s
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&(\w+);/g, (m, n: string) => ENTITIES[n] ?? m);

/** An HTML tag in a tool's output (not escaped text `\<JDK>`, not an autolink `<https://…>` nor an address `<a@b.c>`). */
const TAG = /(?<!\\)<\/?[a-z][a-z0-9]*(?:\s[^<>]*)?\/?>/gi;

/** A Markdown link's or image's destination, `](url)` or `](<url> "title")`: no part of the text. */
const LINK_TARGET = /\]\((?:<[^<>\n]*>|[^()\s]*)(?:\s+"[^"\n]*")?\)/g;

/** A tool's Markdown as text: link destinations and HTML tags out, entities decoded (never applied to the truth). */
const unmark = (s: string) => decode(s.replace(LINK_TARGET, ']').replace(TAG, ' '));

/** Letters and digits only, lower case, single spaces: escapes and punctuation are no part of the text. */
export const norm = (s: string) =>
  // Emphasis marks go without a trace: `j*um****ped***` is the word "jumped" in runs of three styles.
  s
    .replace(/[*`]/g, '')
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/** A number's canonical form (`4.250` and `4.25` alike), else the normalised text. */
const cellKey = (s: string) => {
  const t = s.trim();
  return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t) ? String(Number(t)) : norm(t);
};
/** A cell of a tool's Markdown table, as `cellKey` reads the truth's. */
const outCellKey = (s: string) => cellKey(unmark(s).replace(/\\(.)/g, '$1'));

function markdownParts(md: string) {
  const headings: string[] = [];
  const items: string[] = [];
  const cells: string[] = [];
  let fenced = false;
  let item = -1; // the list item an indented line continues (a line break inside the item)
  for (const line of md.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const h = /^#{1,6}\s+(.*)$/.exec(line);
    if (h) headings.push(norm(unmark(h[1]!)));
    const li = /^\s*(?:[-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (li) item = items.push(norm(unmark(li[1]!))) - 1;
    else if (item >= 0 && /^\s+\S/.test(line)) items[item] = `${items[item]} ${norm(unmark(line))}`.trim();
    else item = -1;
    if (/^\s*\|/.test(line) && !/^\s*\|[\s|:-]+\|\s*$/.test(line))
      cells.push(
        ...line
          .trim()
          .replace(/^\||\|$/g, '')
          .split(/(?<!\\)\|/)
          .map(outCellKey),
      );
  }
  for (const m of md.matchAll(/<h[1-6][^>]*>([\s\S]*?)<\/h[1-6]>/gi)) headings.push(norm(unmark(m[1]!)));
  for (const m of md.matchAll(/<t[dh][^>]*>([\s\S]*?)<\/t[dh]>/gi)) cells.push(outCellKey(m[1]!));
  return { headings, items, cells: new Set(cells.filter(Boolean)) };
}

const words = (s: string) => norm(s).split(' ').filter(Boolean);

function wordRecall(truthWords: string[], text: string): { found: number; total: number } {
  const have = new Map<string, number>();
  for (const w of words(text)) have.set(w, (have.get(w) ?? 0) + 1);
  let found = 0;
  for (const w of truthWords) {
    const n = have.get(w) ?? 0;
    if (n > 0) {
      found++;
      have.set(w, n - 1);
    }
  }
  return { found, total: truthWords.length };
}

const share = (items: string[], hit: (n: string) => boolean) => {
  const keys = [...new Set(items.map(norm).filter(Boolean))];
  return { found: keys.filter(hit).length, total: keys.length };
};
const shareBy = (items: string[], key: (s: string) => string, hit: (k: string) => boolean) => {
  const keys = [...new Set(items.map(key).filter(Boolean))];
  return { found: keys.filter(hit).length, total: keys.length };
};
/** A heading or an item matches when it holds the truth's text (a tool may add a number or a mark). */
const holds = (got: string[], t: string) => got.some((g) => ` ${g} `.includes(` ${t} `));

/** Scores of one output; `plain` for a text-only tool (LibreOffice → PDF → pdftotext). */
export function score(truth: Truth, output: string, plain: boolean): Scores {
  const text = plain ? output : unmark(output);
  const flat = ` ${norm(text)} `;
  const found = (p: string) => flat.includes(` ${p} `);
  // Of an e-mail's alternatives (plain text, HTML), the one the tool shows counts as the message's text.
  const chosen = (truth.alternatives ?? []).map(
    (options) =>
      options
        .map((o) => ({ o, s: share(o, found) }))
        .sort((a, b) => b.s.found / Math.max(1, b.s.total) - a.s.found / Math.max(1, a.s.total))[0]!.o,
  );
  const paragraphs = [...truth.paragraphs, ...chosen.flat()];
  const md = markdownParts(plain ? '' : output);
  const cellTruth = truth.tables.flat(2).filter((c) => norm(c));
  const values = [...new Set(truth.sheets.flatMap((s) => s.values).map(cellKey))].filter(Boolean);
  const textWords = [...paragraphs, ...cellTruth, ...truth.sheets.flatMap((s) => s.values)].flatMap(words);
  const plainWords = new Set(words(text).map(cellKey));
  const none = { found: 0, total: 0 };
  const mail = Object.values(truth.mail).flat();
  return {
    text: share(paragraphs, found),
    words: wordRecall(textWords, text),
    headings: plain ? none : share(truth.headings, (h) => holds(md.headings, h)),
    lists: plain ? none : share(truth.lists, (l) => holds(md.items, l)),
    tables: plain ? none : shareBy(cellTruth, cellKey, (c) => md.cells.has(c)),
    slides: plain ? none : share(truth.slides, (s) => holds(md.headings, s)),
    sheets: plain
      ? none
      : share(
          truth.sheets.map((s) => s.name).filter((n) => norm(n)),
          (n) => holds(md.headings, n),
        ),
    values: {
      found: values.filter((v) => (plain ? plainWords.has(v) || flat.includes(` ${v} `) : md.cells.has(v))).length,
      total: values.length,
    },
    mail: plain ? none : share(mail, (v) => flat.includes(` ${v} `)),
  };
}

export const emptyScores = (): Scores =>
  Object.fromEntries(SCORES.map((s) => [s, { found: 0, total: 0 }])) as unknown as Scores;

export function addScores(into: Scores, s: Scores): void {
  for (const k of SCORES) {
    into[k].found += s[k].found;
    into[k].total += s[k].total;
  }
}

/** What the truth held that the output did not: for the report of where a tool lost. */
export function missed(truth: Truth, output: string, name: ScoreName, limit = 3): string[] {
  const md = markdownParts(output);
  const flat = ` ${norm(unmark(output))} `;
  const pick = (xs: string[], hit: (n: string) => boolean) =>
    [...new Set(xs.filter((x) => norm(x) && !hit(norm(x))))].slice(0, limit);
  switch (name) {
    case 'text':
      return pick(truth.paragraphs, (p) => flat.includes(` ${p} `));
    case 'headings':
      return pick(truth.headings, (h) => holds(md.headings, h));
    case 'lists':
      return pick(truth.lists, (l) => holds(md.items, l));
    case 'tables':
      return [...new Set(truth.tables.flat(2).filter((c) => norm(c) && !md.cells.has(cellKey(c))))].slice(0, limit);
    case 'slides':
      return pick(truth.slides, (s) => holds(md.headings, s));
    case 'sheets':
      return pick(
        truth.sheets.map((s) => s.name),
        (n) => holds(md.headings, n),
      );
    case 'values':
      return [...new Set(truth.sheets.flatMap((s) => s.values).filter((v) => !md.cells.has(cellKey(v))))].slice(
        0,
        limit,
      );
    case 'mail':
      return pick(Object.values(truth.mail).flat(), (v) => flat.includes(` ${v} `));
    default:
      return [];
  }
}
