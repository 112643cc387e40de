/**
 * Headings of a document's blocks: the outline confirming titles and giving levels, titles larger than the body or
 * bold on a line of their own, numbered titles with levels from their numbers; labels of a definition list apart.
 * Pure.
 */
import { joinLines, type Block } from './blocks';
import type { Heading, Out } from './render';
import type { OutlineEntry } from './types';

const normTitle = (t: string) =>
  t
    .toLowerCase()
    .replace(/^[\divxlc]+(\.[\d]+)*\.?\s+/i, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/** A contents line: a section number first and a page number last, or dot leaders before the page number. */
const CONTENTS_LINE = /^((appendix|chapter)\s+)?(\d+|[A-Z])(\.\d+)*\.?\s.*\s\d{1,4}$|(\s?\.){2,}\s*\d{1,4}$/i;

export function headingOf(b: Block, body: number, outline: OutlineEntry[]): Heading | undefined {
  // A title set mostly in a monospaced font ("5.3 dyn.load and dyn.unload") is a one-line code block by its font; its
  // size above the body's, or the outline, says it is a heading all the same.
  const codeTitle = b.kind === 'code' && b.lines.length === 1;
  if (b.kind !== 'text' && b.kind !== 'list' && !codeTitle) return undefined;
  const text = joinLines(b.lines.map((l) => l.text));
  if (!/\p{L}/u.test(text) || text.length > 160 || b.lines.length > 3) return undefined;
  // A table of contents entry (its leaders squashed by blocks.ts) names a heading; it is none.
  if (/ … [\divxlc]+$/i.test(text)) return undefined;
  const title = outline.length > 0 ? normTitle(text) : '';
  const match = title !== '' ? outline.find((o) => normTitle(o.title) === title) : undefined;
  if (match) return { text, size: b.size, bold: b.bold, level: match.level };
  if ((b.kind === 'list' || codeTitle) && !(b.size >= body * 1.15)) return undefined;
  // A heading is a title: a word of two letters at least (no initials of a cover), one run of text per line (a
  // table's header row is several), no contents line, no sentence or clause ending.
  if (!/\p{L}{2}/u.test(text)) return undefined;
  if (b.lines.some((l) => (l.parts ?? 1) > 1)) return undefined;
  if (CONTENTS_LINE.test(text)) return undefined;
  if (/[,;]$/.test(text)) return undefined;
  if (b.size >= body * 1.15) return { text, size: b.size, bold: b.bold };
  if (b.bold && b.size >= body * 0.95 && text.length <= 90 && b.lines.length <= 2 && !/[.:]$/.test(text))
    return { text, size: b.size, bold: b.bold };
  return undefined;
}

/** How many times a heading candidate appears in the document, numbers aside: a label repeats, a title does not. */
const labelKey = (t: string) => t.toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ').trim();

/**
 * Bold candidates of body size that the outline does not confirm and that repeat three times or more ("Synopsis",
 * "Returns", "Since: 3.1") are labels of a definition list: bold text, not headings.
 */
export function labelsApart(outs: Out[][], body: number): void {
  const count = new Map<string, number>();
  for (const o of outs.flat())
    if (o.kind === 'heading' && o.h.level === undefined && o.h.size < body * 1.15)
      count.set(labelKey(o.h.text), (count.get(labelKey(o.h.text)) ?? 0) + 1);
  for (const page of outs)
    page.forEach((o, i) => {
      if (o.kind === 'heading' && o.h.level === undefined && (count.get(labelKey(o.h.text)) ?? 0) >= 3)
        page[i] = { kind: 'label', text: o.h.text, box: o.box };
    });
}

/** The depth of a title's section number ("2.3.18 Title" 3, "A.1 Title" 2, "3 Title" 1), 0 without one. */
export function numberDepth(text: string): number {
  const m = /^(\d{1,2}|[A-Z](?=\.\d))((?:\.\d{1,3})*)\.?\s+\p{L}/u.exec(text);
  return m ? 1 + (m[2].match(/\./g)?.length ?? 0) : 0;
}

/**
 * Heading levels: the outline's own; a numbered title's from its number; others by size above the body in decreasing
 * order, then bold body-size headings.
 */
export function assignLevels(outs: Out[][], body: number): void {
  const heads = outs.flat().flatMap((o) => (o.kind === 'heading' ? [o.h] : []));
  const sized = [...new Set(heads.filter((h) => h.size >= body * 1.15).map((h) => Math.round(h.size * 2) / 2))].sort(
    (a, b) => b - a,
  );
  const outlined = heads.filter((h) => h.level !== undefined);
  // A title above every bookmarked heading (on the first page, larger) stays level 1; bookmarks go one down.
  const maxOutlinedSize = Math.max(0, ...outlined.map((h) => h.size));
  const shift =
    outlined.length > 0 && heads.some((h) => h.level === undefined && h.size > maxOutlinedSize + 0.5) ? 1 : 0;
  // A numbered title ("2.3.18 Title", "A.1 Title") takes its level from the number's depth, moved as far as the
  // outline's numbered titles are from theirs (an outline under a root bookmark has them one down).
  const offsets = new Map<number, number>();
  for (const h of outlined) {
    const d = numberDepth(h.text);
    if (d > 0) offsets.set(h.level! - d, (offsets.get(h.level! - d) ?? 0) + 1);
  }
  const offset = [...offsets].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 0;
  for (const h of heads) {
    if (h.level !== undefined) h.level = Math.min(6, h.level + shift);
    else if (numberDepth(h.text) > 0) h.level = Math.max(1, Math.min(6, numberDepth(h.text) + offset + shift));
    else {
      const i = sized.indexOf(Math.round(h.size * 2) / 2);
      h.level = Math.min(6, i >= 0 ? i + 1 : sized.length + 1);
    }
  }
}
