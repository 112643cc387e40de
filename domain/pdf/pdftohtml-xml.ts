/**
 * The reader of poppler's `pdftohtml -xml -zoom 1 -noroundcoord` output: each text chunk with its position, its font
 * (family name and size) and bold/italic, with poppler's text extraction (ligatures spelt out), and the outline with
 * its pages, as the page layouts the Markdown rules read (`markdown/types.ts`). Pure: it parses text it is given, the
 * process that writes it runs in providers/pdf/poppler-layout.ts.
 */
import type { LayoutItem, OutlineEntry, PageLayout } from './markdown/types';

/** Font names of bold and monospace faces (the same families pdf.js's layout knows). */
export const BOLD_FONT = /bold|black|heavy|semibold|demi|cmbx|cmb\d|[-,+]bd|sfbx|ptmb|phvb/i;
export const MONO_FONT = /mono|courier|consol|typewriter|cmtt|lmtt|menlo|inconsolata|sfmono|pcrr|ptmr8t-tt|code/i;

/** Where a chunk's baseline lies between its top and bottom (poppler gives the font's ascent-to-descent box). */
const BASELINE_SHARE = 0.78;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Ligature characters (U+FB00–FB06: ff, fi, fl, ffi, ffl, long st, st) that poppler passes on as they are. */
const LIGATURES = /[\uFB00-\uFB06]/g;

/** XML text with its markup (`<b>`, `<i>`, `<a>`) removed, entities decoded and ligatures spelt out. */
function textOf(xml: string): string {
  // Most chunks hold none of these: no replacing then.
  if (!/[<&\uFB00-\uFB06]/.test(xml)) return xml;
  return xml
    .replace(LIGATURES, (l) => l.normalize('NFKC'))
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
      if (e[0] === '#') {
        const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1));
        return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '';
      }
      return ENTITIES[e.toLowerCase()] ?? m;
    });
}

/** A `<text>` tag as pdftohtml writes it (attributes in this order); another form is read by `attrs`. */
const TEXT_TAG = /^<text top="([^"]*)" left="([^"]*)" width="([^"]*)" height="([^"]*)" font="([^"]*)">/;

const textAttrs = (tag: string): Record<string, string | undefined> => {
  const m = TEXT_TAG.exec(tag);
  return m
    ? { top: m[1], left: m[2], width: m[3], height: m[4], font: m[5] }
    : attrs(tag.slice(0, tag.indexOf('>') + 1));
};

const attrs = (tag: string): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([a-z]+)="([^"]*)"/gi)) out[m[1]] = m[2];
  return out;
};

const round = (v: number) => Math.round(v * 100) / 100;

export interface PopplerLayouts {
  pages: PageLayout[];
  /** The outline's bookmarks by page (1-based). */
  outline: Map<number, OutlineEntry[]>;
}

const TOKENS =
  /<page\s[^>]*>|<\/page>|<fontspec\s[^>]*\/>|<text\s[^>]*>([\s\S]*?)<\/text>|<outline>|<\/outline>|<item\s[^>]*>([\s\S]*?)<\/item>/g;

/**
 * Reads `pdftohtml -xml -zoom 1 -noroundcoord` output as it comes (`push`), page by page: each page is parsed, and
 * given to `onPage`, as soon as its `</page>` has arrived; `end` parses the rest (the outline follows the pages) and
 * gives all. Pages in points, origin bottom left, `y` the baseline. Font ids are numbered across the whole output (a
 * font is declared on the first page using it). Pure apart from the callback.
 */
export class PdftohtmlXmlReader {
  private readonly fonts = new Map<string, { size: number; bold: boolean; mono: boolean }>();
  private readonly pages: PageLayout[] = [];
  private readonly outline = new Map<number, OutlineEntry[]>();
  private page: PageLayout | undefined;
  private depth = 0;
  /** Text after the last complete page. */
  private rest = '';

  constructor(private readonly onPage?: (page: PageLayout) => void) {}

  push(text: string): void {
    // `rest` holds no whole `</page>`: a new one ends in `text`, and may begin in the last characters of `rest`.
    const tail = this.rest.slice(-('</page>'.length - 1));
    const end = (tail + text).lastIndexOf('</page>');
    if (end < 0) {
      this.rest += text;
      return;
    }
    const cut = end - tail.length + '</page>'.length;
    this.parse(this.rest + text.slice(0, cut));
    this.rest = text.slice(cut);
  }

  end(): PopplerLayouts {
    this.parse(this.rest);
    this.rest = '';
    return { pages: this.pages, outline: this.outline };
  }

  private parse(xml: string): void {
    const { fonts, outline } = this;
    for (const m of xml.matchAll(TOKENS)) {
      const tok = m[0];
      if (tok.startsWith('<page')) {
        const a = attrs(tok);
        this.page = {
          page: Number(a.number),
          width: Number(a.width),
          height: Number(a.height),
          items: [],
          segments: [],
        };
        this.pages.push(this.page);
      } else if (tok === '</page>') {
        if (this.page) this.onPage?.(this.page);
        this.page = undefined;
      } else if (tok.startsWith('<fontspec')) {
        const a = attrs(tok);
        fonts.set(a.id, {
          size: Number(a.size),
          bold: BOLD_FONT.test(a.family ?? ''),
          mono: MONO_FONT.test(a.family ?? ''),
        });
      } else if (tok.startsWith('<text')) {
        const page = this.page;
        if (!page) continue;
        const a = textAttrs(tok);
        const inner = m[1] ?? '';
        const raw = textOf(inner);
        const str = raw.trim();
        const top = Number(a.top);
        const left = Number(a.left);
        const width = Number(a.width);
        const height = Number(a.height);
        if (!str || ![top, left, width, height].every(Number.isFinite) || width <= 0) continue;
        const font = a.font === undefined ? undefined : fonts.get(a.font);
        const size = font?.size && font.size > 0 ? font.size : height;
        // Spaces at either end hold width that is no text: the extent of the text itself counts.
        const per = width / raw.length;
        const lead = raw.length - raw.trimStart().length;
        const item: LayoutItem = {
          str,
          x: round(left + lead * per),
          y: round(page.height - (top + BASELINE_SHARE * height)),
          w: round(str.length * per),
          size,
        };
        if (font?.bold || /^\s*(<[ai][^>]*>\s*)*<b>/.test(inner)) item.bold = true;
        if (font?.mono) item.mono = true;
        page.items.push(item);
      } else if (tok === '<outline>') this.depth++;
      else if (tok === '</outline>') this.depth--;
      else if (tok.startsWith('<item')) {
        const n = Number(attrs(tok.slice(0, tok.indexOf('>') + 1)).page);
        const title = textOf(m[2] ?? '')
          .replace(/\s+/g, ' ')
          .trim();
        if (!Number.isInteger(n) || n < 1 || !title || this.depth < 1) continue;
        const list = outline.get(n) ?? [];
        list.push({ title, level: Math.min(this.depth, 6) });
        outline.set(n, list);
      }
    }
  }
}

/** Parses a whole `pdftohtml -xml -zoom 1 -noroundcoord` output (`PdftohtmlXmlReader`). Pure. */
export function parsePdftohtmlXml(xml: string): PopplerLayouts {
  const reader = new PdftohtmlXmlReader();
  reader.push(xml);
  return reader.end();
}
