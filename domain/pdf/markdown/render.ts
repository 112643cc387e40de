/**
 * The Markdown of a page's outputs (`document.ts`): headings, labels, paragraphs, list items (one list's items a
 * newline apart, other blocks a blank line), code fenced with its indentation, tables in GFM; and each output's
 * block as the page's provenance carries it (`provenance.ts`). Pure.
 */
import { joinLines, listMarker, type Block, type TextLine } from './blocks';
import type { Bbox, BlockType, PageBlock } from './provenance';
import { htmlTable } from './table-spans';
import type { Table } from './tables';

export interface Heading {
  text: string;
  size: number;
  bold: boolean;
  level?: number;
}

/** A page's output: a block of `blocks.ts`, or what the document made of one; with its box on the page. */
export type Out = ({ kind: 'heading'; h: Heading } | { kind: 'label'; text: string } | Block) & {
  box?: Bbox;
  /** A text block's type beside `paragraph` (`roles.ts`). */
  role?: 'caption' | 'footnote';
};

export const cell = (t: string) => t.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

function renderTable(rows: string[][], header?: string[]): string {
  const width = Math.max(...rows.map((r) => r.length), header?.length ?? 0);
  const pad = (r: string[]) => Array.from({ length: width }, (_, i) => cell(r[i] ?? ''));
  const [head, ...rest] = header ? [header, ...rows] : rows;
  const line = (r: string[]) => `| ${pad(r).join(' | ')} |`;
  return [line(head), `| ${Array.from({ length: width }, () => '---').join(' | ')} |`, ...rest.map(line)].join('\n');
}

function renderCode(lines: TextLine[]): string {
  const minX = Math.min(...lines.map((l) => l.x0));
  const body = lines.map((l) => ' '.repeat(Math.max(0, Math.round((l.x0 - minX) / (0.6 * l.size)))) + l.text);
  const fence = body.some((l) => l.includes('```')) ? '~~~' : '```';
  return [fence, ...body, fence].join('\n');
}

/** Text as an inline code span, its fence longer than any run of backticks in it. */
function inlineCode(t: string): string {
  if (!t) return '';
  const fence = '`'.repeat(Math.max(0, ...[...t.matchAll(/`+/g)].map((m) => m[0].length)) + 1);
  const pad = t.startsWith('`') || t.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${t}${pad}${fence}`;
}

/** A paragraph's text that Markdown would read as something else (a heading, a list, a quote) is escaped. */
const escapeStart = (t: string) => t.replace(/^(#{1,6}\s|>|[-+*]\s|\d+[.)]\s)/, (m) => `\\${m}`);

/**
 * A list item's nesting: its indent past the run's leftmost item, in steps of 1.5 em, at most one deeper than the
 * item before it and none after anything but an item, so indentation never turns into an indented code block.
 */
export const listDepth = (o: Extract<Out, { kind: 'list' }>, listBase: number, maxDepth: number) =>
  Math.max(0, Math.min(4, maxDepth, Math.round((o.indent - listBase) / (1.5 * o.size))));

/** A block's Markdown; a list item at most `maxDepth` deep. */
export function renderOut(o: Out, listBase: number, maxDepth = 4): string {
  switch (o.kind) {
    case 'heading':
      return `${'#'.repeat(o.h.level ?? 1)} ${o.h.text}`;
    case 'label':
      return `**${o.text.replace(/\*/g, '\\*')}**`;
    case 'table':
      return o.table.spans ? htmlTable(o.table.rows, o.table.spans) : renderTable(o.table.rows);
    case 'code':
      // One monospace line is no code block (a URL, a file name set in typewriter type): inline code in its own
      // paragraph. Code is monospace over several lines.
      return o.lines.length === 1 ? inlineCode(o.lines[0].text.trim()) : renderCode(o.lines);
    case 'list': {
      const rest = listMarker(o.lines[0].text)?.rest ?? o.lines[0].text;
      const depth = listDepth(o, listBase, maxDepth);
      return `${'  '.repeat(depth)}${o.marker} ${joinLines([rest, ...o.lines.slice(1).map((l) => l.text)])}`;
    }
    case 'text':
      return escapeStart(joinLines(o.lines.map((l) => l.text)));
  }
}

const TYPES: Record<Out['kind'], BlockType> = {
  heading: 'heading',
  label: 'paragraph',
  text: 'paragraph',
  list: 'list_item',
  code: 'code',
  table: 'table',
};

/** A run of outputs rendered one by one, empty ones left out; `tight` when it follows the one before on the next line. */
function renderParts(outs: readonly Out[], header?: Map<Table, string[]>): { o: Out; text: string; tight: boolean }[] {
  const lists = outs.filter((o) => o.kind === 'list') as Extract<Out, { kind: 'list' }>[];
  const base = lists.length ? Math.min(...lists.map((l) => l.indent)) : 0;
  const parts: { o: Out; text: string; tight: boolean }[] = [];
  let depth = -1;
  outs.forEach((o, i) => {
    const text =
      o.kind === 'table' && header?.has(o.table)
        ? renderTable(o.table.rows, header.get(o.table))
        : renderOut(o, base, depth + 1);
    if (!text.trim()) return;
    depth = o.kind === 'list' ? listDepth(o, base, depth + 1) : -1;
    const prev = outs[i - 1];
    // Items of one list stay together (one newline); other blocks are a blank line apart.
    const tight = o.kind === 'list' && prev?.kind === 'list' && (o.marker === '-') === (prev.marker === '-');
    parts.push({ o, text, tight });
  });
  return parts;
}

const joinParts = (parts: readonly { text: string; tight: boolean }[]) =>
  parts.map((p, i) => (i === 0 ? '' : p.tight ? '\n' : '\n\n') + p.text).join('');

/** Renders a run of outputs as Markdown. */
export function renderRun(outs: readonly Out[], header?: Map<Table, string[]>): string {
  return joinParts(renderParts(outs, header));
}

/**
 * A page's Markdown and its blocks, in reading order after the page's running headers (`before`) and before its
 * footers (`after`), which are blocks but not Markdown. The Markdown is the body blocks' text in order.
 */
export function renderPage(
  outs: readonly Out[],
  header: Map<Table, string[]>,
  before: readonly Omit<PageBlock, 'order'>[],
  after: readonly Omit<PageBlock, 'order'>[],
): { markdown: string; blocks: PageBlock[] } {
  const parts = renderParts(outs, header);
  const body = parts.map(({ o, text }): Omit<PageBlock, 'order'> => ({
    type: o.role ?? (o.kind === 'code' && o.lines.length === 1 ? 'paragraph' : TYPES[o.kind]),
    text,
    bbox: o.box ?? [0, 0, 0, 0],
    ...(o.kind === 'heading' ? { level: o.h.level ?? 1 } : {}),
  }));
  const blocks = [...before, ...body, ...after].map((b, order) => ({ ...b, order }));
  return { markdown: joinParts(parts), blocks };
}
