/**
 * A Markdown text cut into chunks for retrieval (contract §14): its blocks (`markdown-units.ts`) packed in order into
 * chunks of at most `max_tokens`, a heading starting a new chunk and carried by every chunk under it
 * (`heading_path`), a block cut only where it must be (`pieces.ts`), `overlap_tokens` of the chunk before repeated at
 * the start of the next one within a section. With the blocks of a document's pages (`provenance.ts`), each chunk
 * also says which pages and boxes it came from. Offsets are into the text; a chunk's `text` is the text between them,
 * except where a table's header or a code fence is repeated. Pure.
 */
import { markdownUnits } from './markdown-units';
import { unitPieces, type Piece } from './pieces';
import { tokenCounter, type TokenizerName } from './tokens';

export interface ChunkOptions {
  maxTokens: number;
  overlapTokens: number;
  tokenizer: TokenizerName;
  /** Plain text: its paragraphs (parted by blank lines) are its only blocks; nothing reads as markup. */
  plain?: boolean;
}

export type Bbox = [number, number, number, number];

/** A block of a page where it stands in the text: the pages and boxes a chunk reports are those of its spans. */
export interface SourceSpan {
  start: number;
  end: number;
  page: number;
  bbox?: Bbox;
}

export interface TextChunk {
  index: number;
  text: string;
  tokens: number;
  heading_path: string[];
  char_start: number;
  char_end: number;
}

export interface DocumentChunk extends TextChunk {
  pages: number[];
  boxes: { page: number; bbox: Bbox }[];
}

interface Placed extends Piece {
  path: string[];
  heading: boolean;
}

/** Tokens a junction between two pieces may add (the blank line between them, counted whole). */
const JUNCTION = 2;

/** The text's chunks, each within `maxTokens`. */
export function chunkMarkdown(text: string, opts: ChunkOptions): TextChunk[] {
  const count = tokenCounter(opts.tokenizer);
  const max = Math.max(1, opts.maxTokens);
  const overlap = Math.min(Math.max(0, opts.overlapTokens), max - 1);
  const placed: Placed[] = [];
  let path: string[] = [];
  const open: { level: number; title: string }[] = [];
  markdownUnits(text, { plain: opts.plain }).forEach((u, i) => {
    if (u.kind === 'heading') {
      // The headings above this one stay (a level skipped is skipped), those at its level or below it go.
      const level = u.level ?? 1;
      while (open.length && open[open.length - 1].level >= level) open.pop();
      open.push({ level, title: u.title ?? '' });
      path = open.map((h) => h.title);
    }
    for (const p of unitPieces(text, u, i, max, count)) placed.push({ ...p, path, heading: u.kind === 'heading' });
  });

  /**
   * The count of the pieces `[from, to)` joined by the text between them, `chunkText`: each piece's count, with each
   * junction counted again from the last pre-split piece before it to the first after it. Tiktoken splits its text
   * with a pattern that looks no further back than a piece's start and, where a piece ends on a letter, a digit or
   * punctuation, no further ahead than one character past it, so the rest of each piece splits as it did alone; a
   * junction whose window does not end on the next piece's first pre-split piece (or a piece that is not the text as
   * written, or is one pre-split piece, or begins or ends with a space) is counted whole.
   */
  const joinedCount = (from: number, to: number, chunkText: string): number => {
    let n = placed[from].tokens;
    for (let k = from + 1; k < to; k++) {
      const a = placed[k - 1].edges;
      const b = placed[k].edges;
      const [aEnd, bStart] = [placed[k - 1].end, placed[k].start];
      if (!a || !b || /\s/.test(text[aEnd - 1] ?? ' ') || /\s/.test(text[bStart] ?? ' ')) return count.count(chunkText);
      const w = count.measure(text.slice(aEnd - a.tail, bStart + b.head));
      if (w.tail !== b.head || w.pieces < 2) return count.count(chunkText);
      n += w.tokens - a.tailTokens - b.headTokens + placed[k].tokens;
    }
    return n;
  };
  // A chunk is a run of pieces: `[from, to)`, opened by the overlap of the one before when it stays in its section.
  const textOf = (from: number, to: number) => {
    let out = placed[from].text;
    for (let k = from + 1; k < to; k++) out += text.slice(placed[k - 1].end, placed[k].start) + placed[k].text;
    return out;
  };
  const chunks: TextChunk[] = [];
  let at = 0;
  while (at < placed.length) {
    let from = at;
    if (overlap > 0 && chunks.length && !placed[at].heading) {
      let sum = 0;
      while (from > 0 && !placed[from - 1].heading && sum + placed[from - 1].tokens + JUNCTION <= overlap) {
        from--;
        sum += placed[from].tokens + JUNCTION;
      }
    }
    let to = at;
    let estimate = 0;
    let body = false;
    for (let k = from; k < placed.length; k++) {
      const p = placed[k];
      if (k >= at && p.heading && body) break;
      // The pieces' counts and the text between them: tiktoken splits its text at whitespace before it merges, so
      // the sum is the chunk's count but where a piece's edge is not such a split (the final count below checks).
      const next = estimate + (k > from ? count.count(text.slice(placed[k - 1].end, p.start)) : 0) + p.tokens;
      if (k > at && next > max) break;
      estimate = next;
      body ||= !p.heading;
      to = k + 1;
    }
    let chunkText = textOf(from, to);
    let tokens = joinedCount(from, to, chunkText);
    // Each piece fits alone: the overlap goes first, then the last pieces, until the chunk fits.
    while (tokens > max && from < at) tokens = joinedCount(++from, to, (chunkText = textOf(from, to)));
    while (tokens > max && to > at + 1) tokens = joinedCount(from, --to, (chunkText = textOf(from, to)));
    const first = placed.slice(from, to).find((p) => !p.heading) ?? placed[to - 1];
    chunks.push({
      index: chunks.length,
      text: chunkText,
      tokens,
      heading_path: first.path,
      char_start: placed[from].start,
      char_end: placed[to - 1].end,
    });
    at = to;
  }
  return chunks;
}

/** The chunks of a document's Markdown with the pages and boxes of the blocks each one covers. */
export function chunkDocument(text: string, spans: readonly SourceSpan[], opts: ChunkOptions): DocumentChunk[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  // Chunks come in order of their start: the spans that end before a chunk's start end before the next one's too.
  let first = 0;
  return chunkMarkdown(text, opts).map((c) => {
    while (first < sorted.length && sorted[first].end <= c.char_start && sorted[first].start < c.char_start) first++;
    const hit: SourceSpan[] = [];
    for (let k = first; k < sorted.length && sorted[k].start < c.char_end; k++)
      if (sorted[k].end > c.char_start) hit.push(sorted[k]);
    const boxes: DocumentChunk['boxes'] = [];
    for (const s of hit) if (s.bbox) boxes.push({ page: s.page, bbox: s.bbox });
    return { ...c, pages: [...new Set(hit.map((s) => s.page))].sort((a, b) => a - b), boxes };
  });
}
