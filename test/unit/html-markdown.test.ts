import { expect } from 'chai';
import { htmlToMarkdown } from '../../core/html';

/** The pipe rows of the first GFM table in `markdown`, split into cells on unescaped pipes. */
function tableRows(markdown: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.startsWith('|'));
  expect(start, 'a pipe table').to.be.at.least(0);
  const rows: string[][] = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

function bigPage(minBytes: number): string {
  const parts = ['<!doctype html><html><head><title>Big</title><style>p { color: red }</style></head><body>'];
  let size = 0;
  for (let i = 0; size < minBytes; i++) {
    let chunk =
      `<h2>Section ${i}</h2><p>Paragraph ${i} with <b>bold</b>, <a href="https://example.com/${i}">link ${i}</a>` +
      ' and Grüße.</p><ul><li>item ' +
      i +
      '.1</li><li>item ' +
      i +
      '.2<ol><li>deep ' +
      i +
      '</li></ol></li></ul>';
    if (i % 500 === 0) {
      const rows = Array.from(
        { length: 300 },
        (_, r) => `<tr><td>r${r}</td><td colspan="2">span ${r}</td><td>${r}</td></tr>`,
      );
      chunk += `<table><thead><tr><th>A</th><th>B</th><th>C</th><th>D</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
    }
    parts.push(chunk);
    size += chunk.length;
  }
  parts.push('<script>window.tracking = true;</script></body></html>');
  return parts.join('');
}

describe('HTML to Markdown', () => {
  it('writes headings in ATX style and separates paragraphs by one blank line', () => {
    const md = htmlToMarkdown('<h1>Title</h1><h3>Sub</h3><p>One</p><p>Two</p>');
    expect(md).to.equal('# Title\n\n### Sub\n\nOne\n\nTwo');
  });

  it('writes bold with asterisks and italic with underscores', () => {
    expect(htmlToMarkdown('<p><strong>bold</strong> and <em>italic</em> and <b>b</b> <i>i</i></p>')).to.equal(
      '**bold** and _italic_ and **b** _i_',
    );
  });

  it('keeps links and images with their targets', () => {
    const md = htmlToMarkdown('<p><a href="https://example.com/a">site</a> <img src="/img/cat.png" alt="A cat"></p>');
    expect(md).to.equal('[site](https://example.com/a) ![A cat](/img/cat.png)');
  });

  it('writes unordered, ordered and nested lists with compact markers', () => {
    const md = htmlToMarkdown(
      '<ul><li>Apple</li><li>Pear<ul><li>Small</li></ul></li></ul><ol start="3"><li>Three</li><li>Four</li></ol>',
    );
    expect(md).to.equal('- Apple\n- Pear\n  - Small\n\n3. Three\n4. Four');
  });

  it('writes task list items as checkboxes', () => {
    const md = htmlToMarkdown(
      '<ul><li><input type="checkbox" checked> done</li><li><input type="checkbox"> open</li></ul>',
    );
    expect(md).to.equal('- [x] done\n- [ ] open');
  });

  it('fences code blocks with the language from the class and keeps their blank lines', () => {
    const md = htmlToMarkdown(
      '<pre><code class="language-ts">const a = 1;\n\n\n\nconst b = 2;</code></pre><pre class="lang-py">x = 1</pre>',
    );
    expect(md).to.equal('```ts\nconst a = 1;\n\n\n\nconst b = 2;\n```\n\n```py\nx = 1\n```');
  });

  it('writes blockquotes and strikethrough', () => {
    expect(htmlToMarkdown('<blockquote><p>Quoted</p></blockquote><p><del>gone</del> <s>old</s></p>')).to.equal(
      '> Quoted\n\n~~gone~~ ~~old~~',
    );
  });

  it('turns a table with colspan and rowspan into a rectangular GFM table', () => {
    const md = htmlToMarkdown(`<table>
        <thead><tr><th rowspan="2">Name</th><th colspan="2">Scores</th></tr><tr><th>Math</th><th>Art</th></tr></thead>
        <tbody><tr><td colspan="2" rowspan="2">block</td><td>x</td></tr><tr><td>y</td></tr>
        <tr><td>short</td></tr></tbody></table>`);
    const rows = tableRows(md);
    expect(rows).to.have.length(5);
    expect(new Set(rows.map((row) => row.length))).to.deep.equal(new Set([3]));
    expect(rows[0]).to.deep.equal(['Name', 'Scores / Math', 'Scores / Art']);
    expect(rows[1]!.every((cell) => /^:?-{3,}:?$/.test(cell))).to.equal(true);
    expect(rows[2]).to.deep.equal(['block', 'block', 'x']);
    expect(rows[3]).to.deep.equal(['block', 'block', 'y']);
    expect(rows[4]).to.deep.equal(['short', '', '']);
  });

  it('promotes the first row of a table without header cells to the GFM header', () => {
    const md = htmlToMarkdown('<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>');
    expect(md).to.equal('| a   | b   |\n| --- | --- |\n| c   | d   |');
  });

  it('keeps a table a pipe table when its cells hold lists or code blocks', () => {
    const md = htmlToMarkdown(`<table><tr><th>K</th><th>V</th></tr>
        <tr><td>list</td><td>intro<ul><li>one</li><li>two</li></ul></td></tr>
        <tr><td>code</td><td><pre><code>x = 1</code></pre></td></tr></table>`);
    expect(md).not.to.include('<table');
    const rows = tableRows(md);
    expect(rows[2]).to.deep.equal(['list', 'intro<br>• one<br>• two']);
    expect(rows[3]).to.deep.equal(['code', '`x = 1`']);
  });

  it('escapes every pipe inside table cells', () => {
    const md = htmlToMarkdown('<table><tr><th>expr</th><th>n</th></tr><tr><td>a || b | c</td><td>1</td></tr></table>');
    expect(md).to.include('| a \\|\\| b \\| c | 1   |');
    expect(tableRows(md)[2]).to.have.length(2);
  });

  it('flattens a layout table around the table nested in it', () => {
    const md = htmlToMarkdown(
      '<table><tr><td>menu</td><td><table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table></td></tr></table>',
    );
    expect(md).to.equal('menu\n\n| A   | B   |\n| --- | --- |\n| 1   | 2   |');
  });

  it('drops scripts, styles, the head and other non-content elements', () => {
    const md = htmlToMarkdown(`<html><head><title>T</title><style>p { color: red }</style></head><body>
        <script>alert("x")</script><noscript>enable js</noscript><iframe src="/ad"></iframe><p>Visible</p></body></html>`);
    expect(md).to.equal('Visible');
  });

  it('keeps umlauts, ß and emoji', () => {
    expect(htmlToMarkdown('<p>Grüße aus Köln, Straße &auml; 🎉</p>')).to.equal('Grüße aus Köln, Straße ä 🎉');
  });

  it('never leaves more than one blank line in a row outside code', () => {
    const md = htmlToMarkdown('<p>a</p><div><br><br><br></div><p></p><div></div><p>b</p>');
    expect(md).not.to.match(/\n\s*\n\s*\n/);
    expect(md.startsWith('a')).to.equal(true);
    expect(md.endsWith('b')).to.equal(true);
  });

  it('returns an empty string for empty or content-free input', () => {
    expect(htmlToMarkdown('')).to.equal('');
    expect(htmlToMarkdown('  \n ')).to.equal('');
    expect(htmlToMarkdown('<script>x()</script>')).to.equal('');
  });

  it('converts a generated 1 MB page with lists, links and large tables', () => {
    const html = bigPage(1024 * 1024);
    expect(html.length).to.be.at.least(1024 * 1024);
    const md = htmlToMarkdown(html);
    expect(md).to.match(
      /^## Section 0\n\nParagraph 0 with \*\*bold\*\*, \[link 0\]\(https:\/\/example\.com\/0\) and Grüße\./,
    );
    expect(md).to.include('- item 1.2\n  1. deep 1');
    expect(md).to.include('| A   | B   | C   | D   |');
    expect(md).to.include('| r299 | span 299 | span 299 | 299 |');
    expect(md).not.to.include('tracking');
    expect(md).not.to.include('<table');
  });
});
