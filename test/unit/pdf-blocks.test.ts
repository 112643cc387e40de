import { expect } from 'chai';
import { documentMarkdown } from '../../domain/pdf/markdown/document';
import { ocrPageLayout, parseTsvLayout } from '../../domain/pdf/markdown/ocr-layout';
import { pagesMarkdown } from '../../domain/pdf/markdown/pages';
import type { Bbox, PageBlock } from '../../domain/pdf/markdown/provenance';
import type { LayoutItem, Segment } from '../../domain/pdf/markdown/types';
import { column, item, page } from '../support/documents/page-layouts';

const H = 842;

/** True when `inner` lies inside `outer` (a point of slack for rounding). */
const inside = (inner: Bbox, outer: Bbox) =>
  inner[0] >= outer[0] - 1 && inner[1] >= outer[1] - 1 && inner[2] <= outer[2] + 1 && inner[3] <= outer[3] + 1;
/** The box of an item from the page's top-left: its baseline with 0.7 of its size above and 0.2 below. */
const itemBox = (it: LayoutItem): Bbox => [it.x, H - (it.y + 0.7 * it.size), it.x + it.w, H - (it.y - 0.2 * it.size)];

describe('PDF blocks and where they stand (contract §13)', () => {
  it("gives each block its type, Markdown, level, reading order and a box around its own words, the page's Markdown their text", () => {
    const title = item('Annual Report', 72, 780, 20);
    const left = column(['Left column line one and', 'its second line continues', 'and it ends here now.'], 72, 740);
    const right = column(['Right column starts here', 'with a second line going', 'on to its very end.'], 320, 740);
    const bullets = [item('•', 80, 690), item('Apples from the orchard', 92, 690)];
    const code = [
      item('def f(x):', 72, 660, 10, { mono: true, w: 54 }),
      item('return 2', 96, 648, 10, { mono: true, w: 48 }),
    ];
    const doc = documentMarkdown([page([title, ...left, ...right, ...bullets, ...code])]);
    const blocks = doc.pages[0].blocks;
    expect(blocks.map((b) => [b.type, b.order, b.level])).to.deep.equal([
      ['heading', 0, 1],
      ['paragraph', 1, undefined],
      ['paragraph', 2, undefined],
      ['list_item', 3, undefined],
      ['code', 4, undefined],
    ]);
    expect(blocks[0].text).to.equal('# Annual Report');
    expect(blocks[1].text).to.equal('Left column line one and its second line continues and it ends here now.');
    expect(blocks[3].text).to.equal('- Apples from the orchard');
    // The page's Markdown is its blocks' text in order, a blank line apart.
    expect(doc.pages[0].markdown).to.equal(blocks.map((b) => b.text).join('\n\n'));
    // Each box holds its own words and none of the other blocks' words.
    const words: [PageBlock, LayoutItem[]][] = [
      [blocks[0], [title]],
      [blocks[1], left],
      [blocks[2], right],
      [blocks[3], bullets],
      [blocks[4], code],
    ];
    for (const [b, own] of words) {
      for (const w of own) expect(inside(itemBox(w), b.bbox), `${w.str} in ${b.type} ${b.bbox}`).to.equal(true);
      for (const [other, theirs] of words)
        if (other !== b)
          for (const w of theirs) expect(inside(itemBox(w), b.bbox), `${w.str} not in ${b.bbox}`).to.equal(false);
    }
    // The columns side by side: the left one's box ends before the right one's begins, both below the title.
    expect(blocks[1].bbox[2]).to.be.below(blocks[2].bbox[0]);
    expect(blocks[0].bbox[3]).to.be.at.most(blocks[1].bbox[1]);
  });

  it("keeps running headers and footers as blocks before and after the body, outside the page's Markdown", () => {
    const pages = [1, 2, 3].map((n) =>
      page(
        [
          item('ACME Corporation Annual Report', 72, 810, 8),
          ...column([`Body of page ${n}.`], 72, 700),
          item(`Page ${n} of 3`, 280, 30, 8),
        ],
        {},
        n,
      ),
    );
    const doc = documentMarkdown(pages);
    for (const [i, p] of doc.pages.entries()) {
      expect(p.markdown).to.equal(`Body of page ${i + 1}.`);
      expect(p.blocks.map((b) => [b.type, b.text, b.order])).to.deep.equal([
        ['header', 'ACME Corporation Annual Report', 0],
        ['paragraph', `Body of page ${i + 1}.`, 1],
        ['footer', `Page ${i + 1} of 3`, 2],
      ]);
      expect(p.blocks[0].bbox[1]).to.be.below(p.blocks[1].bbox[1]);
      expect(p.blocks[2].bbox[1]).to.be.above(p.blocks[1].bbox[3]);
    }
  });

  it("boxes a table by its region, and a scanned page's blocks in points around tesseract's words", () => {
    const xs = [72, 200, 330];
    const rows = [
      ['Name', 'Value', 'Note'],
      ['Alpha', '1', 'first'],
      ['Beta', '2', 'second'],
    ];
    const top = 700;
    const items = rows.flatMap((r, i) => r.map((c, j) => item(c, xs[j] + 3, top - (i + 1) * 16 + 4)));
    const right = 420;
    const segments: Segment[] = [
      ...rows.concat([[]]).map((_, i) => ({ x0: 72, x1: right, y0: top - i * 16, y1: top - i * 16 + 0.5 })),
      ...[...xs, right].map((x) => ({ x0: x, x1: x + 0.5, y0: top - rows.length * 16, y1: top })),
    ];
    const table = documentMarkdown([page(items, { segments }, 1)]).pages[0].blocks;
    expect(table.map((b) => b.type)).to.deep.equal(['table']);
    expect(table[0].text.split('\n')[0]).to.equal('| Name | Value | Note |');
    // The region from the top rule (half a point thick) to the bottom one.
    [72, H - top, right, H - (top - 48)].forEach((v, i) =>
      expect(table[0].bbox[i], `bbox[${i}]`).to.be.closeTo(v, 0.5),
    );

    // A scan at 300 dpi: a word at pixels (300, 400)-(480, 440) stands at 72 + 96 points from the top-left.
    const header = 'level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext';
    const tsv = [
      header,
      '1\t1\t0\t0\t0\t0\t0\t0\t2480\t3508\t-1\t',
      '4\t1\t1\t1\t1\t0\t300\t400\t380\t50\t-1\t',
      '5\t1\t1\t1\t1\t1\t300\t400\t180\t50\t95\tScanned',
      '5\t1\t1\t1\t1\t2\t500\t400\t180\t50\t95\twords.',
    ].join('\n');
    const scan = documentMarkdown([ocrPageLayout(1, parseTsvLayout(tsv))]).pages[0].blocks;
    expect(scan.map((b) => [b.type, b.text])).to.deep.equal([['paragraph', 'Scanned words.']]);
    const px = (v: number) => (v * 72) / 300;
    const [x0, y0, x1, y1] = scan[0].bbox;
    expect(x0).to.be.closeTo(px(300), 0.2);
    expect(x1).to.be.closeTo(px(680), 0.2);
    // The words' tops (96 points from the top) within a tenth of their height; their bottoms are the baseline (no
    // descenders in these words), and the box reaches a descender's depth below it: a quarter of the type size, the
    // words' height over 0.9.
    expect(y0).to.be.closeTo(px(400), px(50) * 0.1);
    expect(y1).to.be.closeTo(px(450 + (0.25 * 50) / 0.9), px(50) * 0.1);
  });

  it('gives a page a vision model read no blocks, and every page with a layout its own', () => {
    const layout = page(column(['A page with a text layer.'], 72, 700));
    const out = pagesMarkdown([
      { page: 1, text: 'A page with a text layer.', method: 'native', layout },
      { page: 2, text: '# Read by a model', method: 'vision_llm' },
    ]);
    expect(out.pages.map((p) => p.blocks.map((b) => b.type))).to.deep.equal([['paragraph'], []]);
    expect(out.pages[1].markdown).to.equal('# Read by a model');
  });
});

describe('PDF blocks: captions and footnotes (contract §13)', () => {
  const body = (top: number) =>
    column(
      [
        'The committee met in the spring to discuss the budget and',
        'the plans for the coming year, and everyone agreed that the',
        'river needs a new bridge before the winter floods arrive.',
      ],
      72,
      top,
    );

  it("types a figure's or a table's caption and a footnote at the foot of the page; their Markdown stays a paragraph's", () => {
    const items = [
      ...body(760),
      item('Figure 3: Rainfall in the valley by month, 2019 to 2024.', 72, 700),
      ...body(670),
      item('Tabelle 2. Die Pegel der Brücke im Winter.', 72, 610),
      ...body(580),
      item('1 The bridge was last repaired in 1987, after the great flood.', 72, 90, 8),
      item('† Figures from the regional water authority, whose gauges stand', 72, 72, 8),
      item('under the bridge.', 72, 63, 8),
      item('‡ And from the town archive.', 72, 54, 8),
    ];
    const blocks = documentMarkdown([page(items)]).pages[0].blocks;
    expect(blocks.map((b) => b.type)).to.deep.equal([
      'paragraph',
      'caption',
      'paragraph',
      'caption',
      'paragraph',
      'footnote',
      'footnote',
      'footnote',
    ]);
    // Notes that follow each other without a gap are apart; a note's own second line stays in it.
    expect(blocks[6].text).to.equal(
      '† Figures from the regional water authority, whose gauges stand under the bridge.',
    );
    expect(blocks[7].text).to.equal('‡ And from the town archive.');
    expect(blocks[6].bbox[3]).to.be.at.most(blocks[7].bbox[1] + 0.5);
    expect(blocks[1].text).to.equal('Figure 3: Rainfall in the valley by month, 2019 to 2024.');
    expect(blocks[5].text).to.equal('1 The bridge was last repaired in 1987, after the great flood.');
  });

  it('leaves a sentence that names a table, a small note mid-page and a body-size numbered line at the foot alone', () => {
    const items = [
      item('Table 3 shows the rainfall of every month since 2019.', 72, 760),
      ...body(730),
      item('2 Small print in the middle of the page stays a paragraph.', 72, 500, 8),
      ...body(470),
      item('Figures from the regional water authority are given below.', 72, 100),
    ];
    const blocks = documentMarkdown([page(items)]).pages[0].blocks;
    expect(blocks.map((b) => b.type))
      .to.not.include('caption')
      .and.not.include('footnote');
  });
});
