/**
 * Emphasis an EPUB gives by class rather than by element: LibreOffice's export (libepubgen) and Calibre's
 * conversions write `<span class="span2">` with `.span2 { font-weight: bold }` in a style sheet. Only single-class
 * selectors (`.c`, `span.c`) and three properties are read: weight, style and line-through. A regular expression over
 * the declarations is enough for that and linear in the sheet's size; no CSS library is needed for three properties.
 */

export interface ClassEmphasis {
  bold?: boolean;
  italic?: boolean;
  strike?: boolean;
}

const RULE = /([^{}]+)\{([^{}]*)\}/g;
const CLASS_SELECTOR = /^[a-z0-9]*\.([\w-]+)$/i;

/** Adds the classes of `css` to `into` (later rules win, as in the cascade for equal specificity). */
export function readClassEmphasis(css: string, into = new Map<string, ClassEmphasis>()): Map<string, ClassEmphasis> {
  const text = css.replace(/\/\*[\s\S]*?\*\//g, '');
  for (const [, selectors, body] of text.matchAll(RULE)) {
    const emphasis = declarations(body ?? '');
    if (!Object.keys(emphasis).length) continue;
    for (const selector of (selectors ?? '').split(',')) {
      const cls = CLASS_SELECTOR.exec(selector.trim())?.[1];
      if (cls) into.set(cls, { ...into.get(cls), ...emphasis });
    }
  }
  return into;
}

function declarations(body: string): ClassEmphasis {
  const out: ClassEmphasis = {};
  for (const decl of body.split(';')) {
    const [prop, ...rest] = decl.split(':');
    const name = (prop ?? '').trim().toLowerCase();
    const value = rest.join(':').trim().toLowerCase();
    if (name === 'font-weight') out.bold = /^(bold|bolder|[6-9]00)\b/.test(value);
    else if (name === 'font-style') out.italic = /^(italic|oblique)\b/.test(value);
    else if (name === 'text-decoration' || name === 'text-decoration-line') out.strike = value.includes('line-through');
  }
  return out;
}
