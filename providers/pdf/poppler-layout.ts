/**
 * Page layouts for the Markdown rules (`markdown/types.ts`) from poppler: `pdftohtml -xml` gives each text chunk its
 * position, its font (family name and size) and bold/italic, with poppler's text extraction (the one `pdftotext`
 * uses: ligatures of Type 1 fonts mapped, word spaces from glyph gaps), and the outline with its pages. It reads a
 * page in about the time `pdftotext` does. It gives no drawings: the rulings and drawn bullets come from pdf.js's
 * operator list, which only the pages that may need them pay for (`layout-sources.ts`).
 * The XML is parsed by `pdftohtml-xml.ts` as the process writes it.
 */
import { StringDecoder } from 'node:string_decoder';
import { runTool } from '../process/run-tool';
import type { OutlineEntry, PageLayout } from '../../domain/pdf/markdown/types';
import { PdftohtmlXmlReader, type PopplerLayouts } from '../../domain/pdf/pdftohtml-xml';
import { contiguousRanges, popplerError } from './poppler';

/** Pages a pdftohtml process should at least get: each one parses the document's structure again. */
const MIN_PAGES_PER_PROCESS = 25;

/**
 * The asked pages' layouts (text items with fonts, no drawings) and the outline's bookmarks pointing at them, read by
 * `pdftohtml` processes: each run of consecutive pages cut into up to `parallel` parts read at once.
 */
export async function popplerPageLayouts(
  pdfPath: string,
  pages: readonly number[],
  opts: {
    signal?: AbortSignal;
    parallel?: number;
    /** Called with each page's layout (without the outline) as soon as pdftohtml has written it. */
    onPage?: (layout: PageLayout) => void;
  } = {},
): Promise<Map<number, PageLayout>> {
  const parts: [number, number][] = [];
  const parallel = Math.max(1, opts.parallel ?? 1);
  for (const [first, last] of contiguousRanges(pages)) {
    const count = last - first + 1;
    const n = Math.max(1, Math.min(parallel, Math.floor(count / MIN_PAGES_PER_PROCESS)));
    for (let i = 0, from = first; i < n; i++) {
      const size = Math.floor(count / n) + (i < count % n ? 1 : 0);
      parts.push([from, from + size - 1]);
      from += size;
    }
  }
  const read = async ([f, l]: [number, number]) => {
    // Parsed as it comes: each page is known (`onPage`) while pdftohtml still reads the next ones.
    const reader = new PdftohtmlXmlReader(opts.onPage);
    const utf8 = new StringDecoder('utf8');
    try {
      await runTool(
        'pdftohtml',
        // -nodrm: a document that forbids copying is read, as pdftotext and pdf.js read it for the text layer. No -q:
        // poppler's complaints on stderr tell an encrypted file from a damaged one (`popplerError`).
        [
          '-xml',
          '-nodrm',
          '-i',
          '-hidden',
          '-stdout',
          '-zoom',
          '1',
          '-noroundcoord',
          '-f',
          String(f),
          '-l',
          String(l),
          pdfPath,
        ],
        {
          signal: opts.signal,
          timeoutMs: 30_000 + 500 * (l - f + 1),
          onStdout: (chunk) => reader.push(utf8.write(chunk)),
        },
      );
      reader.push(utf8.end());
      return reader.end();
    } catch (err) {
      throw popplerError(err);
    }
  };
  // At most `parallel` processes at once.
  const results: PopplerLayouts[] = new Array(parts.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, parts.length) }, async () => {
      while (next < parts.length) {
        const i = next++;
        results[i] = await read(parts[i]);
      }
    }),
  );
  const out = new Map<number, PageLayout>();
  const outline = results[0]?.outline ?? new Map<number, OutlineEntry[]>();
  for (const r of results)
    for (const p of r.pages) {
      const entries = outline.get(p.page);
      out.set(p.page, entries ? { ...p, outline: entries } : p);
    }
  for (const p of pages) if (!out.has(p)) out.set(p, { page: p, width: 0, height: 0, items: [], segments: [] });
  return out;
}
