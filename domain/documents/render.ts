import type { DocBlock, DocPart, DocumentModel, NoteKind, PartKind } from './model';
import { blockMarkdown, escapeInline, inlineMarkdown, markdownPlain, plainText } from './render-inline';
import { tableMarkdown, tableText, type TableFormat } from './render-table';

export type { TableFormat } from './render-table';

/**
 * The one renderer of the document model (contract §12): `extracted_text`, `markdown` and the per-part entries of
 * `metadata.text_contents[]`, the same rules for every format. Readers never write Markdown.
 */

/** One part's `metadata.text_contents[]` entry: `page` is the part's 1-based index in the document. */
export interface PartContent {
  page: number;
  part: PartKind;
  name?: string;
  text: string;
  markdown?: string;
}

export interface RenderOptions {
  /** Adds the Markdown (`output_format=markdown`). */
  markdown: boolean;
  tableFormat?: TableFormat;
  /** The 1-based range of parts to render (`page_start`/`page_end`); the whole document by default. */
  first?: number;
  last?: number;
}

export interface Rendered {
  text: string;
  markdown?: string;
  contents: PartContent[];
}

const NOTE_LABELS: Record<Exclude<NoteKind, 'footnote' | 'endnote'>, string> = {
  comment: 'Comment',
  speaker_notes: 'Notes',
};

const quoted = (md: string) =>
  md
    .split('\n')
    .map((l) => (l ? `> ${l}` : '>'))
    .join('\n');

/** A code block fenced by more backticks than any run inside it. */
function fenced(text: string, language?: string): string {
  const longest = Math.max(2, ...(text.match(/^`+/gm) ?? []).map((r) => r.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${(language ?? '').replace(/[^\w+#.-]/g, '')}\n${text.replace(/\n$/, '')}\n${fence}`;
}

/** Renders one part's blocks; list items carry their numbering and indentation from item to item. */
class PartWriter {
  private md: string[] = [];
  private txt: string[] = [];
  private footnotes: string[] = [];
  /** The marker widths of the open list levels (a nested item is indented by its parents' widths). */
  private widths: number[] = [];
  private counters: number[] = [];
  private inList = false;

  constructor(private readonly tableFormat: TableFormat) {}

  private push(md: string, text: string, listItem = false): void {
    // List items are one list (single line breaks); anything else is a block of its own.
    const sep = listItem && this.inList ? '\n' : '\n\n';
    if (md) this.md.push(this.md.length ? sep + md : md);
    if (text) this.txt.push(this.txt.length ? sep + text : text);
    this.inList = listItem;
  }

  private listItem(b: Extract<DocBlock, { type: 'list_item' }>): void {
    const level = Math.max(0, Math.min(b.level, 20));
    if (!this.inList) {
      this.widths = [];
      this.counters = [];
    }
    this.widths.length = level + 1;
    this.counters.length = level + 1;
    const n = b.ordered ? (b.number ?? (this.counters[level] ?? 0) + 1) : 0;
    this.counters[level] = n;
    const marker = b.ordered ? `${n}.` : '-';
    this.widths[level] = marker.length + 1;
    const indent = ' '.repeat(this.widths.slice(0, level).reduce((a, w) => a + (w ?? 2), 0));
    const body = blockMarkdown(b.text).replace(/\\\n/g, `\\\n${indent}${' '.repeat(marker.length + 1)}`);
    this.push(`${indent}${marker} ${body}`, `${'  '.repeat(level)}${marker} ${plainText(b.text).trim()}`, true);
  }

  block(b: DocBlock): void {
    switch (b.type) {
      case 'heading': {
        const level = Math.max(1, Math.min(6, b.level));
        return this.push(
          `${'#'.repeat(level)} ${inlineMarkdown(b.text).replace(/\s+/g, ' ').trim()}`,
          plainText(b.text).trim(),
        );
      }
      case 'paragraph':
        return this.push(blockMarkdown(b.text), plainText(b.text).trim());
      case 'list_item':
        return this.listItem(b);
      case 'table':
        return this.push(tableMarkdown(b, this.tableFormat), tableText(b.rows));
      case 'code':
        return this.push(fenced(b.text, b.language), b.text.replace(/\n$/, ''));
      case 'quote':
        return this.push(quoted(blockMarkdown(b.text)), plainText(b.text).trim());
      case 'note':
        return this.note(b);
      case 'image':
        return this.push(`![${escapeInline(b.alt ?? '')}](images/${encodeURI(b.name)})`, '');
      case 'fields':
        return this.push(
          b.fields.map(([k, v]) => `**${escapeInline(k)}:** ${inlineMarkdown(v.replace(/\s+/g, ' '))}`).join('\\\n'),
          b.fields.map(([k, v]) => `${k}: ${v}`).join('\n'),
        );
      case 'rule':
        return this.push('---', '');
      case 'markdown':
        return this.push(b.text.trim(), markdownPlain(b.text));
    }
  }

  /** Footnotes and endnotes become `[^n]` definitions at the part's end; comments and notes labelled quotes. */
  private note(b: Extract<DocBlock, { type: 'note' }>): void {
    const text = plainText(b.text).trim();
    if (b.kind === 'footnote' || b.kind === 'endnote') {
      const label =
        (b.label ?? String(this.footnotes.length + 1)).replace(/[^\w-]/g, '') || String(this.footnotes.length + 1);
      this.footnotes.push(`[^${label}]: ${blockMarkdown(b.text).replace(/\\\n/g, '\\\n    ')}`);
      this.txt.push(`${this.txt.length ? '\n\n' : ''}[${label}] ${text}`);
      this.inList = false;
      return;
    }
    const who = b.author ? ` (${escapeInline(b.author)})` : '';
    const label = `**${NOTE_LABELS[b.kind]}${who}:**`;
    this.push(
      quoted(`${label} ${blockMarkdown(b.text)}`),
      `${NOTE_LABELS[b.kind]}${b.author ? ` (${b.author})` : ''}: ${text}`,
    );
  }

  result(): { markdown: string; text: string } {
    const notes = this.footnotes.length ? `\n\n${this.footnotes.join('\n')}` : '';
    return { markdown: this.md.join('') + notes, text: this.txt.join('') };
  }
}

/**
 * A part's title when its blocks do not start with it: a sheet's or an attachment's name, which no block carries.
 */
function partHeading(part: DocPart): DocBlock | null {
  if (!part.name || part.kind === 'page' || part.kind === 'document' || part.kind === 'message') return null;
  const first = part.blocks[0];
  if (first?.type === 'heading' && plainText(first.text).trim() === part.name.trim()) return null;
  return { type: 'heading', level: 2, text: part.name };
}

/** One part: its text, and its Markdown when asked for. */
export function renderPart(part: DocPart, tableFormat: TableFormat = 'auto'): { markdown: string; text: string } {
  const w = new PartWriter(tableFormat);
  const heading = partHeading(part);
  if (heading) w.block(heading);
  for (const b of part.blocks) w.block(b);
  return w.result();
}

/** The document's text, Markdown and per-part entries, for the parts in the range. */
export function renderDocument(doc: DocumentModel, opts: RenderOptions): Rendered {
  const first = Math.max(1, opts.first ?? 1);
  const last = Math.min(doc.parts.length, opts.last ?? doc.parts.length);
  const contents: PartContent[] = [];
  for (let i = first; i <= last; i++) {
    const part = doc.parts[i - 1]!;
    const r = renderPart(part, opts.tableFormat ?? 'auto');
    contents.push({
      page: i,
      part: part.kind,
      ...(part.name ? { name: part.name } : {}),
      text: r.text,
      ...(opts.markdown ? { markdown: r.markdown } : {}),
    });
  }
  const join = (xs: string[]) =>
    xs
      .map((x) => x.trim())
      .filter(Boolean)
      .join('\n\n');
  return {
    text: join(contents.map((c) => c.text)),
    ...(opts.markdown ? { markdown: `${join(contents.map((c) => c.markdown ?? ''))}\n` } : {}),
    contents,
  };
}
