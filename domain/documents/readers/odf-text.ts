/**
 * ODF text content (an ODT's `office:text`, an ODP frame's `draw:text-box`) to blocks: `text:h` headings by
 * `text:outline-level`, paragraphs with emphasis from their spans' styles, nested lists (numbered when the list
 * style's level is `list-level-style-number`), tables with their spans (covered cells skipped), footnotes and
 * endnotes (`text:note`) and comments (`office:annotation`) as notes, and pictures (`draw:image`) from the package.
 */
import type { DocBlock, Inline, TableCell } from '../model';
import { child, elements, textOf, type XmlElement } from '../xml';
import { resolvePartPath } from '../zip';
import { InlineBuilder, type RunStyle } from './ooxml-inline';
import type { ImageCollector } from './ooxml-package';
import type { OdfStyles } from './odf-package';

export interface OdfContext {
  styles: OdfStyles;
  images: ImageCollector;
  /** Notes met in the text, appended after the part's blocks (as the DOCX reader does). */
  notes: DocBlock[];
}

interface ListState {
  level: number;
  style?: string;
}

/** The blocks of `container`'s children, appended to `out`. */
export async function readOdfBlocks(container: XmlElement, ctx: OdfContext, out: DocBlock[], list?: ListState) {
  for (const el of elements(container)) {
    switch (el.name) {
      case 'text:h': {
        const level = Math.min(Math.max(Number(el.attrs['text:outline-level'] ?? 1) || 1, 1), 6);
        // A heading's own style is bold or italic by design: only its spans' emphasis is the author's.
        await paragraph(el, ctx, out, (text) => ({ type: 'heading', level, text }), false);
        break;
      }
      case 'text:p':
        await paragraph(el, ctx, out, (text) =>
          list ? listItem(list, ctx, text) : ({ type: 'paragraph', text } as DocBlock),
        );
        break;
      case 'text:list': {
        const style = el.attrs['text:style-name'] ?? list?.style;
        const level = list ? list.level + 1 : 0;
        for (const item of elements(el))
          if (item.name === 'text:list-item' || item.name === 'text:list-header')
            await readOdfBlocks(item, ctx, out, { level, style });
        break;
      }
      case 'table:table':
        out.push(await table(el, ctx));
        break;
      case 'text:section':
      case 'text:index-body':
      case 'text:table-of-content':
      case 'text:alphabetical-index':
      case 'text:illustration-index':
      case 'office:forms':
        await readOdfBlocks(el, ctx, out, list);
        break;
      case 'draw:frame':
      case 'draw:a':
        await frame(el, ctx, out);
        break;
    }
  }
}

function listItem(list: ListState, ctx: OdfContext, text: Inline): DocBlock {
  const ordered = list.style ? (ctx.styles.numberedLevels.get(list.style)?.has(list.level + 1) ?? false) : false;
  return { type: 'list_item', level: list.level, ordered, text };
}

/** A paragraph's inline text as one block (none when empty), then the pictures and text boxes it anchors. */
async function paragraph(
  el: XmlElement,
  ctx: OdfContext,
  out: DocBlock[],
  make: (text: Inline) => DocBlock,
  styled = true,
) {
  const inline = new InlineBuilder();
  const anchored: DocBlock[] = [];
  const base = styled ? (ctx.styles.text.get(el.attrs['text:style-name'] ?? '') ?? {}) : {};
  await runs(el, base, ctx, inline, anchored);
  if (inline.text.trim()) out.push(make(inline.build()));
  out.push(...anchored);
}

async function runs(el: XmlElement, style: RunStyle, ctx: OdfContext, inline: InlineBuilder, anchored: DocBlock[]) {
  for (const c of el.children) {
    if (typeof c === 'string') {
      inline.add(c, style);
      continue;
    }
    switch (c.name) {
      case 'text:span':
        await runs(c, { ...style, ...ctx.styles.text.get(c.attrs['text:style-name'] ?? '') }, ctx, inline, anchored);
        break;
      case 'text:a':
        await runs(c, { ...style, href: c.attrs['xlink:href'] }, ctx, inline, anchored);
        break;
      // ODF collapses white space in text, so spaces, tabs and breaks are elements of their own.
      case 's':
      case 'text:s':
        inline.add(' '.repeat(Math.min(Number(c.attrs['text:c'] ?? 1) || 1, 100)), style);
        break;
      case 'text:tab':
        inline.add('\t', style);
        break;
      case 'text:line-break':
        inline.add('\n', style);
        break;
      case 'text:note':
        await note(c, ctx);
        break;
      case 'office:annotation':
        await annotation(c, ctx);
        break;
      case 'draw:frame':
      case 'draw:a':
        await frame(c, ctx, anchored);
        break;
      case 'text:bookmark-ref':
      case 'text:reference-ref':
      case 'text:date':
      case 'text:time':
      case 'text:page-number':
      case 'text:page-count':
      case 'text:title':
      case 'text:author-name':
      case 'text:sequence':
      case 'text:meta':
      case 'text:ruby':
      case 'text:ruby-base':
        await runs(c, style, ctx, inline, anchored);
        break;
    }
  }
}

async function note(el: XmlElement, ctx: OdfContext) {
  const kind = el.attrs['text:note-class'] === 'endnote' ? 'endnote' : 'footnote';
  const label = textOf(child(el, 'text:note-citation')).trim();
  const text = await flatText(child(el, 'text:note-body'), ctx);
  if (text) ctx.notes.push(label ? { type: 'note', kind, label, text } : { type: 'note', kind, text });
}

async function annotation(el: XmlElement, ctx: OdfContext) {
  const author = textOf(child(el, 'dc:creator')).trim();
  const text = await flatText(el, ctx);
  if (text)
    ctx.notes.push(author ? { type: 'note', kind: 'comment', author, text } : { type: 'note', kind: 'comment', text });
}

/**
 * The paragraphs of a note, a comment or a table cell as one text, a line each. Notes met inside a table cell are
 * kept (`keepNotes`); inside a note or a comment they are not (an office suite cannot nest them either).
 */
export async function flatText(el: XmlElement | undefined, ctx: OdfContext, keepNotes = false): Promise<string> {
  if (!el) return '';
  const inner: DocBlock[] = [];
  await readOdfBlocks(el, keepNotes ? ctx : { ...ctx, notes: [] }, inner);
  return inner
    .map((b) => ('text' in b && typeof b.text !== 'undefined' ? plain(b.text) : ''))
    .filter((t) => t)
    .join('\n');
}

const plain = (text: Inline | string) => (typeof text === 'string' ? text : text.map((r) => r.text).join(''));

/** A frame: its picture (the package's, never a linked one), its text box's blocks, or its table. */
async function frame(el: XmlElement, ctx: OdfContext, out: DocBlock[]) {
  if (el.name === 'draw:a') {
    for (const f of elements(el, 'draw:frame')) await frame(f, ctx, out);
    return;
  }
  const image = child(el, 'draw:image');
  const href = image?.attrs['xlink:href'];
  if (href && !/^[a-z][a-z0-9+.-]*:/i.test(href)) {
    const name = await ctx.images.add(resolvePartPath('content.xml', href));
    const alt = textOf(child(el, 'svg:desc') ?? child(el, 'svg:title')).trim();
    if (name) out.push(alt ? { type: 'image', name, alt } : { type: 'image', name });
  }
  const box = child(el, 'draw:text-box');
  if (box) await readOdfBlocks(box, ctx, out);
  const tbl = child(el, 'table:table');
  if (tbl) out.push(await table(tbl, ctx));
}

/** Rows of a table, from the row groups ODF allows (header rows counted for `headerRows`). */
function rowsOf(el: XmlElement, header: { count: number }, inHeader = false): XmlElement[] {
  const rows: XmlElement[] = [];
  for (const c of elements(el)) {
    if (c.name === 'table:table-row') {
      rows.push(c);
      if (inHeader) header.count++;
    } else if (c.name === 'table:table-header-rows') rows.push(...rowsOf(c, header, true));
    else if (c.name === 'table:table-rows' || c.name === 'table:table-row-group')
      rows.push(...rowsOf(c, header, inHeader));
  }
  return rows;
}

async function table(el: XmlElement, ctx: OdfContext): Promise<DocBlock> {
  const header = { count: 0 };
  const rows: TableCell[][] = [];
  for (const row of rowsOf(el, header)) {
    const cells: TableCell[] = [];
    for (const cell of elements(row, 'table:table-cell')) {
      const inline = new InlineBuilder();
      inline.add(await flatText(cell, ctx, true));
      const out: TableCell = { text: inline.build() };
      const colspan = Number(cell.attrs['table:number-columns-spanned'] ?? 1);
      const rowspan = Number(cell.attrs['table:number-rows-spanned'] ?? 1);
      if (colspan > 1) out.colspan = colspan;
      if (rowspan > 1) out.rowspan = rowspan;
      cells.push(out);
    }
    rows.push(cells);
  }
  return header.count ? { type: 'table', rows, headerRows: header.count } : { type: 'table', rows };
}
