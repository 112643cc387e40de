import { expect } from 'chai';
import { documentMarkdown } from '../../domain/pdf/markdown/document';
import { ocrPageLayout, parseTsvLayout } from '../../domain/pdf/markdown/ocr-layout';
import { pageQuality } from '../../domain/pdf/markdown/quality';
import type { LayoutItem, PageLayout, Segment } from '../../domain/pdf/markdown/types';
import { column, item, page } from '../support/documents/page-layouts';

const md = (...pages: PageLayout[]) => documentMarkdown(pages).markdown;

/** A grid of cells with borders: rows of cell texts, columns at `xs`, rows `h` high from `top`. */
function grid(rows: string[][], xs: number[], top: number, h = 16): { items: LayoutItem[]; segments: Segment[] } {
  const right = xs[xs.length - 1] + 90;
  const edges = [...xs, right];
  const items = rows.flatMap((r, i) => r.map((c, j) => item(c, xs[j] + 3, top - (i + 1) * h + 4)));
  const segments: Segment[] = [
    ...Array.from({ length: rows.length + 1 }, (_, i) => ({
      x0: xs[0],
      x1: right,
      y0: top - i * h,
      y1: top - i * h + 0.5,
    })),
    ...edges.map((x) => ({ x0: x, x1: x + 0.5, y0: top - rows.length * h, y1: top })),
  ];
  return { items, segments };
}

describe('PDF to Markdown (layout rules)', () => {
  it('finds headings by size with levels, joins a paragraph across lines and undoes hyphenation', () => {
    const items = [
      item('Annual Report', 72, 780, 20),
      item('Introduction', 72, 740, 14),
      ...column(
        ['The committee met in the spring to dis-', 'cuss the budget and the plans for', 'the coming year.'],
        72,
        720,
      ),
      item('Details', 72, 670, 14),
      ...column(['Everything went well.'], 72, 650),
    ];
    expect(md(page(items))).to.equal(
      '# Annual Report\n\n## Introduction\n\nThe committee met in the spring to discuss the budget and the plans for the ' +
        'coming year.\n\n## Details\n\nEverything went well.',
    );
  });

  it('takes a bold line of body size as a heading below the sized ones', () => {
    const items = [
      item('Title', 72, 780, 18),
      item('A bold section', 72, 750, 10, { bold: true }),
      ...column(['Body text of the section that runs on.', 'And ends here.'], 72, 735),
    ];
    expect(md(page(items))).to.equal(
      '# Title\n\n## A bold section\n\nBody text of the section that runs on. And ends here.',
    );
  });

  it('takes a first line in title case and body type, the next line starting anew, for the title', () => {
    const sample = column(
      ['Document and Media Processing Service', 'A sample PDF with a text layer.', 'Second line of text.'],
      72,
      730,
      14,
      18,
    );
    expect(md(page(sample))).to.equal(
      '# Document and Media Processing Service\n\nA sample PDF with a text layer. Second line of text.',
    );
    // A paragraph whose first line breaks before a name is no title.
    const prose = column(['The committee met with the', 'Mayor of the town in spring.'], 72, 730);
    expect(md(page(prose))).to.equal('The committee met with the Mayor of the town in spring.');
  });

  it('keeps a label in another font at the start of its line, though its baseline is a little lower', () => {
    const items = [
      ...column(
        [
          'The routine returns one of the following codes, each explained on its right side, on the lines that follow',
          'this paragraph, which runs across the whole width of the page as the text of the manual does.',
        ],
        72,
        730,
      ),
      item('GLP_ESING', 72, 700.6, 10, { mono: true }),
      item('Unable to start the search, because the basis', 144, 701),
      item('is singular within the working precision.', 144, 689),
      item('GLP_ECOND', 72, 676.6, 10, { mono: true }),
      item('Unable to start the search, because the matrix', 144, 677),
      item('is ill-conditioned.', 144, 665),
      item('GLP_EBOUND', 72, 652.6, 10, { mono: true }),
      item('Unable to start the search, because bounds are', 144, 653),
      item('incorrect.', 144, 641),
    ];
    const out = md(page(items));
    expect(out).to.include(
      'GLP_ESING Unable to start the search, because the basis is singular within the working precision.',
    );
    expect(out).to.include('GLP_EBOUND Unable to start the search, because bounds are incorrect.');
  });

  it('keeps a raised glyph kerned back over the one before in its line (the A of the LaTeX logo)', () => {
    // As pdftohtml gives asy-latex.pdf's abstract: `L`, a smaller `A` 2 pt higher starting inside the `L`, `TEX`.
    const items = [
      item('This package provides integration of inline and external Asymptote', 183.46, 557.71, 9, { w: 290.04 }),
      item('graphics within a L', 169.63, 547.97, 9, { w: 78.53 }),
      item('A', 244.85, 549.98, 6, { w: 5.36 }),
      item('TEX document.', 248.82, 546.46, 9, { w: 62.2 }),
      item('This is the documentation for the package, which comes with Asymptote.', 144.73, 500, 10),
    ];
    const out = md(page(items));
    expect(out).to.include('graphics within a LATEX document.');
    expect(out.split('\n')).not.to.include('A');
    // Two runs that truly cover one another at close baselines are still two lines, read top to bottom.
    const twice = md(page([item('first line of text', 72, 700, 10), item('second line here', 70, 697, 10)]));
    expect(twice).to.equal('first line of text second line here');
  });

  it('reads a bracketed category at the right margin first, so a wrapped signature stays whole', () => {
    const items = [
      ...column(['Some prose of the manual that runs across the page as its body text does here.'], 72, 730),
      item('int idn2_to_unicode_8z8z (const char * input, char ** output,', 90, 700),
      item('[Function]', 470, 700),
      item('int flags)', 120, 688),
    ];
    expect(md(page(items))).to.include(
      '[Function] int idn2_to_unicode_8z8z (const char * input, char ** output, int flags)',
    );
  });

  it('keeps bold labels that repeat through the document bold text, not headings', () => {
    const entry = (n: number, name: string) =>
      page(
        [
          item(`2.${n} ${name}`, 72, 780, 14, { bold: true }),
          item('Synopsis', 72, 750, 10, { bold: true }),
          ...column([`int ${name}(void);`], 72, 735),
          item('Returns', 72, 700, 10, { bold: true }),
          ...column(['The routine returns zero on success.'], 72, 685),
        ],
        {},
        n,
      );
    const out = md(entry(1, 'glp_simplex'), entry(2, 'glp_exact'), entry(3, 'glp_interior'));
    // Numbered titles take their number's depth: 2.1 is a level-2 heading.
    expect(out.split('\n').filter((l) => l.startsWith('#'))).to.deep.equal([
      '## 2.1 glp_simplex',
      '## 2.2 glp_exact',
      '## 2.3 glp_interior',
    ]);
    expect(out).to.include('**Synopsis**\n\nint glp_simplex(void);\n\n**Returns**');
  });

  it('takes no contents line, table header row or cover initials for a heading', () => {
    const items = [
      item('M', 72, 800, 30, { bold: true }),
      item('L', 110, 800, 30, { bold: true }),
      item('1 Introduction 9', 72, 740, 10, { bold: true }),
      item('2 Basic routines 14', 72, 726, 10, { bold: true }),
      ...column(['Some prose that sets the body size of this page, and more of it.'], 72, 700),
      item('Algorithm', 72, 660, 10, { bold: true }),
      item('Description', 250, 660, 10, { bold: true }),
      ...column(['A paragraph of body text after the table head that runs on long.'], 72, 640),
      item('A bold section', 72, 610, 10, { bold: true }),
      ...column(['Its text.'], 72, 596),
    ];
    const heads = md(page(items))
      .split('\n')
      .filter((l) => l.startsWith('#'));
    expect(heads).to.deep.equal(['# A bold section']);
  });

  it('reads two columns left first, and a title across both before them', () => {
    const left = [
      'Left column line one and',
      'its second line continues',
      'and a third line ends.',
      'The left column ends now.',
    ];
    const right = [
      'Right column starts here',
      'with a second line going',
      'on to a third line done.',
      'The right column is over.',
    ];
    const items = [item('Across both columns', 72, 790, 16), ...column(left, 72, 760), ...column(right, 320, 760)];
    const out = md(page(items));
    expect(out).to.equal(
      '# Across both columns\n\n' +
        'Left column line one and its second line continues and a third line ends. The left column ends now.\n\n' +
        'Right column starts here with a second line going on to a third line done. The right column is over.',
    );
  });

  it('reads three columns in order', () => {
    const cols = [0, 1, 2].map((c) => Array.from({ length: 5 }, (_, i) => `Column ${c + 1} has its line ${i + 1}`));
    const items = cols.flatMap((lines, c) => column(lines, 40 + c * 180, 760));
    const out = md(page(items));
    const order = [1, 2, 3].map((c) => out.indexOf(`Column ${c} has its line 1`));
    expect(order.every((i) => i >= 0)).to.equal(true);
    expect(order).to.deep.equal([...order].sort((a, b) => a - b));
    expect(out.indexOf('Column 1 has its line 5')).to.be.below(order[1]);
  });

  it('turns bullets and numbers into Markdown lists, a hanging line continuing its item', () => {
    const items = [
      ...column(['Things to bring:'], 72, 780),
      item('•', 80, 765),
      item('Apples from the orchard', 92, 765),
      item('•', 80, 753),
      item('Pears that are long enough', 92, 753),
      item('to wrap onto a second line', 92, 741),
      item('1.', 80, 720),
      item('Open the gate', 92, 720),
      item('2.', 80, 708),
      item('Close it again', 92, 708),
    ];
    expect(md(page(items))).to.equal(
      'Things to bring:\n\n- Apples from the orchard\n- Pears that are long enough to wrap onto a second line\n\n' +
        '1. Open the gate\n2. Close it again',
    );
  });

  it('fences monospace lines as code and keeps their indentation', () => {
    const items = [
      ...column(['Run this:'], 72, 780),
      item('def f(x):', 72, 765, 10, { mono: true, w: 54 }),
      item('return x * 2', 96, 753, 10, { mono: true, w: 72 }),
    ];
    expect(md(page(items))).to.equal('Run this:\n\n```\ndef f(x):\n    return x * 2\n```');
  });

  it('sets one monospace line (a URL in typewriter type) as inline code in its paragraph, never a fenced block', () => {
    const items = [
      ...column(['The sources are at'], 72, 780),
      item('https://example.org/src/', 72, 765, 10, { mono: true, w: 144 }),
      ...column(['and nowhere else.'], 72, 740),
    ];
    expect(md(page(items))).to.equal('The sources are at\n\n`https://example.org/src/`\n\nand nowhere else.');
  });

  it('never indents a list item that follows no item deeper than the margin: indentation alone makes no code', () => {
    // An indented item after a paragraph would be an indented code block at four spaces; under an item it nests
    // one level at most.
    const items = [
      ...column(['Options of the tool:'], 72, 780),
      item('•', 140, 765),
      item('Deep item standing alone', 152, 765),
      ...column(['A paragraph between.'], 72, 740),
      item('•', 80, 720),
      item('Top item', 92, 720),
      item('•', 160, 708),
      item('Far deeper item', 172, 708),
    ];
    const out = md(page(items));
    expect(out).to.equal(
      'Options of the tool:\n\n- Deep item standing alone\n\nA paragraph between.\n\n- Top item\n  - Far deeper item',
    );
    expect(out.split('\n').some((l) => /^ {4}/.test(l))).to.equal(false);
  });

  it('removes running headers, footers and page numbers that repeat across pages', () => {
    const pages = [1, 2, 3].map((n) =>
      page(
        [
          item('ACME Corporation Annual Report', 72, 810, 8),
          ...column([`Body text of page ${n} is here.`], 72, 700),
          item(`Page ${n} of 3`, 280, 30, 8),
        ],
        {},
        n,
      ),
    );
    const doc = documentMarkdown(pages);
    expect(doc.markdown).to.equal(
      'Body text of page 1 is here.\n\nBody text of page 2 is here.\n\nBody text of page 3 is here.',
    );
    expect(doc.pages.map((p) => p.markdown)).to.deep.equal([1, 2, 3].map((n) => `Body text of page ${n} is here.`));
  });

  it("removes a chapter's running header carrying the page number, though it stands on few of the pages", () => {
    // Texinfo: "Chapter 2: Usage 12" at the top of the chapter's pages, the number running with the page.
    const header = (n: number) => (n >= 3 && n <= 5 ? [item(`Chapter 2: Usage ${n + 9}`, 72, 800, 10)] : []);
    const pages = Array.from({ length: 10 }, (_, i) => i + 1).map((n) =>
      page(
        [
          ...header(n),
          ...column([`Body text of page ${n} runs here,`, 'on two lines.'], 72, 740),
          // A margin line whose number does not run with the page stays.
          ...(n >= 6 && n <= 8 ? [item('See table 4 below', 72, 40, 10)] : []),
        ],
        {},
        n,
      ),
    );
    const out = md(...pages);
    expect(out).not.to.include('Chapter 2');
    expect(out).to.include('Body text of page 3 runs here, on two lines.');
    expect(out.match(/See table 4 below/g)).to.have.length(3);
    // On two pages only, the same line is kept: it may be the document's own.
    const two = md(...pages.map((p) => (p.page === 5 ? { ...p, items: p.items.slice(1) } : p)));
    expect(two.match(/Chapter 2: Usage/g)).to.have.length(2);
  });

  it('reads a ruled grid as a GFM table, pipes escaped', () => {
    const g = grid(
      [
        ['Name', 'Value', 'Note'],
        ['Alpha', '1', 'a|b'],
        ['Beta', '2', ''],
      ],
      [72, 162, 252],
      700,
    );
    expect(md(page(g.items, { segments: g.segments }))).to.equal(
      '| Name | Value | Note |\n| --- | --- | --- |\n| Alpha | 1 | a\\|b |\n| Beta | 2 |  |',
    );
  });

  it('reads a booktabs table (three rules, no vertical ones) with a cell of two lines', () => {
    const rule = (y: number): Segment => ({ x0: 70, x1: 330, y0: y, y1: y + 0.4 });
    const items = [
      item('Method', 75, 690),
      item('Score', 200, 690),
      item('Baseline', 75, 670),
      item('0.50', 200, 670),
      item('Ours', 75, 658),
      item('0.75', 200, 658),
      item('with extras', 200, 646),
    ];
    expect(md(page(items, { segments: [rule(703), rule(684), rule(640)] }))).to.equal(
      '| Method | Score |\n| --- | --- |\n| Baseline | 0.50 |\n| Ours | 0.75 with extras |',
    );
  });

  it('reads aligned columns without rules as a table, but never prose in two columns', () => {
    const rows = [
      ['Region', 'Spring', 'Autumn'],
      ['North', '12', '15'],
      ['South', '7', '9'],
    ];
    const items = rows.flatMap((r, i) => r.map((c, j) => item(c, 72 + j * 100, 700 - i * 14)));
    expect(md(page(items))).to.equal(
      '| Region | Spring | Autumn |\n| --- | --- | --- |\n| North | 12 | 15 |\n| South | 7 | 9 |',
    );
  });

  it('joins a table continued on the next page into one, dropping the repeated header row', () => {
    const head = ['Item', 'Count'];
    const p1 = grid([head, ['One', '1'], ['Two', '2']], [72, 200], 200);
    const p2 = grid([head, ['Three', '3']], [72, 200], 780);
    const doc = documentMarkdown([
      page([...column(['Inventory list follows.'], 72, 400), ...p1.items], { segments: p1.segments }, 1),
      page(p2.items, { segments: p2.segments }, 2),
    ]);
    expect(doc.markdown).to.equal(
      'Inventory list follows.\n\n| Item | Count |\n| --- | --- |\n| One | 1 |\n| Two | 2 |\n| Three | 3 |',
    );
    expect(doc.pages[1].markdown).to.equal('| Item | Count |\n| --- | --- |\n| Three | 3 |');
  });

  it('joins a paragraph cut by a page break', () => {
    const doc = documentMarkdown([
      page(column(['The sentence starts on one page and'], 72, 200), {}, 1),
      page(column(['ends on the next one.'], 72, 780), {}, 2),
    ]);
    expect(doc.markdown).to.equal('The sentence starts on one page and ends on the next one.');
  });

  it('takes heading levels from the outline, and a bookmarked line of body size as a heading', () => {
    const items = [
      item('1 Overview', 72, 780, 14),
      ...column(['Some text under the overview.'], 72, 760),
      item('1.1 Scope', 72, 730),
      ...column(['Text about the scope of it all.', 'It goes on.'], 72, 712),
    ];
    const outline = [
      { title: 'Overview', level: 1 },
      { title: 'Scope', level: 2 },
    ];
    expect(md(page(items, { outline }))).to.equal(
      '# 1 Overview\n\nSome text under the overview.\n\n## 1.1 Scope\n\nText about the scope of it all. It goes on.',
    );
  });

  it('keeps table of contents lines apart, leaders squashed, and takes none of them for a heading', () => {
    const items = [
      item('Contents', 72, 780, 16),
      item('1 Introduction . . . . . . . . . . . . 1', 72, 750, 10, { bold: true }),
      item('1.1 Scope . . . . . . . . . . . . . . 2', 84, 738),
      item('2 Methods . . . . . . . . . . . . . . 5', 72, 726, 10, { bold: true }),
      ...column(['Body text that is long enough to count as the body of this page.'], 72, 700),
    ];
    expect(md(page(items))).to.equal(
      '# Contents\n\n1 Introduction … 1\n\n1.1 Scope … 2\n\n2 Methods … 5\n\n' +
        'Body text that is long enough to count as the body of this page.',
    );
  });

  it('builds paragraphs of a scan from tesseract TSV blocks and paragraphs', () => {
    const header = 'level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext';
    const rows = [header, '1\t1\t0\t0\t0\t0\t0\t0\t2480\t3508\t-1\t'];
    const words = (block: number, par: number, line: number, top: number, ws: string[]) => {
      rows.push(`4\t1\t${block}\t${par}\t${line}\t0\t300\t${top}\t1500\t50\t-1\t`);
      ws.forEach((w, i) =>
        rows.push(`5\t1\t${block}\t${par}\t${line}\t${i + 1}\t${300 + i * 200}\t${top}\t180\t40\t95\t${w}`),
      );
    };
    words(1, 1, 1, 400, ['First', 'paragraph', 'starts']);
    words(1, 1, 2, 460, ['and', 'goes', 'on.']);
    words(1, 2, 1, 600, ['Second', 'paragraph', 'here.']);
    const layout = ocrPageLayout(1, parseTsvLayout(rows.join('\n')));
    expect(md(layout)).to.equal('First paragraph starts and goes on.\n\nSecond paragraph here.');
  });

  it("reads a scanned line on its words' baseline and size: a tall umlaut, a short word or a descender makes no heading", () => {
    const header = 'level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext';
    const rows = [header, '1\t1\t0\t0\t0\t0\t0\t0\t1240\t1754\t-1\t'];
    // Word boxes as tesseract gives them at 150 dpi for 11 pt type: 17 px from the ascenders to the baseline, 13 px
    // for a word of x-height letters, 22 px with a descender, 34 px for a capital with an umlaut and a descender.
    const line = (par: number, n: number, base: number, ws: [string, number, number][]) =>
      ws.forEach(([w, h, drop], i) =>
        rows.push(`5\t1\t1\t${par}\t${n}\t${i + 1}\t${100 + i * 90}\t${base - h + drop}\t80\t${h}\t95\t${w}`),
      );
    const plain = (w: string): [string, number, number] => [w, 17, 0];
    line(1, 1, 90, [
      ['Äpfel', 34, 6],
      plain('fielen'),
      ['vom', 13, 0],
      plain('Baum'),
      ['gestern', 22, 5],
      plain('früh'),
    ]);
    line(1, 2, 121, [plain('und'), plain('lagen'), plain('dann'), plain('im'), plain('Gras.')]);
    line(2, 1, 200, [['Über', 34, 0], plain('die'), plain('Brücke'), plain('gingen'), plain('zwei'), plain('Männer')]);
    line(2, 2, 231, [['am', 13, 0], plain('Morgen'), plain('des'), plain('ersten'), plain('Tages.')]);
    const layout = ocrPageLayout(1, parseTsvLayout(rows.join('\n')), 150);
    // Every word of a line on one baseline, whatever its box.
    const ys = (words: string[]) => new Set(layout.items.filter((i) => words.includes(i.str)).map((i) => i.y));
    expect(ys(['Äpfel', 'vom', 'gestern', 'früh']).size).to.equal(1);
    expect(md(layout)).to.equal(
      'Äpfel fielen vom Baum gestern früh und lagen dann im Gras.\n\nÜber die Brücke gingen zwei Männer am Morgen des ersten Tages.',
    );
  });
});

describe('PDF page quality', () => {
  const prose =
    'The committee met in the spring to discuss the budget and the plans for the coming year. Everyone agreed ' +
    'that the river needs a new bridge before the winter floods arrive in the valley.';

  it('scores real prose high and says why', () => {
    const q = pageQuality(prose, { width: 595, height: 842 });
    expect(q.score).to.be.above(0.9);
    expect(q.signals.word_shape_rate).to.be.above(0.95);
    expect(q.signals.garbage_ratio).to.equal(0);
    expect(q.signals.glyphs_per_area).to.be.above(0);
  });

  it('scores a broken encoding, consonant soup and private-use glyphs low', () => {
    expect(pageQuality('\uE001\uE002\uE003 \uFFFD\uFFFD xqzt bcdfghk'.repeat(10)).score).to.be.below(0.2);
    expect(
      pageQuality('Thp cmmttt mtt n th sprng t dscss th bdgt nd th plns fr th cmng yr wth xtr txt'.repeat(3)).score,
    ).to.be.below(0.5);
  });

  it('lowers the score of OCR text by its mean word confidence', () => {
    const sure = pageQuality(prose, { ocrConfidence: 95 });
    const unsure = pageQuality(prose, { ocrConfidence: 45 });
    expect(sure.signals.ocr_confidence).to.equal(0.95);
    expect(unsure.score).to.be.below(sure.score * 0.6);
  });
});
