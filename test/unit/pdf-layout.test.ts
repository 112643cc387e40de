import { expect } from 'chai';
import { layoutText, lineText, type TextRun } from '../../domain/pdf/layout';
import { parsePdfInfo } from '../../providers/pdf/poppler';
import { contiguousRanges } from '../../providers/pdf/poppler';

/** A run of 10 pt text whose width is 5 pt per character (close to Helvetica's average). */
const run = (str: string, x: number, y: number, extra: Partial<TextRun> = {}): TextRun => ({
  str,
  x,
  y,
  width: str.length * 5,
  size: 10,
  ...extra,
});

/** A column of lines at x, 13 pt apart, from top y downwards. */
const column = (lines: string[], x: number, top: number) => lines.map((l, i) => run(l, x, top - i * 13));

const para = (prefix: string, n: number, width = 36) =>
  Array.from({ length: n }, (_, i) => `${prefix} line ${i + 1} `.padEnd(width, 'x'));

describe('PDF page layout', () => {
  it('orders lines top to bottom and runs left to right whatever the drawing order', () => {
    const runs = [run('world', 40, 700), run('third', 10, 674), run('Hello', 10, 700), run('second', 10, 687)];
    expect(layoutText(runs)).to.equal('Hello world\nsecond\nthird');
  });

  it('keeps a superscript on its line and a line below on its own', () => {
    const runs = [run('E = mc', 10, 700), run('2', 40, 703, { size: 6, width: 3 }), run('next line', 10, 688)];
    expect(layoutText(runs)).to.equal('E = mc2\nnext line');
  });

  it('starts a new line after an explicit line end even when the baseline barely moves', () => {
    const close = [run('alpha', 10, 100, { eol: true }), run('beta', 50, 97)];
    expect(layoutText(close)).to.equal('alpha\nbeta');
    const same = [run('alpha', 10, 100), run('beta', 50, 97)];
    expect(layoutText(same)).to.equal('alpha beta');
  });

  it('keeps two runs that overlap on one baseline on separate lines and drops a fake-bold copy', () => {
    expect(layoutText([run('Bold', 10, 100), run('Bold', 10.3, 100), run('over', 12, 99.5)])).to.equal('Bold\nover');
  });

  it('inserts a space only where the gap is wider than a fraction of the font size', () => {
    const g = (str: string, x0: number) => ({ str, x0, x1: x0 + str.length * 5, size: 10 });
    expect(lineText([g('Wort', 0), g('ende', 20.5), g('nach', 44)])).to.equal('Wortende nach');
    expect(lineText([g('a ', 0), g('b', 30)])).to.equal('a b');
  });

  it('ignores empty and whitespace runs and non-finite positions', () => {
    const runs = [run('', 0, 0, { eol: true }), run('   ', 10, 10), run('x', Number.NaN, 5), run('ok', 10, 50)];
    expect(layoutText(runs)).to.equal('ok');
    expect(layoutText([])).to.equal('');
  });

  it('reads two columns left first, with a title above and a footer below', () => {
    const left = para('left', 8);
    const right = para('right', 8);
    const runs = [
      run('A title that runs across both of the columns', 50, 760, { width: 400 }),
      ...column(left, 50, 720).flatMap((r, i) => [column(right, 260, 720)[i], r]),
      run('page 1', 50, 60),
    ];
    expect(layoutText(runs)).to.equal(
      ['A title that runs across both of the columns', ...left, ...right, 'page 1'].join('\n'),
    );
  });

  it('reads three columns left to right', () => {
    const [a, b, c] = [para('first', 6, 30), para('second', 6, 30), para('third', 6, 30)];
    const runs = [...column(c, 390, 700), ...column(a, 50, 700), ...column(b, 220, 700)];
    expect(layoutText(runs)).to.equal([...a, ...b, ...c].join('\n'));
  });

  it('reads a column layout with a full-width section between two column bands band by band', () => {
    const [a1, b1, a2, b2] = [para('a1', 4), para('b1', 4), para('a2', 4), para('b2', 4)];
    const runs = [
      ...column(a1, 50, 760),
      ...column(b1, 260, 760),
      run('A full width paragraph between two column bands of text', 50, 690, { width: 420 }),
      ...column(a2, 50, 670),
      ...column(b2, 260, 670),
    ];
    const expected = [...a1, ...b1, 'A full width paragraph between two column bands of text', ...a2, ...b2];
    expect(layoutText(runs)).to.equal(expected.join('\n'));
  });

  it('does not read short labels and values as columns', () => {
    const labels = [
      'Name:',
      'Billing address of customer:',
      'Street:',
      'Delivery address if different:',
      'City:',
      'Invoice contact person name:',
      'Phone:',
    ];
    const runs = labels.flatMap((label, i) => [
      run(label, 50, 700 - i * 13),
      run(`value number ${i}`, 250, 700 - i * 13),
    ]);
    expect(layoutText(runs).split('\n')).to.deep.equal(labels.map((l, i) => `${l} value number ${i}`));
  });

  it('does not split single-column prose with aligned word gaps into columns', () => {
    // Every line has a word gap of 5 pt (0.5 em) at the same x, in the middle of the text block.
    const lines = Array.from({ length: 10 }, (_, i) => [
      run(`first half of line ${i}!`, 50, 700 - i * 13),
      run(`second half of line ${i}`, 160, 700 - i * 13),
    ]);
    const text = layoutText(lines.flat()).split('\n');
    expect(text).to.have.length(10);
    expect(text[0]).to.equal('first half of line 0! second half of line 0');
  });
});

describe('poppler helpers', () => {
  it('cuts page lists into runs of consecutive pages, sorted and without duplicates', () => {
    expect(contiguousRanges([7, 1, 2, 3, 8, 2, 10])).to.deep.equal([
      [1, 3],
      [7, 8],
      [10, 10],
    ]);
    expect(contiguousRanges([])).to.deep.equal([]);
  });

  it('parses pdfinfo output, titles with colons included', () => {
    const out =
      'Title:           Bericht: Größe & Maß\nAuthor:         Jörg\nPages:          12\nEncrypted:      yes ' +
      '(print:yes copy:no change:no addNotes:no algorithm:RC4)\nPage size:      612 x 792 pts (letter)\n';
    expect(parsePdfInfo(out)).to.deep.equal({
      title: 'Bericht: Größe & Maß',
      author: 'Jörg',
      pages: 12,
      encrypted: true,
      pageSize: { width: 612, height: 792 },
    });
    expect(parsePdfInfo('Pages: 1\nEncrypted: no\n')).to.deep.equal({
      title: '',
      author: '',
      pages: 1,
      encrypted: false,
    });
  });
});
