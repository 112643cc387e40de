import { highlightedCodeBlock, strikethrough, taskListItems } from '@joplin/turndown-plugin-gfm';
import { load, type CheerioAPI } from 'cheerio';
import TurndownService from 'turndown';
import { blankElement, cellText, expandTableSpans, rowCells, rowGroups } from './tables';

type Element = ReturnType<typeof rowCells>[number];

/** The few DOM members the rules below read; the project compiles without the DOM lib. */
interface DomNode {
  nodeName: string;
  parentNode: DomNode | null;
  previousElementSibling: DomNode | null;
  nextSibling: DomNode | null;
  children: ArrayLike<DomNode>;
  getAttribute(name: string): string | null;
}

/** Elements whose content is never document text. */
const REMOVED = 'script, style, noscript, template, iframe, object, embed, head, svg, canvas, link, meta, base';
/** Cell content that cannot live in a pipe table; flattened to inline content instead. */
const BLOCKS_IN_CELLS = 'ul, ol, h1, h2, h3, h4, h5, h6, hr, blockquote, pre';

const ordinals = new WeakMap<DomNode, number>();

function ordinal(list: DomNode, item: DomNode): number {
  if (!ordinals.has(item)) {
    const start = Number.parseInt(list.getAttribute('start') ?? '', 10);
    const first = Number.isFinite(start) ? start : 1;
    for (let i = 0; i < list.children.length; i++) ordinals.set(list.children[i]!, first + i);
  }
  return ordinals.get(item) ?? 1;
}

function alignment(cell: DomNode): string {
  const align = cell.getAttribute('align') ?? /text-align\s*:\s*(\w+)/i.exec(cell.getAttribute('style') ?? '')?.[1];
  switch (align?.toLowerCase()) {
    case 'left':
      return ':---';
    case 'right':
      return '---:';
    case 'center':
      return ':---:';
    default:
      return '---';
  }
}

/**
 * Pipe-table rules. The gfm plugin's own table rules read `table.rows` inside loops over rows and columns; under
 * domino every read of `rows` is a fresh getElementsByTagName walk, so a 300-row table took seconds (1 MB page:
 * 10 s with the plugin's rules, under 2 s without). These rules rely on prepareTables: leaf tables only,
 * rectangular, exactly one header row in a leading <thead>, no block content in cells, caption moved out.
 */
function addTableRules(service: TurndownService): void {
  service.addRule('tableSection', { filter: ['thead', 'tbody', 'tfoot'], replacement: (content) => content });
  service.addRule('tableColumns', { filter: ['caption', 'colgroup', 'col'], replacement: () => '' });
  service.addRule('tableCell', {
    filter: ['th', 'td'],
    replacement(content, node) {
      // Each pipe escaped on its own (the plugin turned "a || b" into "a \\| b"); newlines become <br>.
      const text = content
        .trim()
        .replace(/ *\r?\n/g, '<br>')
        .replace(/\|/g, '\\|')
        .padEnd(3, ' ');
      return `${(node as unknown as DomNode).previousElementSibling ? ' ' : '| '}${text} |`;
    },
  });
  service.addRule('tableRow', {
    filter: 'tr',
    replacement(content, node) {
      const row = node as unknown as DomNode;
      if (row.parentNode?.nodeName !== 'THEAD') return `\n${content}`;
      return `\n${content}\n| ${Array.from(row.children, alignment).join(' | ')} |`;
    },
  });
  service.addRule('table', {
    filter: 'table',
    replacement: (content) => `\n\n${content.replace(/\n+/g, '\n').trim()}\n\n`,
  });
}

function createService(): TurndownService {
  const service = new TurndownService({
    headingStyle: 'atx',
    hr: '---',
    codeBlockStyle: 'fenced',
    fence: '```',
    bulletListMarker: '-',
    emDelimiter: '_',
    strongDelimiter: '**',
  });
  service.use([strikethrough, taskListItems, highlightedCodeBlock]);
  addTableRules(service);
  // turndown's own list item pads markers to four characters ("-   item") and numbers items with indexOf over
  // their siblings, quadratic on long lists; this one writes "- item" / "3. item". Rules added later win.
  service.addRule('compactListItem', {
    filter: 'li',
    replacement(content, node, options) {
      const item = node as unknown as DomNode;
      const list = item.parentNode;
      const prefix = list?.nodeName === 'OL' ? `${ordinal(list, item)}. ` : `${options.bulletListMarker} `;
      const isParagraph = /\n$/.test(content);
      const body = content.replace(/^\n+|\n+$/g, '').replace(/^(\[[ x]\]) +/, '$1 ') + (isParagraph ? '\n' : '');
      return prefix + body.replace(/\n/g, `\n${' '.repeat(prefix.length)}`) + (item.nextSibling ? '\n' : '');
    },
  });
  return service;
}

const service = createService();

/** Replaces lists, headings, rules, quotes and code blocks inside cells with inline equivalents. */
function inlineCellBlocks($: CheerioAPI, table: Element): void {
  const blocks = $(table).find(BLOCKS_IN_CELLS).toArray();
  for (const el of blocks) {
    if (el.name === 'ul' || el.name === 'ol') {
      const start = Number.parseInt(el.attribs.start ?? '', 10);
      let n = Number.isFinite(start) ? start : 1;
      for (const li of $(el).children('li').toArray()) {
        $(li)
          .prepend(el.name === 'ol' ? `${n++}. ` : '• ')
          .before('<br>');
        li.name = 'span';
      }
      el.name = 'span';
    } else if (el.name === 'hr') {
      $(el).replaceWith('<br>');
    } else if (el.name === 'blockquote') {
      el.name = 'div';
    } else if (el.name === 'pre') {
      $(el)
        .find('code')
        .each((_, code) => void $(code).replaceWith($(code).contents()));
      el.name = 'code';
      el.attribs = {};
    } else {
      el.name = 'strong';
    }
  }
}

/** Merges several header rows into the last one, column by column ("Scores / Math"), dropping repeats. */
function mergeHeaderRows($: CheerioAPI, rows: Element[]): Element {
  const last = rows.at(-1)!;
  const cells = rows.map(rowCells);
  rowCells(last).forEach((cell, c) => {
    const parts: Element[] = [];
    for (const row of cells) {
      const part = row[c];
      if (!part || !cellText(part)) continue;
      if (parts.length && cellText(parts.at(-1)!) === cellText(part)) continue;
      parts.push(part);
    }
    if (parts.length > 1) $(cell).html(parts.map((p) => $(p).html() ?? '').join(' / '));
  });
  for (const row of rows.slice(0, -1)) $(row).remove();
  return last;
}

/** Gives the table exactly one header row, in a leading <thead>, and moves <tfoot> to the end. */
function normaliseHeader($: CheerioAPI, table: Element): void {
  const groups = rowGroups(table);
  const heads = groups.filter((g) => g.section?.name === 'thead' && g.rows.length > 0);
  let thead: Element;
  let header: Element;
  if (heads.length > 0) {
    thead = heads[0]!.section!;
    header = mergeHeaderRows($, heads[0]!.rows);
    for (const extra of heads.slice(1)) extra.section!.name = 'tbody';
  } else {
    const source =
      groups.find((g) => g.rows.length > 0 && g.section?.name !== 'tfoot') ?? groups.find((g) => g.rows.length > 0);
    if (!source) return;
    header = source.rows[0]!;
    thead = blankElement(source.section ?? table, 'thead');
    $(thead).append(header);
  }
  for (const cell of rowCells(header)) cell.name = 'th';
  $(table).prepend(thead);
  for (const g of groups) if (g.section?.name === 'tfoot') $(table).append(g.section);
}

/** A table that holds tables (or a single cell) is layout: its rows and cells become plain blocks. */
function flattenLayoutTable($: CheerioAPI, table: Element): void {
  for (const group of rowGroups(table)) {
    for (const row of group.rows) {
      for (const cell of rowCells(row)) cell.name = 'div';
      row.name = 'div';
    }
    if (group.section) group.section.name = 'div';
  }
  $(table)
    .children('caption')
    .each((_, caption) => void (caption.name = 'p'));
  table.name = 'div';
}

function prepareTables($: CheerioAPI): void {
  for (const table of $('table').toArray()) {
    if ($(table).find('table').length > 0) flattenLayoutTable($, table);
  }
  for (const table of $('table').toArray()) {
    const cells = $(table).find('td, th').length;
    if (cells === 0) {
      $(table).remove();
      continue;
    }
    if (cells === 1) {
      flattenLayoutTable($, table);
      continue;
    }
    $(table)
      .children('caption')
      .each((_, caption) => {
        caption.name = 'p';
        $(table).before(caption);
      });
    inlineCellBlocks($, table);
    expandTableSpans($, table, { pad: true });
    normaliseHeader($, table);
  }
}

/** turndown fences only <pre><code>; wraps bare <pre> content in <code> and carries a pre's language class over. */
function prepareCodeBlocks($: CheerioAPI): void {
  for (const pre of $('pre').toArray()) {
    const lang = /(?:^|\s)(?:language|lang)-(\S+)/.exec(pre.attribs.class ?? '')?.[1];
    const contents = $(pre).contents();
    const elements = contents.filter((_, n) => n.nodeType === 1 || (n.nodeType === 3 && n.data.trim() !== ''));
    let code =
      elements.length === 1 && elements[0]!.nodeType === 1 && (elements[0] as Element).name === 'code'
        ? (elements[0] as Element)
        : null;
    if (code) {
      contents.filter((_, n) => n !== code).remove();
    } else {
      code = blankElement(pre, 'code');
      $(code).append(contents);
      $(pre).empty().append(code);
    }
    const codeLang = /(?:^|\s)lang(?:uage)?-(\S+)/.exec(code.attribs.class ?? '')?.[1] ?? lang;
    if (codeLang) code.attribs.class = `language-${codeLang}`;
  }
}

/** Collapses runs of blank lines to one, except inside fenced code blocks, and trims the result. */
function tidy(markdown: string): string {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && !line.trim().slice(marker.length))
        fence = null;
      out.push(line);
      continue;
    }
    if (marker) fence = marker;
    if (line.trim() === '') {
      if (out.length > 0 && out.at(-1) !== '') out.push('');
      continue;
    }
    out.push(line);
  }
  return out.join('\n').trim();
}

/** The cheerio pass, in its own frame so that its tree can be collected while turndown builds its own. */
function cleanHtml(html: string): string {
  const $ = load(html);
  $(REMOVED).remove();
  prepareTables($);
  prepareCodeBlocks($);
  return $('body').html() ?? '';
}

/**
 * Converts an HTML page or fragment to GitHub-flavoured Markdown. Non-content elements are dropped; every table
 * with more than one cell becomes a rectangular pipe table with one header row (spans expanded, a header-less
 * table's first row promoted); a table that contains tables is treated as layout and flattened around them.
 */
export function htmlToMarkdown(html: string): string {
  if (!html.trim()) return '';
  const body = cleanHtml(html);
  return body.trim() ? tidy(service.turndown(body)) : '';
}
