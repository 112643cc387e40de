/**
 * Grounded template fields (contract §14): each value a model gave is looked for in the text it was filled from
 * (match.ts); a value the text does not hold is emptied and its field named in `unsupported`, and each field gets
 * the span of the words its value came from (`null` for an empty field). A list keeps the items the text holds, each
 * with its own span, and the field's span runs from the first of them to the last; it is unsupported only when none
 * is left. Pure.
 */
import { findValue, sourceOf, type Source, type Span } from './match';

/** The words of the text a value came from: offsets into the text (end exclusive) and the words themselves. */
export interface TextSpan extends Span {
  text: string;
}

/** A field's source: its span, and for a list each kept item's. */
export interface FieldSource extends TextSpan {
  items?: TextSpan[];
}

export interface Grounded {
  /** The fields with every value the text does not hold emptied (`''`, or `[]` for a list). */
  fields: Record<string, unknown>;
  /** Per field, where its value stands in the text; null when the field is empty. */
  sources: Record<string, FieldSource | null>;
  /** The fields whose value the text does not hold, in the fields' order. */
  unsupported: string[];
}

/** What grounding adds to a template's output: offsets into the text the template was filled from. */
export interface GroundedOutput {
  template_sources: Record<string, FieldSource | null>;
  unsupported_fields: string[];
}

const spanOf = (text: string, s: Span): TextSpan => ({ text: text.slice(s.start, s.end), start: s.start, end: s.end });

/** A value's text to look for: strings as they are, numbers and booleans written out, objects by their values. */
function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return value.map(asText).join(', ');
  return Object.values(value as Record<string, unknown>)
    .map(asText)
    .join(', ');
}

const isEmpty = (v: unknown): boolean =>
  v === null || v === undefined || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0);

function groundList(source: Source, items: unknown[]): { kept: unknown[]; spans: TextSpan[] } {
  const kept: unknown[] = [];
  const spans: TextSpan[] = [];
  for (const item of items) {
    if (isEmpty(item)) continue;
    const at = findValue(source, asText(item));
    if (!at) continue;
    kept.push(item);
    spans.push(spanOf(source.text, at));
  }
  return { kept, spans };
}

/** The fields checked against `text`, the text the template was filled from. */
export function groundFields(fields: Record<string, unknown>, text: string): Grounded {
  const source = sourceOf(text);
  const out: Grounded = { fields: {}, sources: {}, unsupported: [] };
  for (const [name, value] of Object.entries(fields)) {
    if (isEmpty(value)) {
      out.fields[name] = value;
      out.sources[name] = null;
      continue;
    }
    if (Array.isArray(value)) {
      const { kept, spans } = groundList(source, value);
      out.fields[name] = kept;
      if (!spans.length) {
        out.sources[name] = null;
        out.unsupported.push(name);
        continue;
      }
      const start = Math.min(...spans.map((s) => s.start));
      const end = Math.max(...spans.map((s) => s.end));
      out.sources[name] = { ...spanOf(text, { start, end }), items: spans };
      continue;
    }
    const at = findValue(source, asText(value));
    if (at) {
      out.fields[name] = value;
      out.sources[name] = spanOf(text, at);
    } else {
      out.fields[name] = '';
      out.sources[name] = null;
      out.unsupported.push(name);
    }
  }
  return out;
}
