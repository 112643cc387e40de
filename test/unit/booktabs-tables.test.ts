import { expect } from 'chai';
import { documentMarkdown } from '../../domain/pdf/markdown/document';
import type { LayoutItem, Segment } from '../../domain/pdf/markdown/types';
import { column, item, page } from '../support/documents/page-layouts';

const md = (items: LayoutItem[], segments: Segment[], tableFormat?: 'auto' | 'gfm') =>
  documentMarkdown([page(items, { segments })], { tableFormat }).markdown;

/** A booktabs rule as pdfTeX draws it: a filled rectangle 0.4 pt (\midrule, \cmidrule) or 0.8 pt high. */
const rule = (y: number, x0 = 250, x1 = 410, h = 0.4): Segment => ({ x0, x1, y0: y, y1: y + h });

/** booktabs' example table (booktabs-de.pdf, p. 2): a group label over a \cmidrule, a row whose first cell is empty. */
function animals(top: number) {
  const ys = [top - 12, top - 29, top - 46, top - 58, top - 70];
  const items = [
    item('Artikel', 294, ys[0]),
    item('Tier', 251, ys[1]),
    item('Beschreibung', 302, ys[1]),
    item('Preis ($)', 372, ys[1], 10, { w: 38 }),
    item('Mücke', 251, ys[2]),
    item('pro Gramm', 302, ys[2]),
    item('13.65', 385, ys[2]),
    item('pro Stück', 302, ys[3]),
    item('0.01', 390, ys[3]),
    item('Gnu', 251, ys[4]),
    item('ausgestopft', 302, ys[4]),
    item('92.50', 385, ys[4]),
  ];
  const segments = [rule(top, 250, 410, 0.8), rule(top - 17, 250, 361), rule(top - 34), rule(top - 76, 250, 410, 0.8)];
  return { items, segments };
}

const prose = (top: number) =>
  column(
    [
      'Text of the page runs across the whole measure above and below the tables, wider than both.',
      'A second line of that paragraph, as wide as the first one and ending the paragraph here.',
    ],
    154,
    top,
  ).map((i) => ({ ...i, w: 353 }));

describe('PDF to Markdown (booktabs tables)', () => {
  it('writes a header cell over a \\cmidrule as a spanning HTML cell, and each line of cells as a row', () => {
    const t = animals(460);
    expect(md(t.items, t.segments)).to.equal(
      [
        '<table>',
        '<thead>',
        '<tr><th colspan="2">Artikel</th><th></th></tr>',
        '<tr><th>Tier</th><th>Beschreibung</th><th>Preis ($)</th></tr>',
        '</thead>',
        '<tbody>',
        '<tr><td>Mücke</td><td>pro Gramm</td><td>13.65</td></tr>',
        '<tr><td></td><td>pro Stück</td><td>0.01</td></tr>',
        '<tr><td>Gnu</td><td>ausgestopft</td><td>92.50</td></tr>',
        '</tbody>',
        '</table>',
      ].join('\n'),
    );
  });

  it("keeps GFM when asked for, the spanning cell's text repeated into each column it covers", () => {
    const t = animals(460);
    expect(md(t.items, t.segments, 'gfm')).to.equal(
      [
        '| Artikel | Artikel |  |',
        '| --- | --- | --- |',
        '| Tier | Beschreibung | Preis ($) |',
        '| Mücke | pro Gramm | 13.65 |',
        '|  | pro Stück | 0.01 |',
        '| Gnu | ausgestopft | 92.50 |',
      ].join('\n'),
    );
  });

  it('reads two tables of the same width with prose between them as two tables', () => {
    const a = animals(700);
    const b = animals(400);
    const out = md([...a.items, ...prose(560), ...b.items], [...a.segments, ...b.segments], 'gfm');
    const blocks = out.split('\n\n');
    expect(blocks.map((b) => (b.startsWith('|') ? 'table' : b.slice(0, 12)))).to.deep.equal([
      'table',
      'Text of the ',
      'table',
    ]);
    for (const t of [blocks[0], blocks[2]]) expect(t.match(/Mücke/g)).to.have.length(1);
  });

  it('cuts a column between vertical rules where its text leaves a gap on every line (a |l|lr| table)', () => {
    const rows = [
      ['Tier', 'Artikel', '13.65'],
      ['Gnu', 'ausgestopft', '92.50'],
      ['Emu', 'gefroren', '8.99'],
    ];
    const items = rows.flatMap((r, i) => [
      item(r[0], 75, 686 - i * 16),
      item(r[1], 165, 686 - i * 16),
      item(r[2], 335 - r[2].length * 5, 686 - i * 16),
    ]);
    const hs = [0, 1, 2, 3].map((i) => rule(698 - i * 16, 72, 342));
    const vs = [72, 162, 342].map((x) => ({ x0: x, x1: x + 0.4, y0: 650, y1: 698 }));
    expect(md(items, [...hs, ...vs])).to.equal(
      '| Tier | Artikel | 13.65 |\n| --- | --- | --- |\n| Gnu | ausgestopft | 92.50 |\n| Emu | gefroren | 8.99 |',
    );
  });

  it('takes no paragraphs between two rules of the same extent for a table', () => {
    const items = column(
      [
        'A boxed note set between two rules, as a framed',
        'remark or an abstract is, is a paragraph of prose',
        'whose lines run the whole width between the rules.',
      ],
      252,
      680,
    );
    const out = md(items, [rule(695, 250, 500), rule(640, 250, 500)]);
    expect(out).to.not.include('|');
    expect(out).to.not.include('<table>');
  });

  it('takes no list between booktabs-like rules for a table', () => {
    const items = [
      item('1.', 252, 680),
      item('First step of it', 270, 680),
      item('2.', 252, 668),
      item('Second step', 270, 668),
    ];
    items.push(item('3.', 252, 656), item('Third step here', 270, 656));
    const out = md(items, [rule(695), rule(640)]);
    expect(out).to.not.include('| ---');
    expect(out).to.not.include('<table>');
  });

  it('takes no monospace code between rules for a table', () => {
    const code = ['int main()', '{  return 0;', '}'].flatMap((l, i) =>
      l.split(/(?<=\)|;)\s+|\s{2,}/).map((p, j) => item(p, 252 + j * 60, 680 - i * 12, 10, { mono: true })),
    );
    const out = md(code, [rule(695), rule(640)]);
    expect(out).to.not.include('| ---');
  });
});
