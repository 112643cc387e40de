import type { Inline, TableCell } from './model';

/**
 * A block's text as plain text and as Markdown: Markdown escaping done once, here, so a reader's text never turns
 * into markup it did not mean (a paragraph that starts with `#` or `1.` stays a paragraph).
 */

/** The plain text of an inline. */
export const plainText = (t: Inline): string => (typeof t === 'string' ? t : t.map((r) => r.text).join(''));

/**
 * Escapes what Markdown reads inside a line: backslashes, emphasis and code marks, brackets, HTML's `<` and `&`
 * before a name. `_` only where it could open or close emphasis (not inside `snake_case`).
 */
export function escapeInline(s: string): string {
  return s
    .replace(/[\\`*[\]<~]/g, (c) => `\\${c}`)
    .replace(/&(?=[#a-zA-Z0-9]+;)/g, '&amp;')
    .replace(/(^|[^A-Za-z0-9])_|_(?=[^A-Za-z0-9]|$)/g, (m) => m.replace('_', '\\_'));
}

/** Escapes what Markdown reads at the start of a line: headings, quotes, list markers, rules, setext underlines, tables. */
export function escapeLineStart(line: string): string {
  return line
    .replace(/^(\s*)([#>+|=])/, '$1\\$2')
    .replace(/^(\s*)-(?=\s|-|$)/, '$1\\-')
    .replace(/^(\s*)(\d{1,9})([.)])(?=\s|$)/, '$1$2\\$3');
}

/** Wraps `inner` in `mark` with the spaces at its ends kept outside (`** bold**` is not emphasis). */
function mark(inner: string, open: string, close = open): string {
  const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(inner)!;
  return m[2] ? `${m[1]}${open}${m[2]}${close}${m[3]}` : inner;
}

/** A code span with a fence longer than any backtick run inside it. */
function codeSpan(s: string): string {
  const longest = Math.max(0, ...(s.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(longest + 1);
  const pad = s.startsWith('`') || s.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${s}${pad}${fence}`;
}

/** The Markdown of an inline: escaped text with its emphasis, code, strike-through and links. */
export function inlineMarkdown(t: Inline): string {
  if (typeof t === 'string') return escapeInline(t);
  return t
    .map((r) => {
      if (!r.text) return '';
      let s = r.code ? codeSpan(r.text) : escapeInline(r.text);
      if (r.strike) s = mark(s, '~~');
      if (r.italic) s = mark(s, '*');
      if (r.bold) s = mark(s, '**');
      if (r.href && !r.code) s = `[${s}](<${r.href.replace(/[<>\s]/g, encodeURIComponent)}>)`;
      return s;
    })
    .join('');
}

/** A block's Markdown text on lines of its own: each line's start escaped, inner line breaks kept as hard breaks. */
export function blockMarkdown(t: Inline): string {
  return inlineMarkdown(t)
    .split(/\r?\n/)
    .map((l) => escapeLineStart(l.trim()))
    .join('\\\n');
}

/** A cell's Markdown on one line (a pipe table's cell): pipes escaped, line breaks as `<br>`. */
export function cellMarkdown(c: TableCell | undefined): string {
  if (!c) return '';
  return inlineMarkdown(c.text).trim().replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
}

/** Text for an HTML element: `&`, `<`, `>` and quotes as entities, line breaks as `<br>`. */
export function escapeHtml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/\r?\n/g, '<br>');
}

/** The text of Markdown source: its block marks, emphasis, code fences and link syntax removed. */
export function markdownPlain(md: string): string {
  // A fenced code block (the Markdown reader keeps one whole): its lines as they are, without the fences.
  const fence = /^[ \t]{0,3}(`{3,}|~{3,})[^\n]*\n([\s\S]*?)(?:\n[ \t]{0,3}\1[`~]*[ \t]*)?\s*$/.exec(md);
  if (fence) return fence[2]!.replace(/\n$/, '');
  return md
    .replace(/^[ \t]{0,3}#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$/gm, '$1')
    .replace(/^[ \t]{0,3}>[ \t]?/gm, '')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/(\*\*|__|~~)(?=\S)([\s\S]*?\S)\1/g, '$2')
    .replace(/(^|[^\w*])[*_](?=\S)([^*_\n]*?\S)[*_](?!\w)/g, '$1$2')
    .replace(/`([^`\n]+)`/g, '$1')
    .replace(/\\([\\`*_{}[\]()#+\-.!|>~])/g, '$1')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
