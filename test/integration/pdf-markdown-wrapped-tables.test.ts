import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { markdownPageLayouts } from '../../providers/pdf/markdown-layouts';
import { documentMarkdown } from '../../domain/pdf/markdown/document';
import { htmlToPdf } from '../support/documents/html-pdf';

// A table without rules whose cells wrap onto several lines (as Texinfo's @multitable prints), printed by Chromium
// and read by real poppler: one GFM row per table row, each cell's lines joined.

const rows = [
  ['Algorithm', 'Protocols', 'Description'],
  [
    'AES-128-GCM, AES-256-GCM',
    'TLS 1.2, TLS 1.3',
    'The AES block cipher in the authenticated encryption GCM mode, which combines message authentication and encryption and is fast on processors with hardware support.',
  ],
  [
    'CHACHA20-POLY1305',
    'TLS 1.2, TLS 1.3',
    'An authenticated encryption algorithm built from a stream cipher and a one-time authenticator, fast where no hardware acceleration exists.',
  ],
  [
    'NULL',
    'TLS 1.0, TLS 1.1, TLS 1.2',
    'The empty cipher, which encrypts nothing and is never negotiated unless asked for explicitly.',
  ],
  ['CAMELLIA-128-CBC, CAMELLIA-256-CBC', 'TLS 1.0', 'A block cipher of 128-bit blocks.'],
];
const intro =
  'The ciphers below are supported by the library, each with the protocols it applies to and a description of it.';
const outro =
  'The ciphers are listed in the order the library prefers them, unless the priority string says otherwise.';

// Narrow columns so that cells wrap; rows set apart by a padding below them, cells read from their top.
const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Ciphers</title><style>
body { font-family: 'DejaVu Serif', serif; font-size: 11pt; margin: 2cm }
table { border-collapse: collapse }
td, th { vertical-align: top; text-align: left; padding: 0 14px 12px 0 }
td:nth-child(1), th:nth-child(1) { width: 110px }
td:nth-child(2), th:nth-child(2) { width: 70px }
td:nth-child(3), th:nth-child(3) { width: 260px }
</style></head><body>
<p>${intro}</p>
<table>${rows.map((r, i) => `<tr>${r.map((c) => (i === 0 ? `<th>${c}</th>` : `<td>${c}</td>`)).join('')}</tr>`).join('\n')}</table>
<p>${outro}</p>
</body></html>`;

describe('PDF to Markdown: a table whose cells wrap, printed by Chromium', function () {
  this.timeout(120_000);
  let dir: string;
  let pdf: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'md-wrapped-'));
    pdf = path.join(dir, 'ciphers.pdf');
    await writeFile(pdf, await htmlToPdf(html));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('gives one GFM row per table row, the wrapped lines of each cell joined, between its paragraphs', async () => {
    const layouts = await markdownPageLayouts(pdf, [1]);
    // The cells do wrap in this PDF: more lines of text than rows.
    const baselines = new Set(layouts.get(1)!.items.map((i) => Math.round(i.y)));
    expect(baselines.size).to.be.greaterThan(rows.length + 6);
    const md = documentMarkdown([...layouts.values()]).markdown;
    const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
    expect(md).to.equal(
      [intro, '', row(rows[0]), row(rows[0].map(() => '---')), ...rows.slice(1).map(row), '', outro].join('\n'),
    );
  });
});
