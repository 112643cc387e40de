import { modelFields, renderSystemPrompt } from './fill';
import type { ParsedTemplate } from './types';
import { ownValue } from './scan';

/** Used when a template has no `--- systemprompt` section. */
export const DEFAULT_SYSTEM_PROMPT =
  'You are a precise assistant for text analysis and structured extraction. ' +
  'Read the text carefully and fill the requested fields with information taken from it. ' +
  'Do not invent facts; when the text does not say something, leave that field empty.';

/**
 * Descriptions of every field of the template, by precedence:
 * `additional[name]` > inline `{{name|description}}` > the frontmatter's description > the name itself.
 * Names in `additional` that are not fields of the template are ignored.
 */
export function fieldDescriptions(parsed: ParsedTemplate, additional?: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of parsed.fields) {
    const extra = ownValue(additional, f.name);
    const fromRequest = typeof extra === 'string' && extra.trim() !== '' ? extra.trim() : null;
    const fromFrontmatter = parsed.frontmatterDescriptions[f.name];
    out[f.name] = fromRequest ?? f.description ?? (typeof fromFrontmatter === 'string' ? fromFrontmatter : f.name);
  }
  return out;
}

/** A description that asks for a list (English or German), unless only to say the value is not one. */
const LIST_WORD = /\b(?:lists?|liste|listeneintr\w*|aufzählung\w*|stichpunkt\w*|bullet(?:s|ed)?)\b/i;
const NOT_A_LIST = /\b(?:not|no|never|rather than|instead of|kein(?:e|en)?|nicht)\s+(?:as\s+|als\s+)?(?:an?\s+|eine\s+)?(?:lists?|liste)\b/gi;
/** Names that are lists by themselves, for a field that has no description at all (`{{tags}}`, `{keywords}`). */
const LIST_NAMES = new Set([
  'tags',
  'keywords',
  'key_points',
  'keypoints',
  'speakers',
  'participants',
  'attendees',
  'authors',
  'links',
  'references',
  'sources',
  'takeaways',
  'highlights',
  'action_items',
]);

/**
 * Whether a field is list-like (contract §5: list-like fields are lists): its description asks for a list ("as a
 * list", "a list of", "one list entry per…", "bullet points", "als Liste", "ein Listeneintrag je…", "Stichpunkte");
 * a field without any description is list-like when its name is one of a few list nouns (`tags`, `keywords`,
 * `speakers`…). "comma-separated" asks for a string.
 */
export function isListField(name: string, description: string | null): boolean {
  if (description === null || description.trim() === '' || description === name)
    return LIST_NAMES.has(name.toLowerCase());
  return LIST_WORD.test(description.replace(NOT_A_LIST, ''));
}

/** `de` → `German (de)`; unknown or malformed codes are returned as they are. */
export function languageName(code: string): string {
  const trimmed = code.trim();
  try {
    const name = new Intl.DisplayNames(['en'], { type: 'language' }).of(trimmed);
    return name && name.toLowerCase() !== trimmed.toLowerCase() ? `${name} (${trimmed})` : trimmed;
  } catch {
    return trimmed;
  }
}

/**
 * Contract §5: a field the text does not support comes back empty, never invented. A small model fills every field
 * unless told plainly (and writes "unknown" or the field's description instead of leaving it empty), so the rule
 * names what not to do, and the user message ends with it again.
 */
export const EMPTY_RULE =
  'Base every value on the text and the context. When they do not give what a field asks for, its value is "" ' +
  '(an empty list [] for a list): do not guess, do not make up numbers, dates, names or places, and do not write ' +
  '"unknown", "not specified" or the field\'s description.';
const EMPTY_REMINDER = 'A field that the text does not answer is "" (or [] for a list).';

/** Appended to a list-like field's line in the prompt (the schema's array type, for models that do not get it). */
const LIST_MARK = ' (a list: a JSON array of strings)';

export interface ExtractionPromptInput {
  parsed: ParsedTemplate;
  text: string;
  sourceLanguage?: string | null;
  targetLanguage: string;
  context?: Record<string, unknown>;
  additional?: Record<string, unknown>;
  /**
   * Grounding (contract §14): the values are checked against the text, so the model is asked to take them from it
   * as written, in the text's language (`targetLanguage` is then the text's).
   */
  grounded?: boolean;
}

/** With grounding: values as the text writes them, so the service's check finds them there. */
export const GROUNDED_RULE =
  'Take every value from the text as it is written there, in the language of the text: copy names, numbers, ' +
  'amounts, codes and places exactly, and keep to the words of the text for the rest.';

/** Chat messages for one model call, and the keys its JSON answer must have. */
export interface ExtractionPrompt {
  system: string;
  user: string;
  /** The fields the model fills: the template's fields minus those the context gives. */
  fieldNames: string[];
  /** The list-like fields among them ({@link isListField}): their answer is an array of strings. */
  listFields: string[];
  /**
   * The answer as a JSON schema: an object with every field a string, or an array of strings for a list-like field
   * (its description included), and no other key; a string may be empty, an array may be empty. Providers that can
   * enforce it (the local model's grammar) ask for it; it keeps a small model's answers valid.
   */
  schema: Record<string, unknown>;
}

/**
 * The messages asking the model for the template's fields as one JSON object.
 * System: the template's system prompt (context, `source_language` and `target_language` substituted) or
 * {@link DEFAULT_SYSTEM_PROMPT}, plus the answer format. User: the fields with their descriptions, the context as
 * JSON, the languages and the text.
 */
export function buildExtractionPrompt(input: ExtractionPromptInput): ExtractionPrompt {
  const { parsed, text, targetLanguage } = input;
  const context = input.context ?? {};
  // Grounded values are the text's own words: in its language, which the prompt names when the caller does.
  const target =
    input.grounded && !input.sourceLanguage ? 'the language of the text' : languageName(targetLanguage);
  const source = input.sourceLanguage ? languageName(input.sourceLanguage) : null;
  const vars = { source_language: input.sourceLanguage ?? '', target_language: targetLanguage, ...context };
  const fields = modelFields(parsed, context);
  const fieldNames = fields.map((f) => f.name);
  const descriptions = fieldDescriptions(parsed, input.additional);
  const described = (n: string): string | null => (descriptions[n] === undefined || descriptions[n] === n ? null : descriptions[n]);
  const listFields = fieldNames.filter((n) => isListField(n, described(n)));
  const isList = new Set(listFields);

  const system = [
    renderSystemPrompt(parsed, vars) ?? DEFAULT_SYSTEM_PROMPT,
    '',
    'Answer format: reply with exactly ONE JSON object and nothing else (no prose, no Markdown code fence).',
    `Its keys are exactly: ${fieldNames.map((n) => JSON.stringify(n)).join(', ')}.`,
    `Write every value in ${target}. Values are strings (Markdown is allowed inside them); a field marked as a list ` +
      'is an array of strings.',
    EMPTY_RULE,
    ...(input.grounded ? [GROUNDED_RULE] : []),
  ].join('\n');

  const contextJson = Object.keys(context).length > 0 ? JSON.stringify(context, null, 2) : '{}';
  const user = [
    'Fill these fields from the text below.',
    'Fields:',
    ...fieldNames.map((n) => `- ${n}: ${descriptions[n] ?? n}${isList.has(n) ? LIST_MARK : ''}`),
    '',
    'Context (JSON; facts about the text that you may rely on):',
    contextJson,
    '',
    `Source language: ${source ?? 'unknown (detect it)'}`,
    `Target language: ${target}`,
    '',
    'Text:',
    '"""',
    text,
    '"""',
    '',
    EMPTY_REMINDER,
  ].join('\n');

  const schema = {
    type: 'object',
    properties: Object.fromEntries(
      fieldNames.map((n) => {
        const description = descriptions[n] ?? n;
        return [n, isList.has(n) ? { type: 'array', items: { type: 'string' }, description } : { type: 'string', description }];
      }),
    ),
    required: fieldNames,
    additionalProperties: false,
  };
  return { system, user, fieldNames, listFields, schema };
}
