import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** A word of a PDF's text layer with its box's centre, in points from the page's top-left. */
export interface TextLayerWord {
  /** 1-based. */
  page: number;
  text: string;
  cx: number;
  cy: number;
}

const run = promisify(execFile);

/**
 * Every word of the PDF's text layer as poppler places it (`pdftotext -bbox`), pages `first`..`last` (all by default):
 * the truth the blocks' boxes are scored against (test/integration/pdf-markdown.test.ts, bench/pdf-blocks.bench.ts).
 */
export async function textLayerWords(
  pdfPath: string,
  range: { first?: number; last?: number } = {},
): Promise<TextLayerWord[]> {
  const pages = [
    ...(range.first ? ['-f', String(range.first)] : []),
    ...(range.last ? ['-l', String(range.last)] : []),
  ];
  const { stdout } = await run('pdftotext', ['-bbox', ...pages, pdfPath, '-'], { maxBuffer: 256 * 1024 * 1024 });
  const out: TextLayerWord[] = [];
  let page = (range.first ?? 1) - 1;
  const re = /<page |<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</g;
  for (const m of stdout.matchAll(re)) {
    if (m[0] === '<page ') page++;
    else
      out.push({
        page,
        text: m[5]
          .replace(/&lt;/g, '<')
          .replace(/&gt;/g, '>')
          .replace(/&quot;/g, '"')
          .replace(/&amp;/g, '&'),
        cx: (Number(m[1]) + Number(m[3])) / 2,
        cy: (Number(m[2]) + Number(m[4])) / 2,
      });
  }
  return out;
}
