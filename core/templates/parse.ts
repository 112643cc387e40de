import { parseDocument } from 'yaml';
import { hasToken, isPlainObject, mapStrings, maskToken, unmask } from './mask';
import { scanPlaceholders, type Placeholder } from './scan';
import type { FrontmatterBlock, ParsedTemplate, TemplateField } from './types';

/**
 * Template parsing (contract §5). Pure: no file system, never throws, whatever the input.
 *
 * Layout of a template:
 * ```
 * ---                                   optional YAML frontmatter
 * title: Meeting minutes                template metadata (not emitted)
 * Datum: {{date|Date of the meeting}}   note property: emitted, filled by placeholder name (`date`)
 * ---
 * # {{title|A fitting title}}           Markdown body
 * {{text}}                              the input text
 * --- systemprompt
 * You are ...                           system prompt (context placeholders substituted)
 * ```
 *
 * Frontmatter entries, top-level key by key:
 * 1. a value holding a placeholder is a note property: emitted in the output with its placeholders filled;
 *    the field is named by the placeholder, not by the key (`Personen: {{personen}}` fills field `personen`);
 * 2. `title`, `description`, `language`, `lang` with a static value are template metadata, not emitted;
 * 3. `fields:` (a mapping field name → description) describes fields, not emitted;
 * 4. another static string whose key is the name of a field describes that field, not emitted;
 * 5. any other static entry (`type: meeting-minutes`) is emitted unchanged: metadata, not a field.
 * A frontmatter that is not a YAML mapping even with its placeholders masked is emitted as text, filled.
 */

const METADATA_KEYS = new Set(['title', 'description', 'language', 'lang']);
const FIELDS_KEY = 'fields';
const SYSTEM_PROMPT_LINE = /^--- systemprompt[ \t]*$/m;
function splitSystemPrompt(source: string): { head: string; systemPrompt: string | null; found: boolean } {
  const m = SYSTEM_PROMPT_LINE.exec(source);
  if (!m) return { head: source, systemPrompt: null, found: false };
  const rest = source.slice(m.index + m[0].length).trim();
  return { head: source.slice(0, m.index), systemPrompt: rest === '' ? null : rest, found: true };
}

function splitFrontmatter(head: string): { frontmatter: string | null; body: string } {
  const open = /^---[ \t]*\n/.exec(head);
  if (!open) return { frontmatter: null, body: head };
  const rest = head.slice(open[0].length);
  const close = /^(?:---|\.\.\.)[ \t]*$/m.exec(rest);
  if (!close) return { frontmatter: null, body: head };
  const frontmatter = rest.slice(0, close.index).replace(/\n$/, '');
  const body = rest.slice(close.index + close[0].length).replace(/^\n/, '');
  return { frontmatter, body };
}

function parseMaskedYaml(source: string, placeholders: Placeholder[]): Record<string, unknown> | null {
  let masked = '';
  let at = 0;
  placeholders.forEach((p, i) => {
    masked += source.slice(at, p.start) + maskToken(i);
    at = p.end;
  });
  masked += source.slice(at);
  const doc = parseDocument(masked, { logLevel: 'error', uniqueKeys: true });
  if (doc.errors.length > 0) return null;
  const data: unknown = doc.toJS();
  if (data === null || data === undefined) return {};
  return isPlainObject(data) ? data : null;
}

function collectFields(placeholders: Placeholder[]): TemplateField[] {
  const byName = new Map<string, TemplateField>();
  for (const p of placeholders) {
    if (p.kind !== 'field') continue;
    const known = byName.get(p.name);
    if (!known) byName.set(p.name, { name: p.name, description: p.description, source: 'llm' });
    else if (known.description === null && p.description !== null) known.description = p.description;
  }
  return [...byName.values()];
}

function analyseFrontmatter(
  block: FrontmatterBlock,
  fieldNames: Set<string>,
): { descriptions: Record<string, string>; metadata: Record<string, string> } {
  const descriptions: Record<string, string> = {};
  const metadata: Record<string, string> = {};
  if (!block.data) return { descriptions, metadata };
  for (const [key, value] of Object.entries(block.data)) {
    if (hasToken(key) || hasToken(value)) {
      block.emitKeys.push(key);
    } else if (key === FIELDS_KEY) {
      if (!isPlainObject(value)) continue;
      for (const [name, d] of Object.entries(value)) {
        if (typeof d === 'string' && d.trim() !== '') descriptions[name] ??= d.trim();
      }
    } else if (METADATA_KEYS.has(key)) {
      if (typeof value === 'string' && value.trim() !== '') metadata[key === 'lang' ? 'language' : key] ??= value.trim();
    } else if (typeof value === 'string' && fieldNames.has(key) && value.trim() !== '') {
      descriptions[key] ??= value.trim();
    } else {
      block.emitKeys.push(key);
    }
  }
  return { descriptions, metadata };
}

/** Parses a template source (CRLF and a BOM are tolerated). */
export function parseTemplate(source: string): ParsedTemplate {
  const normalized = source.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const { head, systemPrompt, found } = splitSystemPrompt(normalized);
  const split = splitFrontmatter(head);
  let body = split.body;
  if (found) {
    body = body.replace(/\s+$/, '');
    if (body !== '') body += '\n';
  }

  let block: FrontmatterBlock | null = null;
  if (split.frontmatter !== null) {
    const fmPlaceholders = scanPlaceholders(split.frontmatter, 'frontmatter');
    block = {
      source: split.frontmatter,
      placeholders: fmPlaceholders,
      data: parseMaskedYaml(split.frontmatter, fmPlaceholders),
      emitKeys: [],
    };
  }
  const placeholders = [...(block?.placeholders ?? []), ...scanPlaceholders(body, 'body')];
  const fields = collectFields(placeholders);
  const { descriptions: frontmatterDescriptions, metadata } = block
    ? analyseFrontmatter(block, new Set(fields.map((f) => f.name)))
    : { descriptions: {}, metadata: {} };

  let frontmatter: Record<string, unknown> = {};
  if (block?.data) {
    const fm = block.placeholders;
    const show = (s: string): string => unmask(s, (i) => `{{${fm[i]?.name ?? ''}}}`);
    const shown = mapStrings(block.data, show, show);
    frontmatter = isPlainObject(shown) ? shown : {};
  }
  return {
    frontmatter,
    metadata,
    frontmatterBlock: block,
    frontmatterDescriptions,
    body,
    systemPrompt,
    fields,
    placeholders,
  };
}
