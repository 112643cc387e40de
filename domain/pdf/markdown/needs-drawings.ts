/**
 * Whether the rules need a page's drawings (rulings, bullets drawn as shapes), judged from its text alone. Reading
 * drawings costs pdf.js's operator list (fonts, paths, images): two to ten times the text. A page pays for it only
 * when its text shows what drawings could change:
 * - a table candidate: two lines near each other cut into cells (three fragments or more, or two of which one is
 *   short; two columns of prose are two long fragments and need none; a section number before a title, a page number
 *   after dot leaders and an equation number are no cells, nor is a line of code in monospace);
 * - bullets drawn as shapes leave their lines starting right of the text's left edge with nothing before them: two
 *   consecutive lines or more starting at the same indent, without a marker of their own (a paragraph's first-line
 *   indent is one line).
 * Pure.
 */
import { listMarker } from './blocks';
import { toFragments, type Fragment } from './lines';
import type { PageLayout } from './types';

/** A fragment narrower than this share of the page is a cell rather than a column of prose. */
const CELL_SHARE = 0.25;

/** A section number before a heading's title, a page number after a contents line, an equation number. */
const LABEL = /^(\(?[\dA-Z]{1,3}(\.\d{1,3})*\.?\)?|[\divxlc]{1,6})$/i;
const LEADERS = /^[.\s·…]*$|(\s?\.){4,}/;

/** The fragments of a line that could be cells: labels at either end and dot leaders left out. */
function cells(line: Fragment[]): Fragment[] {
  let l = line.filter((f) => !LEADERS.test(f.text));
  if (l.length >= 2 && LABEL.test(l[0].text.trim())) l = l.slice(1);
  if (l.length >= 2 && LABEL.test(l[l.length - 1].text.trim())) l = l.slice(0, -1);
  return l;
}

/** Why a page needs its drawings: a table candidate, lines indented as if after drawn bullets; or nothing. */
export function drawingNeed(layout: Pick<PageLayout, 'items' | 'width'>): 'table' | 'bullets' | undefined {
  const frags = toFragments(layout.items);
  if (frags.length === 0) return undefined;
  const lines = new Map<number, Fragment[]>();
  for (const f of frags) {
    const line = lines.get(f.line);
    if (line) line.push(f);
    else lines.set(f.line, [f]);
  }
  const width = layout.width > 0 ? layout.width : Math.max(...frags.map((f) => f.x1));
  if (tableCandidate([...lines.values()], width)) return 'table';
  if (indentRun([...lines.values()])) return 'bullets';
  return undefined;
}

export const needsDrawings = (layout: Pick<PageLayout, 'items' | 'width'>): boolean =>
  drawingNeed(layout) !== undefined;

function tableCandidate(lines: Fragment[][], width: number): boolean {
  // Two lines cut into cells, one below the other (a table's rows are near each other).
  let prevCut: Fragment | undefined;
  for (const line of lines) {
    const c = cells(line);
    if (c.every((f) => f.mono)) continue;
    const short = c.some((f) => f.x1 - f.x0 < CELL_SHARE * width);
    if (!(c.length >= 3 || (c.length === 2 && short))) continue;
    if (prevCut && prevCut.y - c[0].y < 3 * Math.max(prevCut.size, c[0].size)) {
      return true;
    }
    prevCut = c[0];
  }
  return false;
}

/**
 * Lines that start at the same indent one after the other, right of the left edge of the text, each a short item of
 * its own: a capital first, no punctuation or page number last, not monospace or bold (indented descriptions, code,
 * contents lines and headings are not what drawn bullets leave).
 */
function indentRun(lines: Fragment[][]): boolean {
  const starts = lines.map((l) => l[0]);
  const left = Math.min(...starts.map((f) => f.x0));
  let run = 0;
  for (let i = 0; i < lines.length; i++) {
    const f = starts[i];
    const prev = starts[i - 1];
    const em = f.size;
    const text = lines[i].map((x) => x.text).join(' ');
    const item =
      f.x0 - left > 1.2 * em &&
      f.x0 - left < 6 * em &&
      /^\p{Lu}/u.test(text) &&
      !/[.;:,!?\d)]$/.test(text) &&
      !listMarker(text) &&
      !f.mono &&
      !f.bold;
    const sameAsPrev = prev !== undefined && Math.abs(prev.x0 - f.x0) < 0.3 * em && prev.y - f.y < 2.2 * em;
    run = item ? (sameAsPrev && run > 0 ? run + 1 : 1) : 0;
    if (run >= 2) return true;
  }
  return false;
}
