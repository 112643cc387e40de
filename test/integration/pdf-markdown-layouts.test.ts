import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { markdownPageLayouts } from '../../providers/pdf/markdown-layouts';
import { drawingNeed } from '../../domain/pdf/markdown/needs-drawings';
import { pdfjsThreadsRunning } from '../../providers/pdf/pdfjs-thread';
import { popplerPageLayouts } from '../../providers/pdf/poppler-layout';
import { expectPdfError } from '../support/assert';
import { htmlToPdf, structuredDoc } from '../support/documents/html-pdf';
import { buildPdf, corruptPdf } from '../support/documents/pdf-factory';

// The layouts the Markdown rules read, from real poppler (pdftohtml -xml) and the pages' content streams, on PDFs
// generated here: a report printed by Chromium (tables ruled and not, bullets drawn as shapes) and plain pages.

describe('Markdown layouts (poppler text, drawings from the content stream where needed)', function () {
  this.timeout(120_000);
  let dir: string;
  let report: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'md-layouts-'));
    report = path.join(dir, 'report.pdf');
    await writeFile(report, await htmlToPdf(structuredDoc().html, { pageHeaders: true }));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('reads the drawings of the pages that need them only, and gives their rulings and drawn bullets', async () => {
    const text = await popplerPageLayouts(report, [1, 2, 3]);
    const layouts = await markdownPageLayouts(report, [1, 2, 3]);
    for (const [page, l] of layouts) {
      const need = drawingNeed(text.get(page)!);
      // Poppler gives no drawings: a page has segments only when its drawings were read.
      if (!need) expect(l.segments, `page ${page}`).to.deep.equal([]);
      expect(l.items.length).to.be.at.least(text.get(page)!.items.length);
    }
    // Page 1 holds the bulleted list (bullets drawn as shapes) and the unruled table; pages 2 and 3 the ruled table
    // that goes on over the page break.
    expect(drawingNeed(text.get(1)!)).to.not.equal(undefined);
    expect(layouts.get(1)!.items.filter((i) => i.str === '•')).to.have.length(3);
    expect(layouts.get(2)!.segments.length).to.be.above(10);
    expect(layouts.get(3)!.segments.length).to.be.above(4);
    expect(pdfjsThreadsRunning()).to.equal(0);
  });

  it('gives a page of plain lines its text, sizes and baselines, and no drawings', async () => {
    const file = path.join(dir, 'plain.pdf');
    await writeFile(
      file,
      buildPdf({
        pages: [{ kind: 'lines', lines: ['A first line of text.', 'A second line.'], size: 12, leading: 16 }],
      }),
    );
    const [l] = [...(await markdownPageLayouts(file, [1])).values()];
    expect(l.items.map((i) => i.str)).to.deep.equal(['A first line of text.', 'A second line.']);
    expect(l.items.map((i) => i.size)).to.deep.equal([12, 12]);
    // Baselines 16 pt apart, the first at the top margin (842 - 72), within a point.
    expect(l.items[0].y).to.be.closeTo(770, 1.5);
    expect(l.items[0].y - l.items[1].y).to.be.closeTo(16, 0.5);
    expect(l.segments).to.deep.equal([]);
  });

  it('reads a document that forbids copying its text, as the text layer does', async () => {
    const file = path.join(dir, 'nocopy.pdf');
    await writeFile(
      file,
      buildPdf({
        pages: [{ kind: 'lines', lines: ['Words that may not be copied.'] }],
        userPassword: '',
        allowCopy: false,
      }),
    );
    const [l] = [...(await markdownPageLayouts(file, [1])).values()];
    expect(l.items.map((i) => i.str)).to.deep.equal(['Words that may not be copied.']);
  });

  it('refuses a damaged file and one locked by a password with the contract errors poppler gives for them', async () => {
    const file = path.join(dir, 'corrupt.pdf');
    await writeFile(file, corruptPdf());
    await expectPdfError(markdownPageLayouts(file, [1]), 'UNPROCESSABLE_INPUT', 'corrupt');
    const locked = path.join(dir, 'locked.pdf');
    await writeFile(locked, buildPdf({ pages: [{ kind: 'lines', lines: ['Hidden.'] }], userPassword: 'secret' }));
    await expectPdfError(markdownPageLayouts(locked, [1]), 'UNPROCESSABLE_INPUT', 'encrypted');
  });
});
