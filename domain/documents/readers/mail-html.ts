import { load } from 'cheerio';
import type { DocBlock, InlineRun, TableCell } from '../model';

/**
 * An e-mail's HTML body as document blocks (eml.ts and msg.ts). Why blocks from the DOM and not core/html's Markdown:
 * the model's blocks carry plain text that the one renderer escapes and marks; Markdown text put into paragraph
 * blocks would be escaped a second time (`**` shown as `\*\*`), and tables, lists and quotes would reach the renderer
 * as opaque text instead of structure. cheerio (already the project's HTML parser) builds the DOM; nothing is fetched:
 * an `<img>` becomes an image block only when it names an inline part (`cid:`) the message carries.
 */

type Node = { type: string; name?: string; data?: string; attribs?: Record<string, string>; children?: Node[] };

const HEADING = /^h([1-6])$/;
const SKIPPED = new Set([
  'script',
  'style',
  'head',
  'title',
  'noscript',
  'template',
  'iframe',
  'object',
  'svg',
  'meta',
]);
const BLOCKS = new Set(['p', 'div', 'section', 'article', 'header', 'footer', 'main', 'center', 'address', 'form']);

interface Walk {
  blocks: DocBlock[];
  runs: InlineRun[];
  /** `cid:` (without angle brackets, lower-cased) → the image's name in the model. */
  images: Map<string, string>;
}

const collapse = (s: string): string => s.replace(/\s+/g, ' ');

/** Merges neighbouring runs of the same marks and trims the ends: a paragraph's inline text. */
function finish(runs: InlineRun[]): InlineRun[] | string | null {
  const out: InlineRun[] = [];
  for (const r of runs) {
    const last = out[out.length - 1];
    if (last && last.bold === r.bold && last.italic === r.italic && last.code === r.code && last.href === r.href)
      last.text += r.text;
    else out.push({ ...r });
  }
  if (out.length) {
    out[0]!.text = out[0]!.text.replace(/^\s+/, '');
    out[out.length - 1]!.text = out[out.length - 1]!.text.replace(/\s+$/, '');
  }
  const kept = out.filter((r) => r.text !== '');
  if (!kept.length) return null;
  const plain = kept.every((r) => !r.bold && !r.italic && !r.code && !r.href && !r.strike);
  return plain ? kept.map((r) => r.text).join('') : kept;
}

function flush(w: Walk): void {
  const text = finish(w.runs);
  w.runs = [];
  if (text) w.blocks.push({ type: 'paragraph', text });
}

/** The inline text of an element's subtree (cells, list items, headings), with its marks. */
function inlineOf(node: Node, images: Map<string, string>): InlineRun[] {
  const w: Walk = { blocks: [], runs: [], images };
  for (const c of node.children ?? []) walk(c, w, {}, 0);
  // Block content inside an inline context (a <p> in a cell) joins with spaces.
  const extra = w.blocks.flatMap((b) => ('text' in b && typeof b.text === 'string' ? [{ text: ` ${b.text} ` }] : []));
  return [...extra, ...w.runs];
}

const textOf = (runs: InlineRun[]): string => runs.map((r) => r.text).join('');

function table(node: Node, w: Walk): void {
  const rows: TableCell[][] = [];
  let headerRows = 0;
  const visit = (n: Node, inHead: boolean): void => {
    for (const c of n.children ?? []) {
      if (c.type !== 'tag') continue;
      if (c.name === 'tr') {
        const cells: TableCell[] = [];
        for (const cell of c.children ?? []) {
          if (cell.type !== 'tag' || (cell.name !== 'td' && cell.name !== 'th')) continue;
          const text = finish(inlineOf(cell, w.images)) ?? '';
          const out: TableCell = { text };
          const colspan = Number(cell.attribs?.colspan ?? 1);
          const rowspan = Number(cell.attribs?.rowspan ?? 1);
          if (colspan > 1) out.colspan = Math.min(colspan, 1000);
          if (rowspan > 1) out.rowspan = Math.min(rowspan, 65_534);
          if (cell.name === 'th') out.header = true;
          cells.push(out);
        }
        if (cells.length) {
          if ((inHead || cells.every((x) => x.header)) && rows.length === headerRows) headerRows++;
          rows.push(cells);
        }
      } else if (c.name !== 'table') visit(c, inHead || c.name === 'thead');
    }
  };
  visit(node, false);
  if (rows.length) w.blocks.push({ type: 'table', rows, ...(headerRows ? { headerRows } : {}) });
}

function list(node: Node, w: Walk, level: number): void {
  const ordered = node.name === 'ol';
  let n = Number.parseInt(node.attribs?.start ?? '1', 10) || 1;
  for (const li of node.children ?? []) {
    if (li.type !== 'tag' || li.name !== 'li') continue;
    const own: Node = { ...li, children: (li.children ?? []).filter((c) => c.name !== 'ul' && c.name !== 'ol') };
    const text = finish(inlineOf(own, w.images));
    if (text) w.blocks.push({ type: 'list_item', level, ordered, ...(ordered ? { number: n } : {}), text });
    n++;
    for (const sub of li.children ?? []) if (sub.name === 'ul' || sub.name === 'ol') list(sub, w, level + 1);
  }
}

function walk(node: Node, w: Walk, marks: Omit<InlineRun, 'text'>, depth: number): void {
  if (depth > 200) return; // the parser's tree is already bounded by the body's size; this bounds our recursion
  if (node.type === 'text') {
    w.runs.push({ text: collapse(node.data ?? ''), ...marks });
    return;
  }
  if (node.type !== 'tag' && node.type !== 'root') return;
  const name = node.name ?? '';
  if (SKIPPED.has(name)) return;
  const h = HEADING.exec(name);
  if (h) {
    flush(w);
    const text = finish(inlineOf(node, w.images));
    if (text) w.blocks.push({ type: 'heading', level: Number(h[1]), text });
    return;
  }
  switch (name) {
    case 'br':
      w.runs.push({ text: ' ', ...marks });
      return;
    case 'hr':
      flush(w);
      w.blocks.push({ type: 'rule' });
      return;
    case 'img': {
      const src = node.attribs?.src ?? '';
      const cid = /^cid:(.+)$/i.exec(src)?.[1];
      const image = cid && w.images.get(decodeURIComponent(cid).replace(/^<|>$/g, '').toLowerCase());
      if (image) {
        flush(w);
        w.blocks.push({ type: 'image', name: image, ...(node.attribs?.alt ? { alt: node.attribs.alt } : {}) });
      }
      return;
    }
    case 'table':
      flush(w);
      table(node, w);
      return;
    case 'ul':
    case 'ol':
      flush(w);
      list(node, w, 0);
      return;
    case 'pre':
      flush(w);
      w.blocks.push({ type: 'code', text: textOf(rawText(node)) });
      return;
    case 'blockquote': {
      flush(w);
      const inner: Walk = { blocks: [], runs: [], images: w.images };
      for (const c of node.children ?? []) walk(c, inner, {}, depth + 1);
      flush(inner);
      for (const b of inner.blocks) w.blocks.push(b.type === 'paragraph' ? { type: 'quote', text: b.text } : b);
      return;
    }
  }
  const block = BLOCKS.has(name) || name === 'body' || name === 'html';
  if (block) flush(w);
  const m = { ...marks };
  if (name === 'b' || name === 'strong') m.bold = true;
  if (name === 'i' || name === 'em') m.italic = true;
  if (name === 'code' || name === 'tt' || name === 'kbd') m.code = true;
  if (name === 's' || name === 'strike' || name === 'del') m.strike = true;
  if (name === 'a' && node.attribs?.href && !/^javascript:/i.test(node.attribs.href)) m.href = node.attribs.href;
  for (const c of node.children ?? []) walk(c, w, m, depth + 1);
  if (block) flush(w);
}

/** A `<pre>`'s text as it stands (whitespace kept). */
function rawText(node: Node): InlineRun[] {
  if (node.type === 'text') return [{ text: node.data ?? '' }];
  if (node.name === 'br') return [{ text: '\n' }];
  return (node.children ?? []).flatMap(rawText);
}

/** The blocks of an HTML body; `images` maps each inline part's Content-ID to its image name. */
export function htmlToBlocks(html: string, images: Map<string, string>): DocBlock[] {
  const $ = load(html);
  const w: Walk = { blocks: [], runs: [], images };
  walk($.root()[0] as unknown as Node, w, {}, 0);
  flush(w);
  return w.blocks;
}

/** A plain-text body as paragraphs: one per run of lines separated by a blank line (lines inside kept joined). */
export function textToBlocks(text: string): DocBlock[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) =>
      /^>/.test(p)
        ? { type: 'quote' as const, text: p.replace(/^>\s?/gm, '') }
        : { type: 'paragraph' as const, text: p.replace(/\n/g, ' ') },
    );
}
