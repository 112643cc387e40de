import { expect } from 'chai';
import { DEFAULT_READ_LIMITS, DocumentError, type DocBlock } from '../../domain/documents/model';
import { readDocx } from '../../domain/documents/readers/docx';
import { buildDocx, tinyPng, wli, wp, wpic, wtc, zipOf } from '../support/documents/office-files';

const STYLES =
  '<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>' +
  '<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>' +
  '<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/></w:style>' +
  // A custom style whose level comes only from the style it is based on.
  '<w:style w:type="paragraph" w:styleId="Chapter"><w:name w:val="Chapter Head"/><w:basedOn w:val="Outline3"/></w:style>' +
  '<w:style w:type="paragraph" w:styleId="Outline3"><w:name w:val="Outline Three"/>' +
  '<w:pPr><w:outlineLvl w:val="2"/></w:pPr></w:style>' +
  '<w:style w:type="paragraph" w:styleId="ListParagraph"><w:name w:val="List Paragraph"/></w:style>';

const NUMBERING =
  '<w:abstractNum w:abstractNumId="0">' +
  '<w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/></w:lvl>' +
  '<w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/></w:lvl></w:abstractNum>' +
  '<w:abstractNum w:abstractNumId="1"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl>' +
  '<w:lvl w:ilvl="1"><w:numFmt w:val="bullet"/></w:lvl></w:abstractNum>' +
  '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num><w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>';

const TABLE =
  '<w:tbl><w:tblGrid><w:gridCol/><w:gridCol/><w:gridCol/></w:tblGrid>' +
  `<w:tr><w:trPr><w:tblHeader/></w:trPr>${wtc('Region')}${wtc('Sales', '<w:gridSpan w:val="2"/>')}</w:tr>` +
  `<w:tr>${wtc('North', '<w:vMerge w:val="restart"/>')}${wtc('Q1')}${wtc('10')}</w:tr>` +
  `<w:tr>${wtc('', '<w:vMerge/>')}${wtc('Q2')}${wtc('12')}</w:tr>` +
  `<w:tr>${wtc('South')}${wtc('Q1')}${wtc('7')}</w:tr></w:tbl>`;

const RUNS =
  '<w:p><w:r><w:t xml:space="preserve">Plain </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>bold</w:t></w:r>' +
  '<w:r><w:t xml:space="preserve"> and </w:t></w:r><w:r><w:rPr><w:i/></w:rPr><w:t>italic</w:t></w:r>' +
  '<w:r><w:t xml:space="preserve"> </w:t></w:r><w:r><w:rPr><w:rFonts w:ascii="Courier New"/></w:rPr><w:t>x = 1</w:t></w:r>' +
  '<w:r><w:t xml:space="preserve"> see </w:t></w:r><w:hyperlink r:id="rIdLink"><w:r><w:t>the site</w:t></w:r></w:hyperlink>' +
  '<w:del w:id="9"><w:r><w:delText>removed words</w:delText></w:r></w:del>' +
  '<w:ins w:id="10"><w:r><w:t xml:space="preserve"> inserted</w:t></w:r></w:ins>' +
  '<w:r><w:footnoteReference w:id="2"/></w:r><w:commentRangeStart w:id="0"/>' +
  '<w:r><w:commentReference w:id="0"/></w:r></w:p>';

const FIELD =
  '<w:p><w:r><w:t xml:space="preserve">Page </w:t></w:r><w:r><w:fldChar w:fldCharType="begin"/></w:r>' +
  '<w:r><w:instrText> PAGE </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>' +
  '<w:r><w:t>4</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>';

async function sampleDocx() {
  return buildDocx({
    body:
      wp('Annual report', 'Title') +
      wp('Introduction', 'Heading1') +
      RUNS +
      wp('Background', 'Heading2') +
      wli('First step', 1, 0) +
      wli('Detail a', 1, 1) +
      wli('Detail b', 1, 1) +
      wli('Second step', 1, 0) +
      wli('A bullet', 2, 0) +
      wli('A nested bullet', 2, 1) +
      wp('Deep section', 'Chapter') +
      TABLE +
      `<w:p>${wpic('rIdImg', 'A chart')}</w:p>` +
      FIELD,
    styles: STYLES,
    numbering: NUMBERING,
    footnotes: '<w:footnote w:id="2"><w:p><w:r><w:t>Source: the survey.</w:t></w:r></w:p></w:footnote>',
    comments: '<w:comment w:id="0" w:author="Ana"><w:p><w:r><w:t>Check this figure.</w:t></w:r></w:p></w:comment>',
    rels: [
      { id: 'rIdLink', type: 'hyperlink', target: 'https://example.org/x', external: true },
      { id: 'rIdImg', type: 'image', target: 'media/chart.png' },
    ],
    media: { 'chart.png': tinyPng() },
    core: { title: 'Report 2026', creator: 'Ana Lima', language: 'pt-BR' },
    pages: 3,
  });
}

describe('DOCX reader', () => {
  let blocks: DocBlock[];
  let model: Awaited<ReturnType<typeof readDocx>>;
  before(async () => {
    model = await readDocx(await sampleDocx(), DEFAULT_READ_LIMITS);
    blocks = model.parts[0].blocks;
  });

  it('reads the core properties and the saved page count', () => {
    expect(model).to.include({ format: 'docx', title: 'Report 2026', author: 'Ana Lima', language: 'pt-BR' });
    expect(model.pageCount).to.equal(3);
    expect(model.parts).to.have.length(1);
    expect(model.parts[0].kind).to.equal('document');
  });

  it('gives headings their levels from style names, Title, and an outline level inherited through basedOn', () => {
    const headings = blocks.filter((b) => b.type === 'heading');
    expect(headings).to.deep.equal([
      { type: 'heading', level: 1, text: 'Annual report' },
      { type: 'heading', level: 1, text: 'Introduction' },
      { type: 'heading', level: 2, text: 'Background' },
      { type: 'heading', level: 3, text: 'Deep section' },
    ]);
  });

  it('keeps emphasis, monospace as code, links, insertions, and skips deleted text', () => {
    const para = blocks.find((b) => b.type === 'paragraph' && typeof b.text !== 'string');
    expect(para).to.deep.equal({
      type: 'paragraph',
      text: [
        { text: 'Plain ' },
        { text: 'bold', bold: true },
        { text: ' and ' },
        { text: 'italic', italic: true },
        { text: ' ' },
        { text: 'x = 1', code: true },
        { text: ' see ' },
        { text: 'the site', href: 'https://example.org/x' },
        { text: ' inserted' },
      ],
    });
  });

  it('numbers ordered lists by level and tells bullets from numbers', () => {
    const items = blocks.filter((b) => b.type === 'list_item');
    expect(items).to.deep.equal([
      { type: 'list_item', level: 0, ordered: true, number: 1, text: 'First step' },
      { type: 'list_item', level: 1, ordered: true, number: 1, text: 'Detail a' },
      { type: 'list_item', level: 1, ordered: true, number: 2, text: 'Detail b' },
      { type: 'list_item', level: 0, ordered: true, number: 2, text: 'Second step' },
      { type: 'list_item', level: 0, ordered: false, text: 'A bullet' },
      { type: 'list_item', level: 1, ordered: false, text: 'A nested bullet' },
    ]);
  });

  it('computes a merged cell as colspan and rowspan without repeating the covered cells', () => {
    const table = blocks.find((b) => b.type === 'table');
    expect(table).to.deep.equal({
      type: 'table',
      headerRows: 1,
      rows: [
        [
          { text: 'Region', header: true },
          { text: 'Sales', colspan: 2, header: true },
        ],
        [{ text: 'North', rowspan: 2 }, { text: 'Q1' }, { text: '10' }],
        [{ text: 'Q2' }, { text: '12' }],
        [{ text: 'South' }, { text: 'Q1' }, { text: '7' }],
      ],
    });
  });

  it('puts the embedded image in images with an image block in its place', () => {
    expect(model.images).to.have.length(1);
    expect(model.images[0]).to.include({ name: 'image-1.png', mime: 'image/png' });
    expect(Buffer.from(model.images[0].data).equals(tinyPng())).to.equal(true);
    const tableAt = blocks.findIndex((b) => b.type === 'table');
    expect(blocks[tableAt + 1]).to.deep.equal({ type: 'image', name: 'image-1.png', alt: 'A chart' });
  });

  it("shows a field's cached result, not its instruction", () => {
    expect(blocks).to.deep.include({ type: 'paragraph', text: 'Page 4' });
    expect(JSON.stringify(blocks)).to.not.include('PAGE');
  });

  it('ends the body with the footnote and the comment as notes, the comment with its author', () => {
    expect(blocks.slice(-2)).to.deep.equal([
      { type: 'note', kind: 'footnote', label: '1', text: 'Source: the survey.' },
      { type: 'note', kind: 'comment', label: '1', author: 'Ana', text: 'Check this figure.' },
    ]);
  });

  it('refuses a zip that is not a Word package as corrupt', async () => {
    const zip = await zipOf({ 'hello.txt': 'hi' });
    const err = await readDocx(zip, DEFAULT_READ_LIMITS).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DocumentError).and.include({ code: 'UNPROCESSABLE_INPUT', reason: 'corrupt' });
  });

  it('refuses bytes that are not a zip as corrupt', async () => {
    const err = await readDocx(Buffer.from('not a zip at all'), DEFAULT_READ_LIMITS).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DocumentError).and.include({ reason: 'corrupt' });
  });
  it('reads a generated 10-page DOCX (40 headings, 400 paragraphs, 10 tables) in under two seconds', async () => {
    let body = '';
    for (let page = 1; page <= 10; page++) {
      body += wp(`Chapter ${page}`, 'Heading1');
      for (let s = 1; s <= 3; s++) {
        body += wp(`Section ${page}.${s}`, 'Heading2');
        for (let i = 0; i < 13; i++) body += wp(`Paragraph ${page}.${s}.${i} `.repeat(12));
      }
      body += `<w:tbl>${Array.from({ length: 8 }, (_, r) => `<w:tr>${wtc(`r${r}`)}${wtc(String(r * page))}</w:tr>`).join('')}</w:tbl>`;
      body += '<w:p><w:r><w:br w:type="page"/></w:r></w:p>';
    }
    const file = await buildDocx({ body, styles: STYLES, pages: 10 });
    const started = process.hrtime.bigint();
    const read = await readDocx(file, DEFAULT_READ_LIMITS);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    expect(read.parts[0].blocks.filter((b) => b.type === 'heading')).to.have.length(40);
    expect(read.parts[0].blocks.filter((b) => b.type === 'table')).to.have.length(10);
    console.log(`      10-page DOCX (${file.length} bytes) read in ${ms.toFixed(0)} ms`);
    expect(ms).to.be.below(2000);
  });

  it('shows a tracked move at its new place only, a moved paragraph as a paragraph', async () => {
    const body =
      '<w:moveFrom w:id="1"><w:p><w:r><w:t>Moved paragraph</w:t></w:r></w:p></w:moveFrom>' +
      wp('First paragraph') +
      '<w:moveTo w:id="2"><w:p><w:r><w:t>Moved paragraph</w:t></w:r></w:p></w:moveTo>' +
      '<w:p><w:r><w:t xml:space="preserve">Words </w:t></w:r><w:moveFrom w:id="3"><w:r><w:t>gone </w:t></w:r></w:moveFrom>' +
      '<w:moveTo w:id="4"><w:r><w:t>here</w:t></w:r></w:moveTo></w:p>';
    const model = await readDocx(await buildDocx({ body }), DEFAULT_READ_LIMITS);
    expect(model.parts[0].blocks).to.deep.equal([
      { type: 'paragraph', text: 'First paragraph' },
      { type: 'paragraph', text: 'Moved paragraph' },
      { type: 'paragraph', text: 'Words here' },
    ]);
  });
});
