import { expect } from 'chai';
import { load } from 'cheerio';
import { expandTableSpans, extractTables } from '../../core/html';

describe('table extraction from HTML', () => {
  it('reads a simple table with a thead as headers and data rows', () => {
    const tables = extractTables(`
      <table>
        <thead><tr><th>Name</th><th>Age</th></tr></thead>
        <tbody><tr><td>Ada</td><td>36</td></tr><tr><td>Alan</td><td>41</td></tr></tbody>
      </table>`);
    expect(tables).to.deep.equal([
      {
        headers: ['Name', 'Age'],
        rows: [
          ['Ada', '36'],
          ['Alan', '41'],
        ],
      },
    ]);
  });

  it('takes a leading row of th cells as headers when there is no thead', () => {
    const [table] = extractTables(
      '<table><tr><th>City</th><th>Country</th></tr><tr><td>Bern</td><td>CH</td></tr></table>',
    );
    expect(table!.headers).to.deep.equal(['City', 'Country']);
    expect(table!.rows).to.deep.equal([['Bern', 'CH']]);
  });

  it('treats every row as data when the table has only td cells', () => {
    const [table] = extractTables('<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>');
    expect(table!.headers).to.deep.equal([]);
    expect(table!.rows).to.deep.equal([
      ['a', 'b'],
      ['c', 'd'],
    ]);
  });

  it('uses the last thead row as headers when the thead has several rows', () => {
    const [table] = extractTables(`<table><thead>
        <tr><th rowspan="2">Name</th><th colspan="2">Scores</th></tr>
        <tr><th>Math</th><th>Art</th></tr>
      </thead><tbody><tr><td>Ada</td><td>1</td><td>2</td></tr></tbody></table>`);
    expect(table!.headers).to.deep.equal(['Name', 'Math', 'Art']);
    expect(table!.rows).to.deep.equal([['Ada', '1', '2']]);
  });

  it('repeats a colspan cell across its columns in header and body', () => {
    const [table] = extractTables(`<table>
        <thead><tr><th colspan="2">Both</th><th>Third</th></tr></thead>
        <tbody><tr><td>1</td><td colspan="2">wide</td></tr></tbody></table>`);
    expect(table!.headers).to.deep.equal(['Both', 'Both', 'Third']);
    expect(table!.rows).to.deep.equal([['1', 'wide', 'wide']]);
  });

  it('repeats a rowspan cell in the following rows at the same column', () => {
    const [table] = extractTables(`<table>
        <tr><td rowspan="3">tall</td><td>a</td></tr>
        <tr><td>b</td></tr>
        <tr><td>c</td></tr>
        <tr><td>d</td><td>e</td></tr></table>`);
    expect(table!.rows).to.deep.equal([
      ['tall', 'a'],
      ['tall', 'b'],
      ['tall', 'c'],
      ['d', 'e'],
    ]);
  });

  it('fills a 2×2 block for a cell with both colspan and rowspan', () => {
    const [table] = extractTables(`<table>
        <tr><td colspan="2" rowspan="2">X</td><td>r1</td></tr>
        <tr><td>r2</td></tr>
        <tr><td>a</td><td>b</td><td>c</td></tr></table>`);
    expect(table!.rows).to.deep.equal([
      ['X', 'X', 'r1'],
      ['X', 'X', 'r2'],
      ['a', 'b', 'c'],
    ]);
  });

  it('treats a non-numeric colspan as 1', () => {
    const [table] = extractTables('<table><tr><td colspan="abc">a</td><td>b</td></tr></table>');
    expect(table!.rows).to.deep.equal([['a', 'b']]);
  });

  it('clamps a huge colspan to 1000 columns and pads the other rows', () => {
    const [table] = extractTables('<table><tr><td colspan="999999">w</td></tr><tr><td>x</td></tr></table>');
    expect(table!.rows).to.have.length(2);
    expect(table!.rows[0]).to.have.length(1000);
    expect(table!.rows[0]!.every((cell) => cell === 'w')).to.equal(true);
    expect(table!.rows[1]![0]).to.equal('x');
    expect(table!.rows[1]!.slice(1).every((cell) => cell === '')).to.equal(true);
  });

  it('stops a rowspan at the end of the table', () => {
    const [table] = extractTables('<table><tr><td rowspan="50">r</td><td>1</td></tr><tr><td>2</td></tr></table>');
    expect(table!.rows).to.deep.equal([
      ['r', '1'],
      ['r', '2'],
    ]);
  });

  it('pads rows shorter than the widest row with empty strings', () => {
    const [table] = extractTables('<table><tr><th>A</th><th>B</th><th>C</th></tr><tr><td>1</td></tr></table>');
    expect(table!.headers).to.deep.equal(['A', 'B', 'C']);
    expect(table!.rows).to.deep.equal([['1', '', '']]);
  });

  it('extracts nested tables on their own without repeating their text in the outer cell', () => {
    const tables = extractTables(`<table>
        <tr><th>Outer</th><th>Detail</th></tr>
        <tr><td>before<table><tr><th>In</th></tr><tr><td>inner text</td></tr></table>after</td><td>x</td></tr>
      </table>`);
    expect(tables).to.have.length(2);
    expect(tables[0]!.rows).to.deep.equal([['before after', 'x']]);
    expect(JSON.stringify(tables[0])).not.to.include('inner text');
    expect(tables[1]).to.deep.equal({ headers: ['In'], rows: [['inner text']] });
  });

  it('returns several tables in document order', () => {
    const tables = extractTables(`
      <table><tr><td>first</td></tr></table><p>between</p>
      <table><tr><td>second</td></tr></table>
      <table><tr><td>third</td></tr></table>`);
    expect(tables.map((t) => t.rows[0]![0])).to.deep.equal(['first', 'second', 'third']);
  });

  it('collapses whitespace and turns <br> into a space', () => {
    const [table] = extractTables(
      '<table><tr><td>\n  line one<br>line\t\ttwo  \n</td><td><p>para</p><p>next</p></td></tr></table>',
    );
    expect(table!.rows).to.deep.equal([['line one line two', 'para next']]);
  });

  it('keeps umlauts and emoji intact', () => {
    const [table] = extractTables('<table><tr><th>Straße</th></tr><tr><td>Grüße 🎉 &amp; &auml;</td></tr></table>');
    expect(table!.headers).to.deep.equal(['Straße']);
    expect(table!.rows).to.deep.equal([['Grüße 🎉 & ä']]);
  });

  it('exposes the caption apart from the cells', () => {
    const [table] = extractTables('<table><caption> Prices </caption><tr><td>1</td></tr></table>');
    expect(table!.caption).to.equal('Prices');
    expect(table!.rows).to.deep.equal([['1']]);
  });

  it('skips tables without any cell', () => {
    expect(extractTables('<table></table><table><tr></tr></table>')).to.deep.equal([]);
  });

  it('returns no tables for empty input or HTML without a table', () => {
    expect(extractTables('')).to.deep.equal([]);
    expect(extractTables('   ')).to.deep.equal([]);
    expect(extractTables('<p>No tables here</p>')).to.deep.equal([]);
  });
});

describe('span expansion in place', () => {
  it('leaves a table without colspan or rowspan attributes and returns its width', () => {
    const $ = load('<table><tr><td colspan="2" rowspan="2">X</td><td>a</td></tr><tr><td>b</td></tr></table>');
    const width = expandTableSpans($, $('table'));
    expect(width).to.equal(3);
    expect($('[colspan], [rowspan]').length).to.equal(0);
    expect(
      $('tr')
        .map((_, tr) => $(tr).children('td').length)
        .get(),
    ).to.deep.equal([3, 3]);
  });

  it('pads rows to the table width when asked, using th in all-th rows', () => {
    const $ = load('<table><tr><th>A</th><th>B</th></tr><tr><td>1</td></tr></table>');
    expandTableSpans($, $('table'), { pad: true });
    expect($('tr').eq(0).children('th').length).to.equal(2);
    expect($('tr').eq(1).children('td').length).to.equal(2);
  });

  it('stops expanding once the added-cell budget is spent', () => {
    const $ = load('<table><tr><td colspan="10">a</td></tr><tr><td colspan="10">b</td></tr></table>');
    expandTableSpans($, $('table'), { maxAddedCells: 12 });
    expect(
      $('tr')
        .map((_, tr) => $(tr).children('td').length)
        .get(),
    ).to.deep.equal([10, 1]);
  });
});
