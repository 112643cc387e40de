import { stringify } from 'yaml';
import { mapStrings, setOwn, unmask, wholeToken } from './mask';
import type { FrontmatterBlock, ParsedTemplate, TemplateField } from './types';
import {
  blockIndent,
  formatValue,
  ownValue,
  replacePlaceholders,
  scanPlaceholders,
  TEXT_PLACEHOLDER,
  type Placeholder,
} from './scan';

/**
 * Filling a parsed template. Pure.
 *
 * A placeholder named `name` takes, in order: the input text when `name` is `text`; `values[name]` (the model's
 * JSON); `context[name]`; else the empty string (a missing context value leaves nothing behind, never the
 * placeholder itself). `null` counts as missing. Values are formatted by {@link formatValue}: in the body an
 * array is a bullet list when its placeholder stands alone on a line, else comma-joined; objects are JSON.
 * In a YAML frontmatter a placeholder that is a whole value keeps the value's type (an array becomes a YAML
 * list), one inside a longer string is formatted inline; the frontmatter is re-serialised, so it is always
 * valid YAML. Literal braces are left as they are.
 */

type Values = Record<string, unknown>;

function resolver(values: Values, text: string, context: Values): (name: string) => unknown {
  return (name) => {
    if (name === TEXT_PLACEHOLDER) return text;
    const fromModel = ownValue(values, name);
    if (fromModel !== undefined) return fromModel;
    return ownValue(context, name) ?? '';
  };
}

function fillText(source: string, placeholders: Placeholder[], resolve: (name: string) => unknown): string {
  return replacePlaceholders(source, placeholders, (p) => formatValue(resolve(p.name), blockIndent(source, p)));
}

function yamlValue(v: unknown): unknown {
  if (v === undefined || v === null) return '';
  if (typeof v === 'bigint') return String(v);
  return v;
}

function renderFrontmatter(block: FrontmatterBlock, resolve: (name: string) => unknown): string | null {
  const ph = block.placeholders;
  const nameAt = (i: number): string => ph[i]?.name ?? '';
  if (block.data === null) {
    const filled = replacePlaceholders(block.source, ph, (p) => formatValue(resolve(p.name)).replace(/\s*\n\s*/g, ' '));
    return filled.trim() === '' ? null : `${filled}\n`;
  }
  if (block.emitKeys.length === 0) return null;
  const inline = (s: string): string => unmask(s, (i) => formatValue(resolve(nameAt(i))));
  const fixValue = (s: string): unknown => {
    const whole = wholeToken(s);
    return whole === null ? inline(s) : yamlValue(resolve(nameAt(whole)));
  };
  const out: Values = {};
  for (const key of block.emitKeys) setOwn(out, inline(key), mapStrings(block.data[key], fixValue, inline));
  return stringify(out, { lineWidth: 0 });
}

/**
 * The filled template: frontmatter (when it has anything to emit) and body; the system prompt is not part of it.
 * @param values the model's JSON object (`template_fields`)
 * @param text the input text, for `{{text}}`
 * @param context the request's `context`, for placeholders the model did not fill
 */
export function fillTemplate(parsed: ParsedTemplate, values: Values, text: string, context: Values): string {
  const resolve = resolver(values ?? {}, text, context ?? {});
  const bodyPlaceholders = parsed.placeholders.filter((p) => p.section === 'body');
  const body = fillText(parsed.body, bodyPlaceholders, resolve);
  const fm = parsed.frontmatterBlock ? renderFrontmatter(parsed.frontmatterBlock, resolve) : null;
  if (fm === null) return parsed.frontmatterBlock ? body.replace(/^\n+/, '') : body;
  return `---\n${fm}---\n${body}`;
}

/**
 * The system prompt with known names substituted (`{{name}}`, `{{name|…}}` or `{name}` whose name is in `vars`);
 * unknown placeholders stay as written, since a prompt may show JSON or braces on purpose. Null when the template
 * has none.
 */
export function renderSystemPrompt(parsed: ParsedTemplate, vars: Values): string | null {
  if (parsed.systemPrompt === null) return null;
  const prompt = parsed.systemPrompt;
  return replacePlaceholders(prompt, scanPlaceholders(prompt, 'systemprompt'), (p) => {
    const v = ownValue(vars, p.name);
    return v === undefined ? p.raw : formatValue(v);
  });
}

/** The fields the model has to fill: those the context does not give (a non-null own value). */
export function modelFields(parsed: ParsedTemplate, context: Values): TemplateField[] {
  return parsed.fields.filter((f) => ownValue(context ?? {}, f.name) === undefined);
}

/**
 * Whether a model call is needed. False for a template without fields (then the service answers the input text
 * unchanged) and for one whose fields the context fills entirely (then {@link renderWithoutModel} fills it).
 */
export function needsModel(parsed: ParsedTemplate, context: Values): boolean {
  return modelFields(parsed, context).length > 0;
}

/**
 * The `transformed_text` when no model is called: the input text unchanged for a template without fields
 * (contract §5), else the template filled from the context alone.
 */
export function renderWithoutModel(parsed: ParsedTemplate, text: string, context: Values): string {
  return parsed.fields.length === 0 ? text : fillTemplate(parsed, {}, text, context);
}
