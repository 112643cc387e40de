import { expect } from 'chai';
import { drawingNeed } from '../../domain/pdf/markdown/needs-drawings';
import type { LayoutItem } from '../../domain/pdf/markdown/types';
import { parsePdftohtmlXml, PdftohtmlXmlReader } from '../../domain/pdf/pdftohtml-xml';

// What `pdftohtml -xml -zoom 1 -noroundcoord` prints (abridged from a LaTeX manual read by poppler 22.12).
const XML = `<?xml version="1.0" encoding="UTF-8"?>
<pdf2xml producer="poppler" version="22.12.0">
<page number="3" position="absolute" top="0" left="0" height="792" width="612">
	<fontspec id="0" size="11" family="OXBFNF+CMR10" color="#000000"/>
	<fontspec id="4" size="14" family="HDCCQC+CMBX12" color="#000000"/>
<text top="100.000000" left="72.000000" width="120.000000" height="10.000000" font="4">1.1 LP problem</text>
<text top="120.000000" left="72.000000" width="300.000000" height="10.000000" font="0">such values that satisfy &lt;all&gt; &amp; the ﬁrst</text>
<text top="120.500000" left="380.000000" width="40.000000" height="10.000000" font="0">  x  </text>
</page>
<page number="4" position="absolute" top="0" left="0" height="792" width="612">
	<fontspec id="5" size="11" family="YPVIBW+CMTT10" color="#000000"/>
	<fontspec id="6" size="11" family="AAAAAA+DejaVuSerif" color="#000000"/>
<text top="200.000000" left="72.000000" width="60.000000" height="10.000000" font="5">glp_simplex</text>
<text top="220.000000" left="72.000000" width="60.000000" height="10.000000" font="6"><b>Synopsis</b></text>
<text top="240.000000" left="72.000000" width="60.000000" height="10.000000" font="0"><a href="#x">see 2.1</a></text>
</page>
<outline>
<item page="3">Introduction</item>
<outline>
<item page="3">LP  problem</item>
</outline>
<item page="4">API</item>
</outline>
</pdf2xml>`;

describe('poppler layouts (pdftohtml -xml)', () => {
  const { pages, outline } = parsePdftohtmlXml(XML);

  it('reads the output as it comes, cut anywhere, to the same layouts, each page given once its end has arrived', () => {
    const whole = JSON.stringify(parsePdftohtmlXml(XML), (_k, v: unknown) => (v instanceof Map ? [...v] : v));
    for (const step of [1, 7, 64, 300]) {
      const seen: number[] = [];
      let read = '';
      const reader = new PdftohtmlXmlReader((p) => {
        seen.push(p.page);
        // A page is given once its end is in what was read, never before.
        expect(read.split('</page>').length - 1).to.be.at.least(seen.length);
      });
      for (let i = 0; i < XML.length; i += step) {
        read += XML.slice(i, i + step);
        reader.push(XML.slice(i, i + step));
      }
      expect(seen).to.deep.equal([3, 4]);
      expect(JSON.stringify(reader.end(), (_k, v: unknown) => (v instanceof Map ? [...v] : v))).to.equal(whole);
    }
  });

  it('gives each text chunk its baseline from the bottom, its font size and its text with markup, entities and ligatures undone', () => {
    expect(pages.map((p) => p.page)).to.deep.equal([3, 4]);
    const [title, body] = pages[0].items;
    expect(title).to.include({ str: '1.1 LP problem', x: 72, size: 14, bold: true });
    expect(title.y).to.be.closeTo(792 - 107.8, 0.01);
    expect(body.str).to.equal('such values that satisfy <all> & the first');
    expect(body.bold).to.equal(undefined);
    expect(pages[0].width).to.equal(612);
    expect(pages[0].height).to.equal(792);
  });

  it('measures a chunk by its text, not by the spaces around it', () => {
    const x = pages[0].items[2];
    // "  x  ": 5 characters over 40 pt, the text starts after two of them.
    expect(x).to.include({ str: 'x', x: 396, w: 8 });
  });

  it('knows monospace from the font family and bold from the family or poppler <b>, fonts declared on earlier pages', () => {
    const [code, label, link] = pages[1].items;
    expect(code).to.include({ str: 'glp_simplex', mono: true, size: 11 });
    expect(label).to.include({ str: 'Synopsis', bold: true });
    expect(link).to.include({ str: 'see 2.1', size: 11 });
    expect(link.bold).to.equal(undefined);
  });

  it('reads the outline with levels by page, titles with their spaces normalised', () => {
    expect(outline.get(3)).to.deep.equal([
      { title: 'Introduction', level: 1 },
      { title: 'LP problem', level: 2 },
    ]);
    expect(outline.get(4)).to.deep.equal([{ title: 'API', level: 1 }]);
  });
});

const it10 = (str: string, x: number, y: number, extra: Partial<LayoutItem> = {}): LayoutItem => ({
  str,
  x,
  y,
  w: str.length * 5,
  size: 10,
  ...extra,
});
const prose = (n: number, x = 72, top = 700) =>
  Array.from({ length: n }, (_, i) =>
    it10('Plain words of a paragraph that runs across the page here.', x, top - 12 * i),
  );

describe('which pages need their drawings', () => {
  it('a page of prose, of two prose columns or of a contents list needs none', () => {
    expect(drawingNeed({ width: 612, items: prose(10) })).to.equal(undefined);
    expect(drawingNeed({ width: 612, items: [...prose(10, 40), ...prose(10, 330)] })).to.equal(undefined);
    const toc = [0, 1, 2, 3].flatMap((i) => [
      it10(`1.${i}`, 88, 700 - 14 * i),
      it10(`Section title ${i}`, 113, 700 - 14 * i),
      it10('. . . . . . . .', 300, 700 - 14 * i),
      it10(String(9 + i), 530, 700 - 14 * i),
    ]);
    expect(drawingNeed({ width: 612, items: toc })).to.equal(undefined);
  });

  it('lines of code cut at wide gaps need none', () => {
    const code = [0, 1, 2].flatMap((i) => [
      it10('obj =', 72, 700 - 12 * i, { mono: true }),
      it10('1.886e+04', 150, 700 - 12 * i, { mono: true }),
      it10('inf = 0.0', 260, 700 - 12 * i, { mono: true }),
    ]);
    expect(drawingNeed({ width: 612, items: code })).to.equal(undefined);
  });

  it('two neighbouring lines cut into cells are a table candidate', () => {
    const rows = [0, 1].flatMap((i) => [
      it10(`GLP_F${i}`, 100, 700 - 14 * i),
      it10('free', 200, 700 - 14 * i),
      it10('variable', 300, 700 - 14 * i),
    ]);
    expect(drawingNeed({ width: 612, items: [...prose(3, 72, 760), ...rows] })).to.equal('table');
  });

  it('short items one below the other at an indent, with nothing before them, may follow drawn bullets', () => {
    const items = [
      ...prose(2, 72, 760),
      it10('Apples from the northern orchards', 102, 700),
      it10('Pears and plums', 102, 687),
      it10('Fresh bread every morning', 102, 674),
    ];
    expect(drawingNeed({ width: 612, items })).to.equal('bullets');
    // Indented descriptions that end a sentence, and a first-line indent, are no such items.
    const described = [
      ...prose(2, 72, 760),
      it10('GLP_MIN means minimization;', 102, 700),
      it10('GLP_MAX means maximization.', 102, 687),
      it10('An indented first line of a paragraph', 90, 660),
      ...prose(2, 72, 648),
    ];
    expect(drawingNeed({ width: 612, items: described })).to.equal(undefined);
  });
});
