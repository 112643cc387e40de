/**
 * Placeholder scanning and value formatting shared by the parser and the filler.
 *
 * Grammar (contract §5), as this scanner reads it:
 * - `{{name}}`, `{{ name }}`, `{{name|description}}`, `{{ name | description }}`: spaces and tabs around the name
 *   are allowed inside double braces; the description runs to the closing `}}` and may not contain braces.
 * - `{name}`, `{name|description}`: single braces around a name, no whitespace before it (`{ name }` stays
 *   literal); the description runs to the closing `}` on the same line and may not contain braces (the spec's and
 *   README's `# {title|a short title}` fills `title`).
 * - Names match `[A-Za-z][A-Za-z0-9_]*`; anything else in braces (`{ not a field }`, `{"a":1}`, `{{a-b}}`) is literal.
 * - The innermost valid placeholder wins: `{{{x}}}` is a literal `{`, the field `{{x}}`, a literal `}`.
 * - `text` is reserved in every form: it is the input text, never a field.
 */

/** The reserved placeholder name that stands for the input text. */
export const TEXT_PLACEHOLDER = 'text';

/** A valid placeholder (and field) name. */
export const FIELD_NAME_RE = /^[A-Za-z][A-Za-z0-9_]*$/;

const PLACEHOLDER_RE = /\{\{[ \t]*([A-Za-z][A-Za-z0-9_]*)[ \t]*(?:\|([^{}]*))?\}\}|\{([A-Za-z][A-Za-z0-9_]*)(?:\|([^{}\n]*))?\}/g;

/** Where a placeholder sits: the YAML frontmatter, the Markdown body or the system prompt. */
export type TemplateSection = 'frontmatter' | 'body' | 'systemprompt';

/** One placeholder occurrence; `start`/`end` are offsets into its section's text. */
export interface Placeholder {
  /** The placeholder exactly as written, braces included. */
  raw: string;
  name: string;
  /** Inline `|description`, trimmed; null when absent or empty. */
  description: string | null;
  braces: 1 | 2;
  /** `text` is the input text; every other name is a field. */
  kind: 'text' | 'field';
  section: TemplateSection;
  start: number;
  end: number;
}

/** Every placeholder in `source`, in order. */
export function scanPlaceholders(source: string, section: TemplateSection): Placeholder[] {
  const found: Placeholder[] = [];
  for (const m of source.matchAll(PLACEHOLDER_RE)) {
    const name = m[1] ?? m[3];
    if (name === undefined) continue;
    const description = (m[1] !== undefined ? m[2] : m[4])?.trim() || null;
    found.push({
      raw: m[0],
      name,
      description,
      braces: m[1] !== undefined ? 2 : 1,
      kind: name === TEXT_PLACEHOLDER ? 'text' : 'field',
      section,
      start: m.index,
      end: m.index + m[0].length,
    });
  }
  return found;
}

/** Rebuilds `source`, replacing each placeholder with what `replace` returns for it. */
export function replacePlaceholders(
  source: string,
  placeholders: readonly Placeholder[],
  replace: (p: Placeholder, index: number) => string,
): string {
  let out = '';
  let at = 0;
  placeholders.forEach((p, i) => {
    out += source.slice(at, p.start) + replace(p, i);
    at = p.end;
  });
  return out + source.slice(at);
}

/** True when the placeholder is the only non-blank thing on its line; returns that line's indentation. */
export function blockIndent(source: string, p: Placeholder): string | null {
  const lineStart = source.lastIndexOf('\n', p.start - 1) + 1;
  const nl = source.indexOf('\n', p.end);
  const lineEnd = nl === -1 ? source.length : nl;
  const before = source.slice(lineStart, p.start);
  const after = source.slice(p.end, lineEnd);
  return /^[ \t]*$/.test(before) && /^[ \t]*$/.test(after) ? before : null;
}

/** Own, non-null value of `key` in `record` (never an inherited one such as `constructor`). */
export function ownValue(record: Record<string, unknown> | undefined | null, key: string): unknown {
  if (!record || !Object.prototype.hasOwnProperty.call(record, key)) return undefined;
  const v = record[key];
  return v === null ? undefined : v;
}

function formatItem(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value) ?? '';
}

/**
 * Text for a value put into a template.
 * Strings as they are; numbers and booleans via `String`; objects as compact JSON; missing values as `''`.
 * Arrays: comma-joined (`a, b`) inline; a Markdown bullet list (`- a\n- b`) when `indent` is given, i.e. the
 * placeholder stands alone on its line (continuation lines keep that line's indentation).
 */
export function formatValue(value: unknown, indent: string | null = null): string {
  if (!Array.isArray(value)) return formatItem(value);
  const items = value.map(formatItem);
  if (indent === null) return items.join(', ');
  return items.map((item, i) => `${i === 0 ? '' : indent}- ${item.replace(/\n/g, `\n${indent}  `)}`).join('\n');
}
