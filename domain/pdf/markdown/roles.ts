/**
 * What a paragraph is beside its text (contract §13): a caption (a paragraph that starts with a figure's or a table's
 * label and its number, "Figure 3:", "Table 2.", "Abb. 4 –"), or a footnote (a paragraph below the body text's size
 * in the bottom third of the page that starts with a note's mark: a number, `*`, `†`, `‡`, `§`, a superscript digit).
 * Only the block's type changes; its Markdown stays a paragraph's. Pure.
 */
import { linesBox } from './provenance';
import type { Out } from './render';

/** A caption's label in the languages the OCR defaults read, with its number and the punctuation after it. */
const CAPTION =
  /^(figure|fig\.|table|tab\.|listing|algorithm|chart|scheme|plate|exhibit|abbildung|abb\.|tabelle|grafik|bild|figura|tableau|tabla)\s*([A-Z]?\d{1,3}([.-]\d{1,3})*[a-z]?)\s*[:.|—–-]\s*\S/iu;
/** A footnote's mark at the start of its text. */
const NOTE_MARK = /^([¹²³⁴⁵⁶⁷⁸⁹⁰]+|\d{1,3}(?=\s*\p{Lu})|[*†‡§¶]{1,3})\s*\S/u;
/** Footnotes stand in the bottom third of a page. */
const NOTE_ZONE = 1 / 3;
/** A footnote's type is smaller than the body's by this much at least. */
const NOTE_SIZE = 0.92;

/** The type a text block on a page `pageHeight` points high has beside `paragraph`, or undefined. */
export function textRole(o: Out, body: number, pageHeight: number): Out['role'] {
  if (o.kind !== 'text' || !o.lines.length) return undefined;
  const first = o.lines[0].text.trim();
  if (CAPTION.test(first)) return 'caption';
  // The box is from the page's top-left: its top below two thirds of the page.
  const top = o.box?.[1];
  if (top !== undefined && top >= pageHeight * (1 - NOTE_ZONE) && o.size <= body * NOTE_SIZE && NOTE_MARK.test(first))
    return 'footnote';
  return undefined;
}

/**
 * A footnote block cut where a line at its left edge starts with a mark of its own: notes that follow each other
 * without a gap are separate notes.
 */
export function splitNotes(o: Out, pageHeight: number): Out[] {
  if (o.kind !== 'text' || o.role !== 'footnote') return [o];
  const x0 = o.lines[0].x0;
  const starts = o.lines.flatMap((l, i) =>
    i === 0 || (Math.abs(l.x0 - x0) <= 0.5 * l.size && NOTE_MARK.test(l.text.trim())) ? [i] : [],
  );
  if (starts.length === 1) return [o];
  return starts.map((s, k) => {
    const lines = o.lines.slice(s, starts[k + 1]);
    return { ...o, lines, box: linesBox(lines, pageHeight) };
  });
}
