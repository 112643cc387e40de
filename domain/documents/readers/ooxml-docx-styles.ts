/**
 * What a DOCX paragraph's style and numbering mean for its block: the heading level a style gives (its name, its
 * `w:outlineLvl`, or those of the styles it is based on), whether its runs are monospace (code), and the list level,
 * kind and number `numbering.xml` gives a numbered paragraph.
 */
import { child, elements, path, type XmlElement } from '../xml';

const MONOSPACE = /courier|consolas|mono|menlo|monaco|lucida console|inconsolata|fira code|source code|andale/i;

export function isMonospace(font: string | undefined): boolean {
  return !!font && MONOSPACE.test(font);
}

interface StyleInfo {
  name: string;
  basedOn?: string;
  outlineLvl?: number;
  font?: string;
  numId?: string;
  ilvl?: number;
}

export class DocxStyles {
  private readonly styles = new Map<string, StyleInfo>();

  constructor(root: XmlElement | undefined) {
    for (const s of elements(root, 'w:style')) {
      const id = s.attrs['w:styleId'];
      if (!id) continue;
      const outline = path(s, 'w:pPr', 'w:outlineLvl')?.attrs['w:val'];
      const numPr = path(s, 'w:pPr', 'w:numPr');
      this.styles.set(id, {
        name: child(s, 'w:name')?.attrs['w:val'] ?? id,
        basedOn: child(s, 'w:basedOn')?.attrs['w:val'],
        outlineLvl: outline === undefined ? undefined : Number(outline),
        font: path(s, 'w:rPr', 'w:rFonts')?.attrs['w:ascii'],
        numId: child(numPr, 'w:numId')?.attrs['w:val'],
        ilvl: numPr && child(numPr, 'w:ilvl') ? Number(child(numPr, 'w:ilvl')?.attrs['w:val']) : undefined,
      });
    }
  }

  /** The style and those it is based on, nearest first (bounded: a cycle in basedOn is a broken file, not a hang). */
  private chain(id: string | undefined): StyleInfo[] {
    const out: StyleInfo[] = [];
    for (let cur = id, n = 0; cur && n < 20; n++) {
      const s = this.styles.get(cur);
      if (!s) break;
      out.push(s);
      cur = s.basedOn;
    }
    return out;
  }

  /** 1-9 for a heading style (Title is 1), undefined for body text. */
  headingLevel(id: string | undefined): number | undefined {
    for (const s of this.chain(id)) {
      const named = /^heading\s*([1-9])$/i.exec(s.name);
      if (named) return Number(named[1]);
      if (/^title$/i.test(s.name)) return 1;
      // outlineLvl 0-8 are levels 1-9; 9 is "body text".
      if (s.outlineLvl !== undefined && s.outlineLvl >= 0 && s.outlineLvl < 9) return s.outlineLvl + 1;
    }
    return undefined;
  }

  isCode(id: string | undefined): boolean {
    return this.chain(id).some(
      (s) => /^(code|html preformatted|source code|preformatted text)/i.test(s.name) || isMonospace(s.font),
    );
  }

  isMonospaceRunStyle(id: string | undefined): boolean {
    return this.chain(id).some((s) => /code|verbatim/i.test(s.name) || isMonospace(s.font));
  }

  /** A style's own list numbering (List Bullet, List Number...). */
  numbering(id: string | undefined): { numId: string; ilvl: number } | undefined {
    for (const s of this.chain(id)) if (s.numId) return { numId: s.numId, ilvl: s.ilvl ?? 0 };
    return undefined;
  }
}

interface LevelDef {
  format: string;
  start: number;
}

/** `numbering.xml`: numbering instances (`w:num`) over abstract definitions, with counters as the body is read. */
export class DocxNumbering {
  private readonly abstract = new Map<string, Map<number, LevelDef>>();
  private readonly nums = new Map<string, { abstractId: string; starts: Map<number, number> }>();
  /** Counters per abstract list (Word continues a list across num instances sharing an abstract definition). */
  private readonly counters = new Map<string, number[]>();

  constructor(root: XmlElement | undefined) {
    for (const a of elements(root, 'w:abstractNum')) {
      const levels = new Map<number, LevelDef>();
      for (const lvl of elements(a, 'w:lvl'))
        levels.set(Number(lvl.attrs['w:ilvl'] ?? 0), {
          format: child(lvl, 'w:numFmt')?.attrs['w:val'] ?? 'decimal',
          start: Number(child(lvl, 'w:start')?.attrs['w:val'] ?? 1),
        });
      this.abstract.set(a.attrs['w:abstractNumId'] ?? '', levels);
    }
    for (const n of elements(root, 'w:num')) {
      const starts = new Map<number, number>();
      for (const o of elements(n, 'w:lvlOverride')) {
        const start = child(o, 'w:startOverride')?.attrs['w:val'];
        if (start !== undefined) starts.set(Number(o.attrs['w:ilvl'] ?? 0), Number(start));
      }
      this.nums.set(n.attrs['w:numId'] ?? '', {
        abstractId: child(n, 'w:abstractNumId')?.attrs['w:val'] ?? '',
        starts,
      });
    }
  }

  /**
   * The list item a numbered paragraph is: its level, whether it is ordered, and its number (counted in document
   * order; a shallower item resets the deeper counters). `undefined` for numId 0 ("no numbering") or an unknown one.
   */
  next(numId: string, ilvl: number): { level: number; ordered: boolean; number?: number } | undefined {
    const num = this.nums.get(numId);
    if (!num || numId === '0') return undefined;
    const levels = this.abstract.get(num.abstractId);
    const def = levels?.get(ilvl) ?? { format: 'decimal', start: 1 };
    if (def.format === 'none') return { level: ilvl, ordered: false };
    const ordered = def.format !== 'bullet';
    const key = `${num.abstractId}`;
    const counters = this.counters.get(key) ?? [];
    const start = num.starts.get(ilvl) ?? def.start;
    counters[ilvl] = counters[ilvl] === undefined ? start : counters[ilvl] + 1;
    counters.length = ilvl + 1;
    this.counters.set(key, counters);
    return ordered ? { level: ilvl, ordered, number: counters[ilvl] } : { level: ilvl, ordered };
  }
}
