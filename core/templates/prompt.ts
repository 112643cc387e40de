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

export interface ExtractionPromptInput {
  parsed: ParsedTemplate;
  text: string;
  sourceLanguage?: string | null;
  targetLanguage: string;
  context?: Record<string, unknown>;
  additional?: Record<string, unknown>;
}

/** Chat messages for one model call, and the keys its JSON answer must have. */
export interface ExtractionPrompt {
  system: string;
  user: string;
  /** The fields the model fills: the template's fields minus those the context gives. */
  fieldNames: string[];
  /**
   * The answer as a JSON schema: an object with every field a string (its description included) and no other key.
   * Providers that can enforce it (the local model's grammar) ask for it; it keeps a small model's answers valid.
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
  const target = languageName(targetLanguage);
  const source = input.sourceLanguage ? languageName(input.sourceLanguage) : null;
  const vars = { source_language: input.sourceLanguage ?? '', target_language: targetLanguage, ...context };
  const fields = modelFields(parsed, context);
  const fieldNames = fields.map((f) => f.name);
  const descriptions = fieldDescriptions(parsed, input.additional);

  const system = [
    renderSystemPrompt(parsed, vars) ?? DEFAULT_SYSTEM_PROMPT,
    '',
    'Answer format: reply with exactly ONE JSON object and nothing else (no prose, no Markdown code fence).',
    `Its keys are exactly: ${fieldNames.map((n) => JSON.stringify(n)).join(', ')}.`,
    `Write every value in ${target}. Values are strings (Markdown is allowed inside them) unless a field's ` +
      'description asks for a list, then an array of strings. Use an empty string for information the text does not ' +
      'contain.',
  ].join('\n');

  const contextJson = Object.keys(context).length > 0 ? JSON.stringify(context, null, 2) : '{}';
  const user = [
    'Fill these fields from the text below.',
    'Fields:',
    ...fieldNames.map((n) => `- ${n}: ${descriptions[n] ?? n}`),
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
  ].join('\n');

  const schema = {
    type: 'object',
    properties: Object.fromEntries(fieldNames.map((n) => [n, { type: 'string', description: descriptions[n] ?? n }])),
    required: fieldNames,
    additionalProperties: false,
  };
  return { system, user, fieldNames, schema };
}
