/**
 * PDFs of known structure for the Markdown tests: HTML written here, printed by headless Chromium (provisioned by
 * `npm test`, scripts/engines.mjs). Chromium prints its own running header and footer (date, title, address, page
 * "n/m") on every page, and repeats a table's `thead` on each page a table spans.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runTool } from '../../../providers/process/run-tool';
import { enginePaths } from '../servers/engines';

/** Prints `html` to PDF with Chromium; `pageHeaders` keeps Chromium's running header and footer. */
export async function htmlToPdf(html: string, opts: { pageHeaders?: boolean } = {}): Promise<Buffer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'docproc-html-pdf-'));
  try {
    const src = path.join(dir, 'doc.html');
    const out = path.join(dir, 'doc.pdf');
    await writeFile(src, html);
    await runTool(
      enginePaths().chromium,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        `--user-data-dir=${path.join(dir, 'profile')}`,
        ...(opts.pageHeaders ? [] : ['--no-pdf-header-footer']),
        `--print-to-pdf=${out}`,
        `file://${src}`,
      ],
      { timeoutMs: 60_000 },
    );
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const para = (words: string[], n: number, seed: number) =>
  Array.from({ length: n }, (_, i) => words[(i * 7 + seed) % words.length]).join(' ');

const WORDS =
  'the river carries cold water from distant mountains through quiet valleys where farmers grow barley and ' +
  'keep sheep on steep meadows while travellers rest beside old stone bridges before continuing their journey';

/** Sentence `i` of the test document: unique words around a number, ending in a full stop. */
export const sentence = (i: number) => {
  const w = WORDS.split(' ');
  const s = `Sentence ${i} says that ${para(w, 10 + (i % 5), i)}`;
  return `${s}.`;
};

export interface StructuredDoc {
  html: string;
  title: string;
  headings: { level: number; text: string }[];
  /** Paragraphs of the two-column section, in reading order. */
  columnParagraphs: string[];
  bullets: string[];
  steps: string[];
  unruled: string[][];
  ruledHeader: string[];
  ruledRows: string[][];
  code: string[];
}

/** A report of two pages or more: title, two columns, lists, an unruled and a ruled table across a page break, code. */
export function structuredDoc(): StructuredDoc {
  const title = 'Quarterly River Report';
  const columnParagraphs = [0, 1, 2, 3, 4, 5].map((p) => [0, 1, 2].map((k) => sentence(p * 3 + k)).join(' '));
  const bullets = ['Apples from the northern orchards', 'Pears and plums', 'Fresh bread every morning'];
  const steps = ['Open the sluice gate', 'Measure the water level', 'Close the gate again'];
  const unruled = [
    ['Region', 'Spring', 'Autumn'],
    ['North', '12', '15'],
    ['South', '7', '9'],
    ['East', '21', '18'],
  ];
  const ruledHeader = ['Item', 'Quantity', 'Price'];
  const ruledRows = Array.from({ length: 40 }, (_, i) => [
    `Item number ${i + 1}`,
    String((i * 37) % 101),
    `${i + 1}.50`,
  ]);
  const code = ['def level(gauge):', '    return gauge.read() * 2'];
  const headings = [
    { level: 1, text: title },
    { level: 2, text: 'Two columns of prose' },
    { level: 2, text: 'Lists of things' },
    { level: 2, text: 'Seasonal counts' },
    { level: 2, text: 'Inventory' },
    { level: 2, text: 'Code' },
  ];
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>River</title><style>
body { font-family: serif; font-size: 11pt; margin: 0 }
h1 { font-size: 22pt } h2 { font-size: 15pt }
.cols { column-count: 2; column-gap: 2.5em; text-align: justify }
table.unruled td { padding: 2px 28px 2px 0 }
table.ruled { border-collapse: collapse } table.ruled td, table.ruled th { border: 1px solid #000; padding: 3px 8px }
pre { font-family: monospace; font-size: 10pt }
</style></head><body>
<h1>${title}</h1>
<p>${sentence(100)} ${sentence(101)}</p>
<h2>Two columns of prose</h2>
<div class="cols">${columnParagraphs.map((p) => `<p>${p}</p>`).join('')}</div>
<h2>Lists of things</h2>
<ul>${bullets.map((b) => `<li>${b}</li>`).join('')}</ul>
<ol>${steps.map((b) => `<li>${b}</li>`).join('')}</ol>
<h2>Seasonal counts</h2>
<table class="unruled">${unruled.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('')}</table>
<p>${sentence(102)}</p>
<h2>Inventory</h2>
<table class="ruled"><thead><tr>${ruledHeader.map((c) => `<th>${c}</th>`).join('')}</tr></thead><tbody>
${ruledRows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('\n')}</tbody></table>
<h2>Code</h2>
<pre>${code.map(esc).join('\n')}</pre>
<p>${sentence(103)}</p>
</body></html>`;
  return { html, title, headings, columnParagraphs, bullets, steps, unruled, ruledHeader, ruledRows, code };
}
