/**
 * Reading order for the text of one PDF page, from positioned text runs (pdf.js text items) alone. Pure: no
 * pdf.js import, so the rules are unit-testable with hand-made runs.
 *
 * Rules: runs on one baseline (within a tolerance relative to the font size) form a line; lines go top to bottom,
 * runs left to right, with a space where the horizontal gap says one is missing. A page whose lines fall into a
 * left and a right block separated by a clear vertical gutter is read column by column; lines that cross the
 * gutter (a title, a footer) stay where they are and split the page into bands.
 */

/** One text run in PDF user space: origin bottom left, `y` is the baseline. */
export interface TextRun {
  str: string;
  x: number;
  y: number;
  /** Advance width of the run. */
  width: number;
  /** Font size (vertical scale of the text matrix). */
  size: number;
  /** The producer ended a line after this run (pdf.js `hasEOL`). */
  eol?: boolean;
}

interface Glyph {
  str: string;
  x0: number;
  x1: number;
  y: number;
  size: number;
  /** Index of the run in content-stream order. */
  seq: number;
  /** The run before this one in stream order ended a line. */
  afterEol: boolean;
}

interface Line {
  y: number;
  size: number;
  glyphs: Glyph[];
}

/** A word gap is at least this fraction of the font size (Helvetica's space is 0.278 em). */
const SPACE_EM = 0.15;
/** Baselines closer than this fraction of the font size are one line (lets sub- and superscripts join). */
const SAME_LINE_EM = 0.5;
/** After an explicit line end the next run joins the line only when its baseline is practically equal. */
const SAME_LINE_AFTER_EOL_EM = 0.15;
/** A gutter is at least this many em wide... */
const GUTTER_MIN_EM = 1.0;
/** ...and at most this share of the lines (or two lines) may cross it (titles, footers). */
const GUTTER_MAX_CROSSING = 0.15;
/** Each column holds at least this many lines. */
const COLUMN_MIN_LINES = 3;
const MAX_COLUMN_DEPTH = 3;
/** A vertical gap this many em wide ends a band: what lies below (a footer) is read after both columns. */
const BAND_GAP_EM = 4;

/** Lays out text runs and returns the page text, one line per output line. */
export function layoutText(runs: TextRun[]): string {
  const glyphs = toGlyphs(runs);
  if (glyphs.length === 0) return '';
  return order(groupLines(glyphs), 0).join('\n');
}

function toGlyphs(runs: TextRun[]): Glyph[] {
  const glyphs: Glyph[] = [];
  let afterEol = false;
  runs.forEach((r, seq) => {
    const finite = [r.x, r.y, r.width, r.size].every(Number.isFinite);
    if (finite && r.str.trim() !== '') {
      const size = r.size > 0 ? r.size : 1;
      const width = Math.max(0, r.width);
      glyphs.push({ str: r.str, x0: r.x, x1: r.x + width, y: r.y, size, seq, afterEol });
      afterEol = false;
    }
    if (r.eol) afterEol = true;
  });
  return glyphs;
}

/**
 * Bounds of the work per glyph, so a hostile page (100 000 runs on one baseline) stays linear: glyphs arrive
 * sorted by y then x, so overlaps and duplicates show among a line's latest glyphs and the latest lines.
 */
const RECENT_GLYPHS = 64;
const RECENT_LINES = 32;
const recent = (line: Line) => line.glyphs.slice(-RECENT_GLYPHS);

const overlapsHorizontally = (line: Line, g: Glyph): boolean =>
  recent(line).some((o) => {
    const overlap = Math.min(o.x1, g.x1) - Math.max(o.x0, g.x0);
    return overlap > 0.5 * Math.min(o.x1 - o.x0, g.x1 - g.x0) && overlap > 0.5;
  });

/** Groups glyphs into lines, top to bottom. */
function groupLines(glyphs: Glyph[]): Line[] {
  const sorted = [...glyphs].sort((a, b) => b.y - a.y || a.x0 - b.x0);
  const bySeq = new Map(glyphs.map((g) => [g.seq, g]));
  const lineOf = new Map<Glyph, Line>();
  const lines: Line[] = [];
  const reach = SAME_LINE_EM * maxOf(glyphs.map((g) => g.size));
  let open: Line[] = [];
  for (const g of sorted) {
    open = open.filter((l) => l.y - g.y <= reach).slice(-RECENT_LINES);
    if (open.some((l) => recent(l).some((o) => isDuplicate(o, g)))) continue;
    let best: Line | undefined;
    for (const l of open) {
      const dy = Math.abs(l.y - g.y);
      let tol = SAME_LINE_EM * Math.max(l.size, g.size);
      const prev = g.afterEol ? previousGlyph(bySeq, g.seq) : undefined;
      if (prev && lineOf.get(prev) === l) tol = SAME_LINE_AFTER_EOL_EM * Math.max(l.size, g.size);
      if (dy <= tol && !overlapsHorizontally(l, g) && (!best || dy < Math.abs(best.y - g.y))) best = l;
    }
    if (!best) {
      best = { y: g.y, size: g.size, glyphs: [] };
      lines.push(best);
      open.push(best);
    }
    best.glyphs.push(g);
    best.size = Math.max(best.size, g.size);
    lineOf.set(g, best);
  }
  for (const l of lines) l.glyphs.sort((a, b) => a.x0 - b.x0);
  return lines.sort((a, b) => b.y - a.y);
}

/** The same string drawn again almost on top of itself: fake bold or a shadow. */
const isDuplicate = (a: Glyph, b: Glyph): boolean =>
  a.str === b.str && Math.abs(a.x0 - b.x0) < 0.2 * a.size && Math.abs(a.y - b.y) < 0.2 * a.size;

function previousGlyph(bySeq: Map<number, Glyph>, seq: number): Glyph | undefined {
  for (let s = seq - 1; s >= 0 && seq - s < 64; s--) {
    const g = bySeq.get(s);
    if (g) return g;
  }
  return undefined;
}

/** The text of one line: runs left to right, a space where the gap is wider than a word space. */
export function lineText(glyphs: readonly Pick<Glyph, 'str' | 'x0' | 'x1' | 'size'>[]): string {
  let text = '';
  let prev: (typeof glyphs)[number] | undefined;
  for (const g of glyphs) {
    if (prev) {
      const gap = g.x0 - prev.x1;
      const needsSpace = gap > SPACE_EM * Math.min(prev.size, g.size) && !/\s$/.test(text) && !/^\s/.test(g.str);
      if (needsSpace) text += ' ';
    }
    text += g.str;
    prev = g;
  }
  return text.replace(/\s+/g, ' ').trim();
}

const maxOf = (values: Iterable<number>): number => {
  let m = -Infinity;
  for (const v of values) if (v > m) m = v;
  return m;
};
const minOf = (values: Iterable<number>): number => -maxOf([...values].map((v) => -v));

const median = (values: number[]): number => {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.floor(s.length / 2)];
};

export interface Gutter {
  left: number;
  right: number;
}

/**
 * The clear vertical bands of a block, widest first: the horizontal span `[minX, minX + span]` in at most `maxBins`
 * bins, each counting the rows whose spans (`x0`–`x1`) cover it; a band between `lo` and `hi` (fractions of the span)
 * that at most `maxCrossing` rows cross and at least `minWidth` wide is a candidate gutter. Used by the plain-text
 * layout (lines of glyphs) and by the Markdown reading order (rows of fragments).
 */
export function gutterCandidates(
  rows: readonly (readonly { x0: number; x1: number }[])[],
  minX: number,
  span: number,
  opts: { maxBins: number; lo: number; hi: number; maxCrossing: number; minWidth: number },
): Gutter[] {
  const bins = Math.min(opts.maxBins, Math.ceil(span));
  const binW = span / bins;
  // Each row adds one to the bins its spans cover (their union), as a difference array: the spans' bin ranges in
  // order of their start, overlapping ones merged, each range +1 at its start and -1 after its end. Linear in the
  // spans and the bins, where marking bin by bin costs rows × bins.
  const diff = new Int32Array(bins + 1);
  const ranges: [number, number][] = [];
  for (const row of rows) {
    ranges.length = 0;
    let sorted = true;
    for (const g of row) {
      const a = Math.max(0, Math.floor((g.x0 - minX) / binW));
      const b = Math.min(bins - 1, Math.ceil((g.x1 - minX) / binW) - 1);
      if (!(a <= b)) continue;
      if (ranges.length > 0 && a < ranges[ranges.length - 1][0]) sorted = false;
      ranges.push([a, b]);
    }
    if (!sorted) ranges.sort((p, q) => p[0] - q[0]);
    let start = -1;
    let end = -1;
    for (const [a, b] of ranges) {
      if (start >= 0 && a <= end + 1) {
        if (b > end) end = b;
        continue;
      }
      if (start >= 0) {
        diff[start]++;
        diff[end + 1]--;
      }
      start = a;
      end = b;
    }
    if (start >= 0) {
      diff[start]++;
      diff[end + 1]--;
    }
  }
  const cover = new Int32Array(bins);
  for (let i = 0, run = 0; i < bins; i++) cover[i] = run += diff[i];
  const lo = Math.floor(bins * opts.lo);
  const hi = Math.ceil(bins * opts.hi);
  const candidates: Gutter[] = [];
  for (let i = lo; i < hi;) {
    if (cover[i] > opts.maxCrossing) {
      i++;
      continue;
    }
    let j = i;
    while (j < hi && cover[j] <= opts.maxCrossing) j++;
    const gutter = { left: minX + i * binW, right: minX + j * binW };
    if (gutter.right - gutter.left >= opts.minWidth) candidates.push(gutter);
    i = j;
  }
  return candidates.sort((a, b) => b.right - b.left - (a.right - a.left));
}

/** Finds the clear vertical gutter of a two-column block, if there is one. */
function findGutter(lines: readonly Line[]): Gutter | undefined {
  if (lines.length < COLUMN_MIN_LINES) return undefined;
  const all = lines.flatMap((l) => l.glyphs);
  const minX = minOf(all.map((g) => g.x0));
  const maxX = maxOf(all.map((g) => g.x1));
  const span = maxX - minX;
  const em = median(all.map((g) => g.size));
  if (!(span > 4 * em)) return undefined;
  const candidates = gutterCandidates(
    lines.map((l) => l.glyphs),
    minX,
    span,
    {
      maxBins: 2000,
      lo: 0.2,
      hi: 0.8,
      maxCrossing: Math.max(2, Math.floor(GUTTER_MAX_CROSSING * lines.length)),
      minWidth: GUTTER_MIN_EM * em,
    },
  );
  for (const candidate of candidates) {
    const gutter = refineGutter(lines, candidate, em);
    if (gutter && looksLikeColumns(lines, gutter, minX, maxX)) return gutter;
  }
  return undefined;
}

/**
 * Narrows a run of bins that few lines cover down to the gap that the column lines leave. A line spans the
 * gutter when a glyph covers the run's centre or its gap there is no wider than a word space; column lines
 * may reach into the run (their long lines are what the bins allowed), and the gutter starts where they end.
 */
function refineGutter(lines: readonly Line[], run: Gutter, em: number): Gutter | undefined {
  const centre = (run.left + run.right) / 2;
  let left = -Infinity;
  let right = Infinity;
  for (const l of lines) {
    let lEdge = -Infinity;
    let rEdge = Infinity;
    let covered = false;
    for (const g of l.glyphs) {
      if (g.x0 < centre && g.x1 > centre) covered = true;
      else if (g.x1 <= centre) lEdge = Math.max(lEdge, g.x1);
      else rEdge = Math.min(rEdge, g.x0);
    }
    if (covered || rEdge - lEdge < GUTTER_MIN_EM * em) continue;
    left = Math.max(left, lEdge);
    right = Math.min(right, rEdge);
  }
  if (!Number.isFinite(left) || !Number.isFinite(right) || right - left < GUTTER_MIN_EM * em) return undefined;
  return { left, right };
}

const crosses = (l: Line, g: Gutter) => l.glyphs.some((x) => x.x1 > g.left + 0.01 && x.x0 < g.right - 0.01);

/** Both sides hold enough lines, side by side, and the left lines run up to the gutter (text, not a key column). */
function looksLikeColumns(lines: readonly Line[], gutter: Gutter, minX: number, maxX: number): boolean {
  const body = lines.filter((l) => !crosses(l, gutter));
  const left = body.filter((l) => l.glyphs.some((g) => g.x1 <= gutter.left));
  const right = body.filter((l) => l.glyphs.some((g) => g.x0 >= gutter.right));
  if (left.length < COLUMN_MIN_LINES || right.length < COLUMN_MIN_LINES) return false;
  const leftWidth = gutter.left - minX;
  const rightWidth = maxX - gutter.right;
  const span = maxX - minX;
  if (leftWidth < 0.2 * span || rightWidth < 0.2 * span) return false;
  const leftEnds = left.map((l) => maxOf(l.glyphs.filter((g) => g.x1 <= gutter.left).map((g) => g.x1)));
  if (gutter.left - median(leftEnds) > 0.35 * leftWidth) return false;
  const range = (ls: Line[]) => [minOf(ls.map((l) => l.y)), maxOf(ls.map((l) => l.y))];
  const [l0, l1] = range(left);
  const [r0, r1] = range(right);
  const shared = Math.min(l1, r1) - Math.max(l0, r0);
  return shared >= 0.5 * Math.min(l1 - l0, r1 - r0);
}

/** Output lines in reading order: bands top to bottom; in a two-column band the left column first. */
function order(lines: Line[], depth: number): string[] {
  const gutter = depth < MAX_COLUMN_DEPTH ? findGutter(lines) : undefined;
  if (!gutter) return lines.map((l) => lineText(l.glyphs)).filter(Boolean);
  const out: string[] = [];
  let band: Line[] = [];
  const flush = () => {
    if (band.length === 0) return;
    const side = (keep: (g: Glyph) => boolean) =>
      band.map((l) => ({ ...l, glyphs: l.glyphs.filter(keep) })).filter((l) => l.glyphs.length > 0);
    out.push(
      ...order(
        side((g) => g.x1 <= gutter.left + 0.01),
        depth + 1,
      ),
    );
    out.push(
      ...order(
        side((g) => g.x0 >= gutter.right - 0.01),
        depth + 1,
      ),
    );
    band = [];
  };
  for (const l of lines) {
    if (crosses(l, gutter)) {
      flush();
      const text = lineText(l.glyphs);
      if (text) out.push(text);
      continue;
    }
    const above = band[band.length - 1];
    if (above && above.y - l.y > BAND_GAP_EM * Math.max(above.size, l.size)) flush();
    band.push(l);
  }
  flush();
  return out;
}
