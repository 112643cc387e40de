/**
 * The cases of bench/templates.bench.ts (bench/data/templates/*.json) and how an answer is scored against them.
 * Pure: no I/O but `loadCases`. Benchmarks only: nothing here is product code.
 *
 * A case: a real text (at most 1,500 characters), a template (`template_content` inline or a shipped `template`),
 * languages, an optional `context`, and per field what the text supports:
 *
 * | expectation | scored as | hit when |
 * | --- | --- | --- |
 * | `"EMPTY"` | unsupported | the text does not say it: the answer is `""`, `[]`, null or missing |
 * | `{"exact": v}` / `{"exact": [v1, v2]}` | supported | the answer, normalised, equals one of the values |
 * | `{"contains": [s…]}` / `{"contains_any": [s…]}` | supported | the normalised answer contains all / one of them |
 * | `{"list": [items], "min_recall"?, "allow_extra"?}` | supported | every item found (or `min_recall` of them) and at least 75 % of the answer's items are expected |
 * | `{"short_list": n}` | shape | a JSON array of 1 to n keywords of at most 4 words each (a tags field) |
 * | `{"max_chars": n}` / `{"max_items": n}` | shape | nothing made up around a short text: at most n characters / list entries |
 * | `"ANY"` | not scored | (shown only) |
 *
 * Normalised: NFKC, lower case, typographic quotes and dashes made plain, blanks collapsed, surrounding quotes,
 * Markdown emphasis and final punctuation removed; an array counts as its items joined by ", ".
 */
import fs from 'node:fs';
import path from 'node:path';

export type Expectation =
  | 'EMPTY'
  | 'ANY'
  | { exact: string | string[] }
  | { contains: string[] }
  | { contains_any: string[] }
  | { list: string[]; min_recall?: number; allow_extra?: string[] }
  | { short_list: number }
  | { max_chars: number }
  | { max_items: number };

export interface TemplateCase {
  name: string;
  about: string;
  text: string;
  template?: string;
  template_content?: string;
  source_language: string;
  target_language: string;
  context?: Record<string, unknown>;
  expected: Record<string, Expectation>;
}

export type Category = 'supported' | 'unsupported' | 'shape' | 'unscored';

export interface FieldScore {
  field: string;
  category: Category;
  hit: boolean;
  /** For fields whose answer should be a list (list, short_list, max_items): whether it came as a JSON array. */
  array?: boolean;
  /** An unsupported field answered with a stand-in such as "N/A", "unknown", "not specified". */
  placeholder?: boolean;
  why: string;
}

export const MAX_TEXT_CHARS = 1500;

export function loadCases(dir: string): TemplateCase[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const c = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Omit<TemplateCase, 'name'>;
      if (c.text.length > MAX_TEXT_CHARS)
        throw new Error(`${f}: text of ${c.text.length} characters (max ${MAX_TEXT_CHARS})`);
      if (!c.template && c.template_content === undefined)
        throw new Error(`${f}: neither template nor template_content`);
      return { ...c, name: f.replace(/\.json$/, '') };
    });
}

export const norm = (s: string): string =>
  s
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u2018\u2019\u201a]/g, "'")
    .replace(/[\u201c\u201d\u201e\u00ab\u00bb"]/g, '')
    .replace(/[\u2013\u2014]/g, '-')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^[\s'*_`]+|[\s.,;:!'*_`]+$/g, '');

const asText = (v: unknown): string =>
  Array.isArray(v)
    ? v.map(asText).join(', ')
    : v === null || v === undefined
      ? ''
      : typeof v === 'string'
        ? v
        : JSON.stringify(v);

export function isEmpty(v: unknown): boolean {
  if (v === null || v === undefined) return true;
  if (Array.isArray(v)) return v.every(isEmpty);
  return typeof v === 'string' && v.trim() === '';
}

const PLACEHOLDER =
  /^(n\/?a|none|null|empty|leer|unknown|not (specified|mentioned|given|stated|available|provided|known)\b.*|no \S+( \S+)? (is )?(mentioned|given|specified|stated)\b.*|(keine|ohne) angabe.*|nicht (angegeben|genannt|bekannt)\b.*|unbekannt|-+|\?+)$/;

/** The entries of a list answer: an array's items, or a string cut at line breaks, bullets, commas and semicolons. */
export function itemsOf(v: unknown, splitCommas = true): string[] {
  const raw = Array.isArray(v) ? v.map(asText) : asText(v).split(splitCommas ? /\n|;|,(?!\d)|\s+(?:and|und)\s+/ : /\n/);
  return raw
    .map((x) => x.replace(/^\s*(?:[-*•]|\d+[.)])\s*/, ''))
    .map(norm)
    .filter(Boolean);
}

const sameItem = (a: string, e: string) =>
  a === e || (e.length >= 3 && a.includes(e)) || (a.length >= 3 && e.includes(a));

export function scoreField(field: string, exp: Expectation, value: unknown): FieldScore {
  const got = norm(asText(value));
  const base = { field };
  if (exp === 'ANY') return { ...base, category: 'unscored', hit: true, why: '' };
  if (exp === 'EMPTY') {
    const hit = isEmpty(value);
    return {
      ...base,
      category: 'unsupported',
      hit,
      placeholder: !hit && PLACEHOLDER.test(got),
      why: hit ? '' : 'not empty',
    };
  }
  if ('exact' in exp) {
    const ok = (Array.isArray(exp.exact) ? exp.exact : [exp.exact]).map(norm);
    return { ...base, category: 'supported', hit: ok.includes(got), why: `expected ${ok[0]}` };
  }
  if ('contains' in exp) {
    const missing = exp.contains.map(norm).filter((s) => !got.includes(s));
    return { ...base, category: 'supported', hit: missing.length === 0, why: `lacks ${missing.join(', ')}` };
  }
  if ('contains_any' in exp) {
    const hit = exp.contains_any.map(norm).some((s) => got.includes(s));
    return { ...base, category: 'supported', hit, why: `none of ${exp.contains_any.join(', ')}` };
  }
  if ('list' in exp) {
    const want = exp.list.map(norm);
    const extra = (exp.allow_extra ?? []).map(norm);
    const items = itemsOf(value);
    const found = want.filter((e) => items.some((a) => sameItem(a, e)));
    const wanted = items.filter((a) => want.some((e) => sameItem(a, e)) || extra.some((e) => sameItem(a, e)));
    const recall = found.length / want.length;
    const precision = items.length ? wanted.length / items.length : 0;
    const hit = recall >= (exp.min_recall ?? 1) && precision >= 0.75;
    const why = `recall ${found.length}/${want.length}, precision ${wanted.length}/${items.length}`;
    return { ...base, category: 'supported', hit, array: Array.isArray(value), why };
  }
  if ('short_list' in exp) {
    const items = Array.isArray(value) ? itemsOf(value) : [];
    const short = items.every((t) => t.split(' ').length <= 4 && t.length <= 40);
    const hit = Array.isArray(value) && items.length >= 1 && items.length <= exp.short_list && short;
    const why = !Array.isArray(value)
      ? 'not a JSON array'
      : `${items.length} item(s)${short ? '' : ', not all keywords'}`;
    return { ...base, category: 'shape', hit, array: Array.isArray(value), why };
  }
  if ('max_chars' in exp) {
    const n = asText(value).trim().length;
    return { ...base, category: 'shape', hit: n <= exp.max_chars, why: `${n} characters (max ${exp.max_chars})` };
  }
  const n = itemsOf(value, false).length;
  return {
    ...base,
    category: 'shape',
    hit: n <= exp.max_items,
    array: Array.isArray(value),
    why: `${n} entries (max ${exp.max_items})`,
  };
}

/**
 * The answer a perfect model would give, for the wire-protocol double: each field's expected value (the first
 * acceptable one; "" or [] for a field the text does not support), shaped as the request's JSON schema types it
 * (an array for an array property, a string otherwise), as a grammar-bound model would have to answer it.
 */
export function oracleAnswer(
  c: TemplateCase,
  fields: string[],
  schema?: Record<string, unknown>,
): Record<string, unknown> {
  const props = (schema?.properties ?? {}) as Record<string, { type?: string }>;
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const exp = c.expected[f] ?? 'ANY';
    let v: string | string[];
    if (exp === 'EMPTY') v = '';
    else if (exp === 'ANY') v = `${f} value`;
    else if ('exact' in exp) v = Array.isArray(exp.exact) ? exp.exact[0]! : exp.exact;
    else if ('contains' in exp) v = exp.contains.join(' ');
    else if ('contains_any' in exp) v = exp.contains_any[0]!;
    else if ('list' in exp) v = exp.list;
    else if ('short_list' in exp) v = ['keyword-one', 'keyword-two'];
    else if ('max_chars' in exp) v = 'One short sentence.';
    else v = ['One statement.'];
    const type = props[f]?.type;
    if (type === 'array') out[f] = Array.isArray(v) ? v : v === '' ? [] : [v];
    else if (type === 'string') out[f] = Array.isArray(v) ? v.join(', ') : v;
    else out[f] = v;
  }
  return out;
}

export interface Totals {
  hits: number;
  n: number;
}

/** Per category (and list fields answered as arrays, and placeholders) over a run's field scores. */
export function totals(scores: FieldScore[]): Record<string, Totals> {
  const t: Record<string, Totals> = {};
  const add = (k: string, hit: boolean) => {
    t[k] ??= { hits: 0, n: 0 };
    t[k].n++;
    if (hit) t[k].hits++;
  };
  for (const s of scores) {
    if (s.category === 'unscored') continue;
    add(s.category, s.hit);
    add('all', s.hit);
    if (s.array !== undefined) add('array', s.array);
    if (s.category === 'unsupported' && !s.hit) add('placeholder', Boolean(s.placeholder));
  }
  return t;
}
