import { expect } from 'chai';
import { pageRange } from '../../core/jobs/page-range';

// Contract §6: page range 1-indexed and inclusive on every endpoint; page_start > page_count or
// page_end < page_start → 400.
describe('page range rule', () => {
  it('defaults to the whole document: page 1 to the last page', () => {
    expect(pageRange({}, 4)).to.deep.equal({ ok: true, first: 1, last: 4 });
    expect(pageRange({ page_start: null, page_end: null }, 4)).to.deep.equal({ ok: true, first: 1, last: 4 });
  });

  it('keeps both ends inclusive, and a one-page range', () => {
    expect(pageRange({ page_start: 2, page_end: 3 }, 4)).to.deep.equal({ ok: true, first: 2, last: 3 });
    expect(pageRange({ page_start: 3, page_end: 3 }, 4)).to.deep.equal({ ok: true, first: 3, last: 3 });
    expect(pageRange({ page_start: 4 }, 4)).to.deep.equal({ ok: true, first: 4, last: 4 });
  });

  it('cuts page_end to the last page', () => {
    expect(pageRange({ page_start: 2, page_end: 99 }, 4)).to.deep.equal({ ok: true, first: 2, last: 4 });
  });

  it('refuses page_start beyond the page count, naming the count', () => {
    expect(pageRange({ page_start: 5 }, 4)).to.deep.equal({
      ok: false,
      issue: { path: 'page_start', message: 'the document has 4 pages' },
    });
    expect(pageRange({ page_start: 5, page_end: 9 }, 4)).to.deep.equal({
      ok: false,
      issue: { path: 'page_start', message: 'the document has 4 pages' },
    });
  });

  it('refuses page_end before page_start, with or without a page count', () => {
    const issue = { path: 'page_end', message: 'page_end (2) is before page_start (3)' };
    expect(pageRange({ page_start: 3, page_end: 2 })).to.deep.equal({ ok: false, issue });
    expect(pageRange({ page_start: 3, page_end: 2 }, 4)).to.deep.equal({ ok: false, issue });
    expect(pageRange({ page_end: 2 }, 1)).to.deep.equal({ ok: true, first: 1, last: 1 });
  });

  it('without a page count, checks only the order and answers what was asked', () => {
    expect(pageRange({})).to.deep.equal({ ok: true, first: 1 });
    expect(pageRange({ page_start: 7 })).to.deep.equal({ ok: true, first: 7 });
    expect(pageRange({ page_start: 2, page_end: 5 })).to.deep.equal({ ok: true, first: 2, last: 5 });
  });

  it('refuses pages that are not whole numbers from 1', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, '2']) {
      expect(pageRange({ page_start: bad }, 4), `page_start ${String(bad)}`).to.deep.include({ ok: false });
      expect(pageRange({ page_end: bad }, 4), `page_end ${String(bad)}`).to.deep.include({ ok: false });
    }
    expect(pageRange({ page_start: 0 })).to.deep.equal({
      ok: false,
      issue: { path: 'page_start', message: 'page_start must be a whole number from 1' },
    });
    expect(pageRange({ page_end: 0 })).to.deep.equal({
      ok: false,
      issue: { path: 'page_end', message: 'page_end must be a whole number from 1' },
    });
  });
});
