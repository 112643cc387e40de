import { INLINE_ELEMENTS } from './inline-elements';
import { load, type Cheerio, type CheerioAPI } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import {
  DocumentError,
  type DocBlock,
  type DocImage,
  type DocumentReader,
  type InlineRun,
  type TableCell,
} from '../model';
import { decodeText } from '../text-decode';

/**
 * A web page into the model: cheerio (htmlparser2) parses it, this walks the elements into blocks. The HTML →
 * Markdown code in core/html/ writes Markdown, which a reader may not (one renderer), so its element rules are not
 * reused; its removal list is. Embedded `data:` images become the document's images; remote references (images,
 * links, styles, frames) are never fetched: a remote image keeps only its alt text.
 */

const REMOVED = 'script, style, noscript, template, iframe, object, embed, svg, canvas, link, meta, base, head';
const INLINE = new Set(INLINE_ELEMENTS);
const IMAGE_EXT: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/bmp': 'bmp',
  'image/tiff': 'tiff',
};

interface Style {
  bold?: boolean;
  italic?: boolean;
  code?: boolean;
  strike?: boolean;
  href?: string;
}

class HtmlWalker {
  readonly blocks: DocBlock[] = [];
  readonly images: DocImage[] = [];
  private imageBytes = 0;

  constructor(
    private readonly $: CheerioAPI,
    private readonly maxDepth: number,
    private readonly maxBytes: number,
  ) {}

  /** A `data:` image's bytes into the images, by a safe name; null for anything else (never fetched). */
  private dataImage(src: string): string | null {
    const m = /^data:(image\/[a-z+.-]+);base64,([\s\S]*)$/i.exec(src.trim());
    const ext = m ? IMAGE_EXT[m[1]!.toLowerCase()] : undefined;
    if (!m || !ext) return null;
    const data = Buffer.from(m[2]!.replace(/\s+/g, ''), 'base64');
    this.imageBytes += data.length;
    if (this.imageBytes > this.maxBytes)
      throw new DocumentError('PAYLOAD_TOO_LARGE', 'expansion_too_large', 'The embedded images exceed the budget.');
    const name = `image-${this.images.length + 1}.${ext}`;
    this.images.push({ name, mime: m[1]!.toLowerCase(), data: new Uint8Array(data) });
    return name;
  }

  /** The runs of an element's inline content. */
  private runs(nodes: AnyNode[], style: Style, out: InlineRun[], depth: number): void {
    for (const n of nodes) {
      if (n.type === 'text') {
        const text = (n as unknown as { data: string }).data.replace(/\s+/g, ' ');
        if (text) out.push({ text, ...style });
        continue;
      }
      if (n.type !== 'tag') continue;
      const el = n as Element;
      const tag = el.name.toLowerCase();
      if (tag === 'br') out.push({ text: '\n' });
      else if (tag === 'img') {
        // An embedded image is a block of its own (its alt text there); a remote one keeps only its alt text.
        const alt = el.attribs.alt?.trim();
        if (alt && !/^\s*data:/i.test(el.attribs.src ?? '')) out.push({ text: alt, ...style });
      } else if (depth < this.maxDepth) {
        const s: Style = { ...style };
        if (tag === 'b' || tag === 'strong') s.bold = true;
        if (tag === 'i' || tag === 'em' || tag === 'cite') s.italic = true;
        if (tag === 'code' || tag === 'kbd' || tag === 'samp') s.code = true;
        if (tag === 's' || tag === 'del' || tag === 'strike') s.strike = true;
        if (tag === 'a' && el.attribs.href && !/^\s*javascript:/i.test(el.attribs.href)) s.href = el.attribs.href;
        this.runs(el.children, s, out, depth + 1);
      }
    }
  }

  private inline(nodes: AnyNode[], depth: number): InlineRun[] | null {
    const out: InlineRun[] = [];
    this.runs(nodes, {}, out, depth);
    const text = out.map((r) => r.text).join('');
    if (!text.trim()) return null;
    // Trim the ends of the whole inline, not of each run.
    out[0] = { ...out[0]!, text: out[0]!.text.replace(/^\s+/, '') };
    out[out.length - 1] = { ...out.at(-1)!, text: out.at(-1)!.text.replace(/\s+$/, '') };
    return out.filter((r) => r.text);
  }

  private table(el: Cheerio<Element>): void {
    const rows: TableCell[][] = [];
    let headerRows = 0;
    el.find('tr').each((_, tr) => {
      // Rows of nested tables belong to their own table.
      if (this.$(tr).closest('table')[0] !== el[0]) return;
      const cells: TableCell[] = [];
      this.$(tr)
        .children('th, td')
        .each((__, c) => {
          const cell = c as Element;
          const n = (a: string) => Math.max(1, Math.min(1000, Number.parseInt(cell.attribs[a] ?? '1', 10) || 1));
          cells.push({
            text: this.$(cell).text().replace(/\s+/g, ' ').trim(),
            ...(n('colspan') > 1 ? { colspan: n('colspan') } : {}),
            ...(n('rowspan') > 1 ? { rowspan: n('rowspan') } : {}),
            ...(cell.name === 'th' ? { header: true } : {}),
          });
        });
      if (rows.length === headerRows && cells.length && cells.every((c) => c.header)) headerRows++;
      if (cells.length) rows.push(cells);
    });
    const caption = el.children('caption').text().replace(/\s+/g, ' ').trim();
    if (rows.length) this.blocks.push({ type: 'table', rows, headerRows, ...(caption ? { caption } : {}) });
  }

  private list(el: Element, level: number, depth: number): void {
    const ordered = el.name === 'ol';
    let n = Number.parseInt(el.attribs.start ?? '1', 10) || 1;
    for (const li of el.children) {
      if (li.type !== 'tag' || (li as Element).name !== 'li') continue;
      const kids = (li as Element).children;
      const own = kids.filter((k) => !(k.type === 'tag' && ['ul', 'ol'].includes((k as Element).name)));
      const text = this.inline(own, depth + 1);
      if (text) this.blocks.push({ type: 'list_item', level, ordered, ...(ordered ? { number: n } : {}), text });
      n++;
      for (const k of kids)
        if (k.type === 'tag' && ['ul', 'ol'].includes((k as Element).name))
          this.list(k as Element, level + 1, depth + 2);
    }
  }

  /** Block content: loose inline content between blocks becomes a paragraph. */
  walk(nodes: AnyNode[], depth: number): void {
    let pending: AnyNode[] = [];
    const flush = () => {
      const text = pending.length ? this.inline(pending, depth) : null;
      if (text) this.blocks.push({ type: 'paragraph', text });
      pending = [];
    };
    for (const n of nodes) {
      if (n.type === 'text' || (n.type === 'tag' && INLINE.has((n as Element).name))) {
        pending.push(n);
        continue;
      }
      if (n.type !== 'tag') continue;
      flush();
      this.element(n as Element, depth);
    }
    flush();
  }

  private element(el: Element, depth: number): void {
    const tag = el.name.toLowerCase();
    if (depth >= this.maxDepth) {
      const text = this.$(el).text().replace(/\s+/g, ' ').trim();
      if (text) this.blocks.push({ type: 'paragraph', text });
      return;
    }
    const h = /^h([1-6])$/.exec(tag);
    if (h) {
      const text = this.inline(el.children, depth + 1);
      if (text) this.blocks.push({ type: 'heading', level: Number(h[1]), text });
    } else if (tag === 'p') {
      const text = this.inline(el.children, depth + 1);
      if (text) this.blocks.push({ type: 'paragraph', text });
      this.$(el)
        .find('img')
        .each((_, img) => this.image(img));
    } else if (tag === 'ul' || tag === 'ol') this.list(el, 0, depth);
    else if (tag === 'table') this.table(this.$(el));
    else if (tag === 'pre') {
      const lang = /language-([\w+#-]+)/.exec(this.$(el).find('code').attr('class') ?? '')?.[1];
      this.blocks.push({ type: 'code', text: this.$(el).text(), ...(lang ? { language: lang } : {}) });
    } else if (tag === 'blockquote') {
      // Its blocks as blocks (a table, a list, paragraphs quoted one by one): its text run together would glue the
      // cells of a table inside it into one line.
      const from = this.blocks.length;
      this.walk(el.children, depth + 1);
      for (let i = from; i < this.blocks.length; i++) {
        const b = this.blocks[i]!;
        if (b.type === 'paragraph') this.blocks[i] = { type: 'quote', text: b.text };
      }
    } else if (tag === 'hr') this.blocks.push({ type: 'rule' });
    else if (tag === 'img') this.image(el);
    else this.walk(el.children, depth + 1);
  }

  private image(el: Element): void {
    const name = this.dataImage(el.attribs.src ?? '');
    const alt = el.attribs.alt?.trim();
    if (name) this.blocks.push({ type: 'image', name, ...(alt ? { alt } : {}) });
    else if (alt && el.parent && (el.parent as Element).name !== 'p')
      this.blocks.push({ type: 'paragraph', text: alt });
  }
}

export const readHtml: DocumentReader = async (bytes, limits) => {
  const $ = load(decodeText(bytes));
  const title = $('title').first().text().trim();
  const author = $('meta[name="author"]').attr('content')?.trim();
  const language = $('html').attr('lang')?.trim();
  $(REMOVED).remove();
  const w = new HtmlWalker($, limits.maxXmlDepth, limits.maxUncompressedBytes);
  const body = $('body')[0] ?? $.root()[0];
  w.walk(body ? (body as Element).children : [], 0);
  return {
    format: 'html',
    ...(title ? { title } : {}),
    ...(author ? { author } : {}),
    ...(language ? { language } : {}),
    parts: [{ kind: 'document', blocks: w.blocks }],
    images: w.images,
  };
};
