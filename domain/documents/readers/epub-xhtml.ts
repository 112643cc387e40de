/**
 * An EPUB chapter's XHTML (already parsed by `xml.ts`, so depth-bounded and entity-safe) into blocks: headings,
 * paragraphs with emphasis and links, nested lists, tables with their spans, block quotes, code, rules, footnote
 * asides as notes and images from the package. readers/html.ts walks a cheerio tree and keeps only `data:` images,
 * so it cannot be reused here: an EPUB's images are files of the package, resolved against the chapter's path.
 * Remote references are never fetched: a remote image keeps only its alt text.
 */
import { INLINE_ELEMENTS } from './inline-elements';
import type { DocBlock, Inline, InlineRun, NoteKind, TableCell } from '../model';
import { textOf, type XmlElement, type XmlNode } from '../xml';
import { resolvePartPath } from '../zip';
import type { ClassEmphasis } from './epub-css';

/** Reads a package image once and names it; `undefined` when the file is not in the package. */
export type ImageResolver = (partPath: string) => Promise<string | undefined>;

const SKIPPED = new Set(['head', 'script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'canvas']);
// An EPUB's images are inline (a figure's file beside its text), and XHTML's few inline elements more.
const INLINE = new Set([...INLINE_ELEMENTS, 'img', 'dfn', 'var', 'bdi', 'bdo', 'ruby', 'rt', 'wbr']);

interface Style {
  bold?: boolean;
  italic?: boolean;
  code?: boolean;
  strike?: boolean;
  href?: string;
}

/** The element's local name, lower-cased, whether the chapter declared the XHTML namespace or not. */
const tagOf = (el: XmlElement) => (el.name.startsWith('h:') ? el.name.slice(2) : el.name).toLowerCase();
const isRemote = (ref: string) => /^[a-z][a-z0-9+.-]*:/i.test(ref.trim());
/** XML's white space only: a no-break space (`&nbsp;`) is the author's and stays. */
const WS = /[ \t\r\n]+/g;
const squash = (s: string) => s.replace(WS, ' ').trim();

export class XhtmlWalker {
  readonly blocks: DocBlock[] = [];

  constructor(
    /** The chapter's path in the package: image sources resolve against it. */
    private readonly part: string,
    private readonly addImage: ImageResolver,
    /** Emphasis by class, from the book's style sheets (`epub-css.ts`). */
    private readonly classes: Map<string, ClassEmphasis> = new Map(),
  ) {}

  private runs(nodes: XmlNode[], style: Style, out: InlineRun[]): void {
    for (const n of nodes) {
      if (typeof n === 'string') {
        const text = n.replace(WS, ' ');
        if (text) out.push({ text, ...style });
        continue;
      }
      const tag = tagOf(n);
      if (SKIPPED.has(tag)) continue;
      if (tag === 'br') out.push({ text: '\n' });
      else if (tag === 'img') {
        // The image itself becomes a block after its paragraph (`images` below); inline only a remote one's alt.
        const alt = n.attrs.alt?.trim();
        if (alt && isRemote(n.attrs.src ?? '')) out.push({ text: alt, ...style });
      } else {
        // A block inside inline content (paragraphs in a list item or a cell) is set off from its neighbours.
        if (!INLINE.has(tag) && out.length) out.push({ text: ' ' });
        const s: Style = { ...style };
        if (tag === 'b' || tag === 'strong') s.bold = true;
        if (tag === 'i' || tag === 'em' || tag === 'cite' || tag === 'dfn') s.italic = true;
        if (tag === 'code' || tag === 'kbd' || tag === 'samp') s.code = true;
        if (tag === 's' || tag === 'del' || tag === 'strike') s.strike = true;
        this.classStyle(n, s);
        if (tag === 'a' && n.attrs.href && !/^\s*javascript:/i.test(n.attrs.href)) s.href = n.attrs.href;
        this.runs(n.children, s, out);
      }
    }
  }

  /** Applies the emphasis the element's classes give (an explicit `normal` turns it off). */
  private classStyle(el: XmlElement, s: Style): Style {
    for (const cls of (el.attrs.class ?? '').split(WS)) {
      const e = cls ? this.classes.get(cls) : undefined;
      for (const key of ['bold', 'italic', 'strike'] as const)
        if (e?.[key] === true) s[key] = true;
        else if (e?.[key] === false) delete s[key];
    }
    return s;
  }

  /** Inline content as runs, its ends trimmed; `null` when it has no visible text. */
  private inline(nodes: XmlNode[], base: Style = {}): Inline | null {
    const out: InlineRun[] = [];
    this.runs(nodes, base, out);
    if (
      !out
        .map((r) => r.text)
        .join('')
        .trim()
    )
      return null;
    out[0] = { ...out[0]!, text: out[0]!.text.replace(/^[ \t\r\n]+/, '') };
    out[out.length - 1] = { ...out.at(-1)!, text: out.at(-1)!.text.replace(/[ \t\r\n]+$/, '') };
    // Neighbouring runs of the same emphasis are one run (styled spans split text anywhere).
    const runs: InlineRun[] = [];
    for (const r of out.filter((x) => x.text)) {
      const last = runs.at(-1);
      if (last && sameStyle(last, r)) runs[runs.length - 1] = { ...last, text: last.text + r.text };
      else runs.push(r);
    }
    // Plain text stays a string: the renderer has nothing to mark.
    return runs.every((r) => Object.keys(r).length === 1) ? runs.map((r) => r.text).join('') : runs;
  }

  /** Block content: loose inline content between blocks becomes a paragraph. */
  async walk(nodes: XmlNode[]): Promise<void> {
    let pending: XmlNode[] = [];
    const flush = async () => {
      const text = pending.length ? this.inline(pending) : null;
      if (text) this.blocks.push({ type: 'paragraph', text });
      await this.images(pending);
      pending = [];
    };
    for (const n of nodes) {
      if (typeof n === 'string' || INLINE.has(tagOf(n))) {
        pending.push(n);
        continue;
      }
      await flush();
      await this.element(n);
    }
    await flush();
  }

  private async element(el: XmlElement): Promise<void> {
    const tag = tagOf(el);
    if (SKIPPED.has(tag)) return;
    const h = /^h([1-6])$/.exec(tag);
    const epubType = el.attrs['epub:type'] ?? '';
    if (h) {
      const text = this.inline(el.children);
      if (text) this.blocks.push({ type: 'heading', level: Number(h[1]), text });
    } else if (tag === 'p') {
      const text = this.inline(el.children, this.classStyle(el, {}));
      if (text) this.blocks.push({ type: 'paragraph', text });
      await this.images(el.children);
    } else if (tag === 'ul' || tag === 'ol') await this.list(el, 0);
    else if (tag === 'table') this.table(el);
    else if (tag === 'pre') this.blocks.push({ type: 'code', text: textOf(el) });
    else if (tag === 'blockquote') {
      // Its blocks as blocks, its paragraphs quoted one by one (as the HTML reader does).
      const from = this.blocks.length;
      await this.walk(el.children);
      for (let i = from; i < this.blocks.length; i++) {
        const b = this.blocks[i]!;
        if (b.type === 'paragraph') this.blocks[i] = { type: 'quote', text: b.text };
      }
    } else if (tag === 'hr') this.blocks.push({ type: 'rule' });
    else if (/\b(footnote|endnote|rearnote)\b/.test(epubType)) {
      const kind: NoteKind = /footnote/.test(epubType) ? 'footnote' : 'endnote';
      const text = squash(textOf(el));
      if (text) this.blocks.push({ type: 'note', kind, ...(el.attrs.id ? { label: el.attrs.id } : {}), text });
    } else if (tag === 'image' || tag === 'svg:image') await this.image(el.attrs['xlink:href'] ?? el.attrs.href, '');
    else await this.walk(el.children);
  }

  /** The images inside inline content, each an image block of its own. */
  private async images(nodes: XmlNode[]): Promise<void> {
    for (const n of nodes) {
      if (typeof n === 'string') continue;
      if (tagOf(n) === 'img') await this.image(n.attrs.src, n.attrs.alt?.trim() ?? '');
      else if (!SKIPPED.has(tagOf(n))) await this.images(n.children);
    }
  }

  private async image(src: string | undefined, alt: string): Promise<void> {
    // Remote images are never fetched (their alt text was kept inline); `data:` ones are not package files either.
    if (!src || isRemote(src)) return;
    const name = await this.addImage(resolvePartPath(this.part, src));
    if (name) this.blocks.push({ type: 'image', name, ...(alt ? { alt } : {}) });
  }

  private async list(el: XmlElement, level: number): Promise<void> {
    const ordered = tagOf(el) === 'ol';
    let n = Number.parseInt(el.attrs.start ?? '1', 10) || 1;
    for (const li of el.children) {
      if (typeof li === 'string' || tagOf(li) !== 'li') continue;
      const nested = (k: XmlNode): k is XmlElement => typeof k !== 'string' && ['ul', 'ol'].includes(tagOf(k));
      const text = this.inline(li.children.filter((k) => !nested(k)));
      if (text) this.blocks.push({ type: 'list_item', level, ordered, ...(ordered ? { number: n } : {}), text });
      n++;
      for (const k of li.children) if (nested(k)) await this.list(k, level + 1);
    }
  }

  private table(el: XmlElement): void {
    const rows: TableCell[][] = [];
    let headerRows = 0;
    // Rows directly in the table or in its row groups; a nested table's rows belong to that table (its text only).
    const trs = el.children.flatMap((c) =>
      typeof c === 'string'
        ? []
        : tagOf(c) === 'tr'
          ? [c]
          : ['thead', 'tbody', 'tfoot'].includes(tagOf(c))
            ? c.children.filter((r): r is XmlElement => typeof r !== 'string' && tagOf(r) === 'tr')
            : [],
    );
    for (const tr of trs) {
      const cells: TableCell[] = [];
      for (const c of tr.children) {
        if (typeof c === 'string' || !['td', 'th'].includes(tagOf(c))) continue;
        const span = (a: string) => Math.max(1, Math.min(1000, Number.parseInt(c.attrs[a] ?? '1', 10) || 1));
        cells.push({
          text: this.inline(c.children) ?? '',
          ...(span('colspan') > 1 ? { colspan: span('colspan') } : {}),
          ...(span('rowspan') > 1 ? { rowspan: span('rowspan') } : {}),
          ...(tagOf(c) === 'th' ? { header: true } : {}),
        });
      }
      if (rows.length === headerRows && cells.length && cells.every((c) => c.header)) headerRows++;
      if (cells.length) rows.push(cells);
    }
    const caption = el.children.find((c): c is XmlElement => typeof c !== 'string' && tagOf(c) === 'caption');
    const captionText = caption ? squash(textOf(caption)) : '';
    if (rows.length)
      this.blocks.push({ type: 'table', rows, headerRows, ...(captionText ? { caption: captionText } : {}) });
  }
}

const sameStyle = (a: InlineRun, b: InlineRun) =>
  (['bold', 'italic', 'code', 'strike', 'href'] as const).every((k) => a[k] === b[k]);

/** The first heading's plain text: a chapter's name when the table of contents gives none. */
export function firstHeading(blocks: DocBlock[]): string | undefined {
  const h = blocks.find((b): b is Extract<DocBlock, { type: 'heading' }> => b.type === 'heading');
  if (!h) return undefined;
  return typeof h.text === 'string' ? h.text : h.text.map((r) => r.text).join('');
}
