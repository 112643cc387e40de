/**
 * Where each block of a document's parts stands in the document's text (contract §14), so a chunk can say which
 * pages and boxes it came from: the parts' blocks (or, without blocks, each part's own text) found in the text in
 * reading order. The document's Markdown is its parts' blocks in order, except where a paragraph or a table runs on
 * over a page break (the two halves are one block of the document): a block that is not found as it stands is
 * found by its start, and one that is not found after the block before it is looked for inside that block. Pure.
 */
import type { Bbox, SourceSpan } from './chunk-markdown';

/** A part as the results give it: its number, its text (or Markdown) and its blocks with their boxes. */
export interface SpanPart {
  page: number;
  text: string;
  blocks?: readonly { type: string; text: string; bbox?: Bbox | readonly number[] }[];
}

/** Blocks that are not in the document's text (running headers and footers: contract §13). */
const OUTSIDE = new Set(['header', 'footer']);
/** How much of a block's start finds it when the whole block is not there as it stands. */
const PREFIX = 40;
/** How far past the block before the next block may start (the blank lines and a block the text left out). */
const WINDOW = 600;

/** The end of the paragraph (or table, or code) of the text that holds `at`: the next blank line, or the end. */
function blockEnd(text: string, at: number): number {
  const blank = text.indexOf('\n\n', at);
  return blank === -1 ? text.length : blank;
}

/** The spans of the parts' blocks in `text`, in order; a block found nowhere has none. */
export function sourceSpans(text: string, parts: readonly SpanPart[]): SourceSpan[] {
  const spans: SourceSpan[] = [];
  let cursor = 0;
  let previousStart = 0;
  const place = (needle: string, page: number, bbox?: Bbox) => {
    const t = needle.trim();
    if (!t) return;
    // Blocks follow each other in the text: one found far past the block before is another one of the same text (a
    // `**Returns**` of the next section), and this one is not in the text.
    const near = (at: number) => (at !== -1 && at <= cursor + WINDOW ? at : -1);
    let start = near(text.indexOf(t, cursor));
    let end = start + t.length;
    if (start === -1) {
      const head = t.slice(0, PREFIX);
      start = near(text.indexOf(head, cursor));
      // Not after the block before: the second half of a block that runs on from it, inside it.
      if (start === -1) start = near(text.indexOf(head, previousStart));
      if (start === -1) return;
      end = Math.min(blockEnd(text, start + head.length), Math.max(start + t.length, start + head.length));
    }
    spans.push({ start, end, page, ...(bbox ? { bbox } : {}) });
    previousStart = start;
    cursor = Math.max(cursor, end);
  };
  for (const part of parts) {
    const blocks = part.blocks?.filter((b) => !OUTSIDE.has(b.type)) ?? [];
    if (blocks.length) for (const b of blocks) place(b.text, part.page, b.bbox ? ([...b.bbox] as Bbox) : undefined);
    else place(part.text, part.page);
  }
  return spans;
}
