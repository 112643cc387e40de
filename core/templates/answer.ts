import type { ExtractionPrompt } from './prompt';

/**
 * Answers that only say the text does not give a value (English and German), compared with the whole value,
 * lower-cased, without surrounding quotes and final full stops: "unknown", "Not specified in the text", "N/A",
 * "none", "empty", "keine Angabe", "nicht genannt"…
 */
const STAND_IN = new RegExp(
  '^(?:' +
    [
      'n/?a',
      'none',
      'null',
      'nil',
      'unknown',
      'empty',
      'tbd',
      'not applicable',
      '-+',
      '\\?+',
      '…',
      '(?:not|nothing) (?:specified|mentioned|given|stated|available|provided|known|found|indicated)' +
        '(?: in the (?:text|context))?',
      'no (?:[\\w-]+ ){0,3}(?:is |was )?(?:mentioned|given|specified|stated|provided|found)(?: in the (?:text|context))?',
      'unbekannt',
      'leer',
      'k\\. ?a',
      'keine angaben?',
      'keine informationen?',
      'nicht (?:angegeben|genannt|bekannt|vorhanden|erwähnt)(?: im (?:text|kontext))?',
    ].join('|') +
    ')$',
);

const bare = (s: string): string =>
  s
    .trim()
    .toLowerCase()
    .replace(/^["'\u201c\u201e\u00ab]+|["'\u201d\u201c\u00bb]+$/g, '')
    .replace(/[.!]+$/, '')
    .trim();

/** Whether a string answer says nothing: blank, a stand-in for "not in the text", or the field's name or description. */
export function saysNothing(value: string, name: string, description?: string): boolean {
  const v = bare(value);
  return v === '' || STAND_IN.test(v) || v === bare(name) || (description !== undefined && v === bare(description));
}

/**
 * A list answer given as a string: its lines without bullets or numbers; one line of short comma- or
 * semicolon-separated entries (keywords, names: at most four words each) is cut there, a sentence stays whole.
 */
function linesOf(s: string): string[] {
  const lines = s
    .split(/\r?\n/)
    .map((l) => l.replace(/^\s*(?:[-*\u2022]|\d+[.)])\s+/, '').trim())
    .filter((l) => l !== '');
  if (lines.length !== 1) return lines;
  const parts = lines[0]!
    .split(/[,;]/)
    .map((p) => p.trim())
    .filter((p) => p !== '');
  return parts.every((p) => p.split(/\s+/).length <= 4) ? parts : lines;
}

/**
 * The model's JSON answer as `template_fields` (contract §5): only the fields asked for (a field the answer lacks
 * stays absent); an answer that only says the text does not give it ("unknown", "not specified", "N/A", the field's
 * own description…) becomes empty; a list-like field is an array of strings (a string answer becomes its lines, an
 * empty one `[]`, and entries that say nothing are dropped). Other values are kept as the model gave them.
 */
export function answerFields(prompt: ExtractionPrompt, answer: Record<string, unknown>): Record<string, unknown> {
  const props = (prompt.schema.properties ?? {}) as Record<string, { description?: string }>;
  const lists = new Set(prompt.listFields);
  const fields: Record<string, unknown> = {};
  for (const name of prompt.fieldNames) {
    if (!(name in answer)) continue;
    const value = answer[name];
    const description = props[name]?.description;
    const nothing = (v: unknown) => typeof v === 'string' && saysNothing(v, name, description);
    if (lists.has(name)) {
      if (typeof value === 'string') fields[name] = nothing(value) ? [] : linesOf(value).filter((l) => !nothing(l));
      else if (Array.isArray(value)) fields[name] = value.filter((v) => v !== null && !nothing(v));
      else fields[name] = value;
    } else {
      fields[name] = nothing(value) ? '' : value;
    }
  }
  return fields;
}
