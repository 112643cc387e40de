import { answerFields, languageName } from '../core/templates';
import type { ExtractionPrompt } from '../core/templates/prompt';
import type { LlmProvider, LlmUsage } from '../domain/engines/llm';

/**
 * A template over a text longer than the model's context, map-reduce as summaries are: the fields are filled from
 * each piece of the text (one model call per piece), then each field's values are merged. A field that is a list (an
 * array in an answer, or in the schema) is merged without the model (every distinct item once, in order); a text
 * field whose pieces agree (one non-empty value, or equal ones) too; the others go to merge calls, as many values as
 * fit one call, level by level until one value per field is left. Every call goes through the model the caller
 * gives (a job's journaled model), so a retried step repeats none.
 */

type Values = Record<string, unknown>;

/** Room kept beside a prompt for what the provider adds to it (its JSON instruction). */
const PROVIDER_SLACK = 150;
/** Room kept beside a piece's prompt: the provider's additions and the piece note. */
export const PIECE_PROMPT_SLACK = 400;

/** Told to the model with each piece. */
export function pieceNote(index: number, count: number): string {
  return (
    `The text below is part ${index + 1} of ${count} of a longer text; the other parts are read separately and the ` +
    'answers merged. Fill each field from this part alone, concisely; leave a field empty when this part does not ' +
    'say it.'
  );
}

const isEmpty = (v: unknown): boolean =>
  v === undefined ||
  v === null ||
  (typeof v === 'string' && v.trim() === '') ||
  (Array.isArray(v) && v.every(isEmpty)) ||
  (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);

/** Two values are the same when they differ only in case and spacing. */
const sameness = (v: unknown): string =>
  typeof v === 'string' ? v.trim().replace(/\s+/g, ' ').toLowerCase() : JSON.stringify(v);

/** The non-empty values, each distinct one once (its first spelling), in order. */
export function distinctValues(values: unknown[]): unknown[] {
  const seen = new Set<string>();
  const out: unknown[] = [];
  for (const v of values) {
    if (isEmpty(v)) continue;
    const key = sameness(v);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(typeof v === 'string' ? v.trim() : v);
  }
  return out;
}

/** A list field's values merged: the items of every piece (a text value is one item), each distinct one once. */
export function unionItems(values: unknown[]): unknown[] {
  return distinctValues(values.flatMap((v) => (Array.isArray(v) ? v : [v])));
}

/** The schema's entry for a field, if the schema has one. */
function fieldSchema(schema: Values, name: string): Values | undefined {
  const props = schema.properties as Record<string, Values> | undefined;
  return props && Object.prototype.hasOwnProperty.call(props, name) ? props[name] : undefined;
}

/** Cuts a text to `max` characters at a word boundary when there is one in its last 40 %. */
function shorten(s: string, max: number): string {
  if (s.length <= max) return s;
  const cut = s.slice(0, Math.max(0, max - 1));
  const word = cut.lastIndexOf(' ');
  return `${word > max * 0.6 ? cut.slice(0, word) : cut}…`;
}

/** How one piece's values are written into a merge call. */
const partLine = (v: Values, i: number) => `Part ${i + 1}: ${JSON.stringify(v)}`;

/**
 * Groups of consecutive partial values, each within `room` characters as merge input; every group but the last has
 * at least two (so each level at least halves the values), with its text values shortened when two do not fit.
 */
export function packGroups(level: Values[], room: number): Values[][] {
  const groups: Values[][] = [];
  let cur: Values[] = [];
  let size = 0;
  for (const v of level) {
    const s = partLine(v, 99).length + 1;
    if (cur.length >= 2 && size + s > room) {
      groups.push(cur);
      [cur, size] = [[], 0];
    }
    cur.push(v);
    size += s;
  }
  if (cur.length) groups.push(cur);
  return groups.map((g) => fitGroup(g, room));
}

/** The group's text values shortened evenly until the group fits `room`. */
function fitGroup(group: Values[], room: number): Values[] {
  const size = (g: Values[]) => g.reduce((n, v, i) => n + partLine(v, i).length + 1, 0);
  if (group.length < 2 || size(group) <= room) return group;
  const strings = group.reduce((n, v) => n + Object.values(v).filter((x) => typeof x === 'string').length, 0);
  let cap = Math.max(20, Math.floor(room / Math.max(1, strings)) - 20);
  for (;;) {
    const c = cap;
    const out = group.map((v) =>
      Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typeof x === 'string' ? shorten(x, c) : x])),
    );
    if (size(out) <= room || cap <= 20) return out;
    cap = Math.max(20, Math.floor(cap * 0.8));
  }
}

export interface PieceFillRequest {
  /** The extraction prompt for a text: the one a single call would send, with the piece as its text. */
  build: (text: string) => ExtractionPrompt;
  pieces: string[];
  /** Characters one call's prompt (system and user) may have in all. */
  promptChars: number;
  /** The language the values are written in (a code). */
  targetLanguage: string;
}

/** The fields of the whole text from its pieces, and the usage of every call made. */
export async function fillInPieces(
  model: LlmProvider,
  req: PieceFillRequest,
): Promise<{ fields: Values; usages: LlmUsage[] }> {
  const usages: LlmUsage[] = [];
  const partials: Values[] = [];
  let prompt: ExtractionPrompt | undefined;
  const present = new Set<string>();
  for (const [i, piece] of req.pieces.entries()) {
    prompt = req.build(piece);
    const r = await model.chatJson({
      purpose: 'template-map',
      system: `${prompt.system}\n\n${pieceNote(i, req.pieces.length)}`,
      user: prompt.user,
      schema: prompt.schema,
    });
    usages.push(r.usage);
    // The piece's answer read as a whole text's is: stand-ins ("unknown") empty, list fields lists.
    const own: Values = answerFields(prompt, r.value);
    for (const name of Object.keys(own)) present.add(name);
    partials.push(own);
  }
  const base = prompt ?? req.build('');
  const names = base.fieldNames.filter((n) => present.has(n));
  const isList = (n: string) =>
    fieldSchema(base.schema, n)?.type === 'array' || partials.some((p) => Array.isArray(p[n]));
  const lists = names.filter(isList);
  const texts = names.filter((n) => !lists.includes(n));

  const fields: Values = {};
  for (const name of lists) fields[name] = unionItems(partials.map((p) => p[name]));
  if (texts.length) {
    const merge = mergeCall(model, base.schema, texts, req.targetLanguage, usages);
    const room = req.promptChars - merge.overhead;
    let level: Values[] = partials.map((p) => Object.fromEntries(texts.map((n) => [n, p[n] ?? ''])));
    while (level.length > 1) {
      const next: Values[] = [];
      for (const group of packGroups(level, room)) next.push(group.length === 1 ? group[0]! : await merge.run(group));
      level = next;
    }
    for (const name of texts) fields[name] = level[0]![name];
  }
  return { fields: Object.fromEntries(names.map((n) => [n, fields[n]])), usages };
}

/** The merge of a group of partial values: the fields they agree on kept, the others merged by one model call. */
function mergeCall(model: LlmProvider, schema: Values, texts: string[], target: string, usages: LlmUsage[]) {
  const describe = (n: string) => {
    const d = fieldSchema(schema, n)?.description;
    return typeof d === 'string' && d.trim() ? d.trim() : n;
  };
  const system = (ask: string[]) =>
    [
      'The fields of a template were filled separately from consecutive parts of one long text. Merge the values ' +
        `each field got from the parts into one value for the whole text, written in ${languageName(target)}: keep ` +
        'every distinct fact once, in the order of the text, and add nothing the values do not say. A field whose ' +
        'values are all empty stays an empty string.',
      '',
      'Answer format: reply with exactly ONE JSON object and nothing else (no prose, no Markdown code fence).',
      `Its keys are exactly: ${ask.map((n) => JSON.stringify(n)).join(', ')}.`,
    ].join('\n');
  const user = (ask: string[], group: Values[]) =>
    [
      'Merge the values of these fields.',
      'Fields:',
      ...ask.map((n) => `- ${n}: ${describe(n)}`),
      '',
      'The values from each part of the text, in order (JSON):',
      ...group.map((v, i) => partLine(Object.fromEntries(ask.map((n) => [n, v[n] ?? ''])), i)),
    ].join('\n');
  const props = (ask: string[]) =>
    Object.fromEntries(ask.map((n) => [n, fieldSchema(schema, n) ?? { type: 'string', description: describe(n) }]));
  return {
    /** Characters of a merge prompt around its values, with the provider's additions. */
    overhead: system(texts).length + user(texts, []).length + PROVIDER_SLACK,
    async run(group: Values[]): Promise<Values> {
      const out: Values = {};
      const ask: string[] = [];
      for (const n of texts) {
        const values = distinctValues(group.map((v) => v[n]));
        if (values.length > 1) ask.push(n);
        else out[n] = values[0] ?? '';
      }
      if (!ask.length) return out;
      const r = await model.chatJson({
        purpose: 'template-merge',
        system: system(ask),
        user: user(ask, group),
        schema: { type: 'object', properties: props(ask), required: ask, additionalProperties: false },
      });
      usages.push(r.usage);
      for (const n of ask) out[n] = r.value[n] ?? '';
      return out;
    },
  };
}
