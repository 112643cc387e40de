import { expect } from 'chai';
import { documentMarkdown } from '../../domain/pdf/markdown/document';
import type { LayoutItem } from '../../domain/pdf/markdown/types';
import { column, item, page } from '../support/documents/page-layouts';

/**
 * Reading order of journal-paper geometry (order.ts): a full-width title block over two columns, a full-width float
 * between them, footnotes at a column's foot, a contents
 * column beside prose. Each line is 48 characters wide, so it
 * runs from its column's left edge to the gutter (x 290–310 on the A4 page).
 */
const md = (items: LayoutItem[]) => documentMarkdown([page(items)]).markdown;

/** `n` prose lines of a column, each 48 characters long, tagged `tag` and numbered. */
const prose = (tag: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${tag} line ${String(i + 1).padStart(2, '0')} `.padEnd(47, 'x') + '.');

/** A centred title block of `n` lines from `top`, 14 pt. */
const titleBlock = (n: number, top: number) =>
  Array.from({ length: n }, (_, i) => {
    const s = `Title block line ${i + 1} of the paper`;
    return item(s, 297 - s.length * 3.5, top - i * 18, 14);
  });

/** Where each text stands in the output, which must hold it. */
const positions = (out: string, texts: string[]) =>
  texts.map((t) => {
    const i = out.indexOf(t);
    expect(i, t).to.be.at.least(0);
    return i;
  });
const inOrder = (v: number[]) => expect(v).to.deep.equal([...v].sort((a, b) => a - b));

describe('PDF Markdown reading order on journal layouts', () => {
  it('reads a full-width title block, then the left column with its footnotes, then the right column', () => {
    const items = [
      ...titleBlock(8, 800),
      ...column(prose('Left', 24), 50, 640),
      ...column(['1 A footnote at the foot of the left column.', '2 Another footnote there.'], 50, 330, 8, 9),
      ...column(prose('Right', 28), 310, 640),
    ];
    const out = md(items);
    inOrder(
      positions(out, [
        'Title block line 8',
        'Left line 01',
        'Left line 24',
        'A footnote at the foot',
        'Another footnote',
        'Right line 01',
        'Right line 28',
      ]),
    );
  });

  it('reads a full-width float between the columns after the columns above it and before those below', () => {
    const caption = column(
      [
        'FIG. 1. A wide figure caption that runs across both columns of the page and explains the figure',
        'in a second line of the same width as the first line of this caption text, to the right margin.',
      ],
      60,
      470,
      9,
      11,
    );
    const items = [
      ...titleBlock(5, 800),
      ...column(prose('Upper left', 12), 50, 690),
      ...column(prose('Upper right', 12), 310, 690),
      ...caption,
      ...column(prose('Lower left', 12), 50, 420),
      ...column(prose('Lower right', 12), 310, 420),
    ];
    const out = md(items);
    inOrder(
      positions(out, [
        'Title block line 5',
        'Upper left line 12',
        'Upper right line 01',
        'Upper right line 12',
        'FIG. 1.',
        'Lower left line 01',
        'Lower left line 12',
        'Lower right line 01',
      ]),
    );
  });
  it('reads a contents column beside prose column by column, not as one table across the gutter', () => {
    const entries = Array.from({ length: 10 }, (_, i) => [
      item(`${i + 1}`, 50, 640 - i * 12),
      item(`Section title ${i + 1}`, 65, 640 - i * 12),
      item(`${i + 2}`, 282, 640 - i * 12),
    ]).flat();
    // The left column goes on in prose under its contents, the right one is prose throughout.
    const left = column(prose('Introduction', 8), 50, 508);
    const out = md([...titleBlock(6, 800), ...entries, ...left, ...column(prose('Abstract', 20), 310, 640)]);
    inOrder(
      positions(out, [
        'Title block line 6',
        'Section title 1 ',
        'Section title 10',
        'Introduction line 08',
        'Abstract line 01',
      ]),
    );
    expect(out.indexOf('Section title 10')).to.be.below(out.indexOf('Abstract line 02'));
    expect(out.split('\n').filter((l) => l.startsWith('|') && l.includes('Abstract line'))).to.deep.equal([]);
  });
});
