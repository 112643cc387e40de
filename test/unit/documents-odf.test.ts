import { expect } from 'chai';
import { DEFAULT_READ_LIMITS, DocumentError } from '../../domain/documents/model';
import { readOdp, readOds, readOdt } from '../../domain/documents/readers/odf';
import { MAX_ODS_COLUMNS, MAX_ODS_ROWS } from '../../domain/documents/readers/odf-sheet';
import { tinyPng, zipOf } from '../support/documents/office-files';

const NS =
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ' +
  'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" ' +
  'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" ' +
  'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" ' +
  'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" ' +
  'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" ' +
  'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" ' +
  'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" ' +
  'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xlink="http://www.w3.org/1999/xlink"';
const MANIFEST_NS = 'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"';

interface OdfParts {
  kind: 'text' | 'spreadsheet' | 'presentation';
  body: string;
  automaticStyles?: string;
  styles?: string;
  meta?: string;
  manifest?: string;
  pictures?: Record<string, Buffer>;
}

/** An ODF package as a suite writes it: `mimetype` first and stored, then the XML parts and pictures. */
function buildOdf(p: OdfParts): Promise<Buffer> {
  const entries: Record<string, string | Buffer> = {
    mimetype: `application/vnd.oasis.opendocument.${p.kind}`,
    'META-INF/manifest.xml':
      `<manifest:manifest ${MANIFEST_NS}><manifest:file-entry manifest:full-path="/" ` +
      `manifest:media-type="application/vnd.oasis.opendocument.${p.kind}"/>${p.manifest ?? ''}</manifest:manifest>`,
    'content.xml':
      `<?xml version="1.0" encoding="UTF-8"?><office:document-content ${NS}>` +
      `<office:automatic-styles>${p.automaticStyles ?? ''}</office:automatic-styles>` +
      `<office:body><office:${p.kind}>${p.body}</office:${p.kind}></office:body></office:document-content>`,
    'styles.xml': `<office:document-styles ${NS}><office:styles>${p.styles ?? ''}</office:styles></office:document-styles>`,
  };
  if (p.meta)
    entries['meta.xml'] = `<office:document-meta ${NS}><office:meta>${p.meta}</office:meta></office:document-meta>`;
  for (const [name, data] of Object.entries(p.pictures ?? {})) entries[`Pictures/${name}`] = data;
  return zipOf(entries, ['mimetype']);
}

const META =
  '<dc:title>Field report</dc:title><dc:creator>Ada</dc:creator><dc:language>fr-FR</dc:language>' +
  '<meta:document-statistic meta:page-count="3"/>';

describe('ODT reader', () => {
  it('reads headings, emphasis, nested lists, spanned tables, notes, comments, images and the metadata', async () => {
    const bytes = await buildOdf({
      kind: 'text',
      meta: META,
      // A common style (styles.xml) is bold; an automatic one inherits it and adds italics; one is italic only.
      styles:
        '<style:style style:name="Strong" style:family="text"><style:text-properties fo:font-weight="bold"/></style:style>' +
        '<text:list-style style:name="Numbered"><text:list-level-style-number text:level="1"/>' +
        '<text:list-level-style-bullet text:level="2"/></text:list-style>',
      automaticStyles:
        '<style:style style:name="T1" style:family="text" style:parent-style-name="Strong">' +
        '<style:text-properties fo:font-style="italic"/></style:style>' +
        '<style:style style:name="T2" style:family="text"><style:text-properties fo:font-style="italic"/></style:style>' +
        '<text:list-style style:name="L1"><text:list-level-style-bullet text:level="1"/></text:list-style>',
      body:
        '<text:h text:outline-level="1">Findings</text:h>' +
        '<text:p>Plain <text:span text:style-name="T1">both</text:span> and <text:span text:style-name="T2">slanted' +
        '</text:span><text:s text:c="2"/>end<text:note text:id="n1" text:note-class="footnote">' +
        '<text:note-citation>1</text:note-citation><text:note-body><text:p>A source.</text:p></text:note-body>' +
        '</text:note><office:annotation><dc:creator>Bob</dc:creator><dc:date>2026-01-01</dc:date>' +
        '<text:p>Check this.</text:p></office:annotation></text:p>' +
        '<text:h text:outline-level="2">Steps</text:h>' +
        '<text:list text:style-name="Numbered"><text:list-item><text:p>First</text:p>' +
        '<text:list><text:list-item><text:p>Detail</text:p></text:list-item></text:list></text:list-item>' +
        '<text:list-item><text:p>Second</text:p></text:list-item></text:list>' +
        '<text:list text:style-name="L1"><text:list-item><text:p>Loose</text:p></text:list-item></text:list>' +
        '<table:table table:name="T"><table:table-column table:number-columns-repeated="3"/>' +
        '<table:table-header-rows><table:table-row><table:table-cell table:number-columns-spanned="2">' +
        '<text:p>Site</text:p></table:table-cell><table:covered-table-cell/><table:table-cell><text:p>Count</text:p>' +
        '</table:table-cell></table:table-row></table:table-header-rows>' +
        '<table:table-row><table:table-cell table:number-rows-spanned="2"><text:p>North</text:p></table:table-cell>' +
        '<table:table-cell><text:p>A</text:p></table:table-cell><table:table-cell><text:p>4</text:p></table:table-cell>' +
        '</table:table-row><table:table-row><table:covered-table-cell/><table:table-cell><text:p>B</text:p>' +
        '</table:table-cell><table:table-cell><text:p>5</text:p></table:table-cell></table:table-row></table:table>' +
        '<text:p><draw:frame draw:name="Pic"><draw:image xlink:href="Pictures/chart.png"/></draw:frame></text:p>' +
        '<text:p><draw:frame draw:name="Linked"><draw:image xlink:href="http://example.com/x.png"/></draw:frame></text:p>',
      pictures: { 'chart.png': tinyPng() },
    });
    const model = await readOdt(bytes, DEFAULT_READ_LIMITS);
    expect(model).to.include({
      format: 'odt',
      title: 'Field report',
      author: 'Ada',
      language: 'fr-FR',
      pageCount: 3,
    });
    expect(model.parts).to.have.length(1);
    expect(model.parts[0].kind).to.equal('document');
    expect(model.parts[0].blocks).to.deep.equal([
      { type: 'heading', level: 1, text: 'Findings' },
      {
        type: 'paragraph',
        text: [
          { text: 'Plain ' },
          { text: 'both', bold: true, italic: true },
          { text: ' and ' },
          { text: 'slanted', italic: true },
          { text: ' end' },
        ],
      },
      { type: 'heading', level: 2, text: 'Steps' },
      { type: 'list_item', level: 0, ordered: true, text: 'First' },
      { type: 'list_item', level: 1, ordered: false, text: 'Detail' },
      { type: 'list_item', level: 0, ordered: true, text: 'Second' },
      { type: 'list_item', level: 0, ordered: false, text: 'Loose' },
      {
        type: 'table',
        headerRows: 1,
        rows: [
          [{ text: 'Site', colspan: 2 }, { text: 'Count' }],
          [{ text: 'North', rowspan: 2 }, { text: 'A' }, { text: '4' }],
          [{ text: 'B' }, { text: '5' }],
        ],
      },
      { type: 'image', name: 'image-1.png' },
      { type: 'note', kind: 'footnote', label: '1', text: 'A source.' },
      { type: 'note', kind: 'comment', author: 'Bob', text: 'Check this.' },
    ]);
    expect(model.images).to.have.length(1);
    expect(model.images[0]).to.include({ name: 'image-1.png', mime: 'image/png' });
    expect(Buffer.from(model.images[0].data).equals(tinyPng())).to.equal(true);
  });

  it('refuses a password-protected package as 422 encrypted, and a zip without content as corrupt', async () => {
    const encrypted = await buildOdf({
      kind: 'text',
      body: '<text:p>x</text:p>',
      manifest:
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml">' +
        '<manifest:encryption-data manifest:checksum-type="SHA1" manifest:checksum="AA=="/></manifest:file-entry>',
    });
    const err = await readOdt(encrypted, DEFAULT_READ_LIMITS).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DocumentError);
    expect(err).to.include({ code: 'UNPROCESSABLE_INPUT', reason: 'encrypted' });
    const empty = await zipOf({ mimetype: 'application/vnd.oasis.opendocument.text', 'x.txt': 'x' }, ['mimetype']);
    const err2 = await readOdt(empty, DEFAULT_READ_LIMITS).catch((e: unknown) => e);
    expect(err2).to.include({ code: 'UNPROCESSABLE_INPUT', reason: 'corrupt' });
    // A spreadsheet is not read as a text document.
    const sheet = await buildOdf({ kind: 'spreadsheet', body: '<table:table table:name="S"/>' });
    const err3 = await readOdt(sheet, DEFAULT_READ_LIMITS).catch((e: unknown) => e);
    expect(err3).to.include({ code: 'UNPROCESSABLE_INPUT', reason: 'corrupt' });
  });

  it('refuses an entity-declaring content.xml (the billion-laughs shape)', async () => {
    const bytes = await zipOf(
      {
        mimetype: 'application/vnd.oasis.opendocument.text',
        'content.xml':
          '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>' +
          `<office:document-content ${NS}><office:body><office:text><text:p>&b;</text:p></office:text>` +
          '</office:body></office:document-content>',
      },
      ['mimetype'],
    );
    const err = await readOdt(bytes, DEFAULT_READ_LIMITS).catch((e: unknown) => e);
    expect(err).to.include({ code: 'UNPROCESSABLE_INPUT', reason: 'xml_entities' });
  });
});

const cell = (attrs: string, text = '') =>
  `<table:table-cell ${attrs}>${text ? `<text:p>${text}</text:p>` : ''}</table:table-cell>`;

describe('ODS reader', () => {
  it('reads one named sheet per table, values by type, spans, repeats, trimmed empties, a hidden sheet', async () => {
    const bytes = await buildOdf({
      kind: 'spreadsheet',
      meta: '<dc:title>Budget</dc:title>',
      body:
        '<table:table table:name="Sales"><table:table-column table:number-columns-repeated="1024"/>' +
        // Row 1 empty (trimmed); column A empty (trimmed); trailing repeats of empties as a suite writes them.
        '<table:table-row><table:table-cell table:number-columns-repeated="1024"/></table:table-row>' +
        '<table:table-row>' +
        cell('') +
        cell('office:value-type="string" table:number-columns-spanned="2"', 'Quarter') +
        '<table:covered-table-cell/>' +
        cell('office:value-type="string"', 'Note') +
        '<table:table-cell table:number-columns-repeated="1020"/></table:table-row>' +
        '<table:table-row>' +
        cell('') +
        cell('office:value-type="float" office:value="3.5"', '3.50 €') +
        cell('office:value-type="date" office:date-value="2026-01-01"', '01/01/26') +
        cell('office:value-type="boolean" office:boolean-value="true"', 'TRUE') +
        '</table:table-row>' +
        // A non-empty row repeated twice: expanded.
        '<table:table-row table:number-rows-repeated="2">' +
        cell('') +
        cell('office:value-type="percentage" office:value="0.25" table:number-columns-repeated="2"', '25%') +
        cell('') +
        '</table:table-row>' +
        '<table:table-row table:number-rows-repeated="1048570"><table:table-cell table:number-columns-repeated="1024"/>' +
        '</table:table-row></table:table>' +
        '<table:table table:name="Empty" table:style-name="ta2"/>',
      automaticStyles:
        '<style:style style:name="ta2" style:family="table"><style:table-properties table:display="false"/></style:style>',
    });
    const model = await readOds(bytes, DEFAULT_READ_LIMITS);
    expect(model).to.include({ format: 'ods', title: 'Budget' });
    expect(model.parts.map((p) => [p.kind, p.name])).to.deep.equal([
      ['sheet', 'Sales'],
      ['sheet', 'Empty'],
    ]);
    expect(model.parts[0].blocks).to.deep.equal([
      {
        type: 'table',
        rows: [
          [{ text: 'Quarter', colspan: 2 }, { text: 'Note' }],
          [{ text: '3.5' }, { text: '2026-01-01' }, { text: 'TRUE' }],
          [{ text: '0.25' }, { text: '0.25' }, { text: '' }],
          [{ text: '0.25' }, { text: '0.25' }, { text: '' }],
        ],
      },
    ]);
    expect(model.parts[1].blocks).to.deep.equal([{ type: 'paragraph', text: 'This sheet is hidden in the workbook.' }]);
  });

  it('truncates a non-empty repeat past 1,000 columns and says so', async () => {
    const bytes = await buildOdf({
      kind: 'spreadsheet',
      body:
        '<table:table table:name="Wide"><table:table-row>' +
        cell('office:value-type="string" table:number-columns-repeated="5000"', 'x') +
        '</table:table-row></table:table>',
    });
    const model = await readOds(bytes, DEFAULT_READ_LIMITS);
    const [note, table] = model.parts[0].blocks;
    expect(note).to.have.property('type', 'paragraph');
    expect(String((note as { text: string }).text)).to.match(/truncated/);
    expect(table).to.have.property('type', 'table');
    expect((table as { rows: unknown[][] }).rows[0]).to.have.length(MAX_ODS_COLUMNS);
  });

  it('truncates a non-empty row repeated past 100,000 rows, and a huge repeat costs no more than the bound', async () => {
    const bytes = await buildOdf({
      kind: 'spreadsheet',
      body:
        '<table:table table:name="Long"><table:table-row table:number-rows-repeated="1000000000">' +
        cell('office:value-type="float" office:value="7"', '7') +
        '</table:table-row></table:table>',
    });
    const model = await readOds(bytes, DEFAULT_READ_LIMITS);
    const [note, table] = model.parts[0].blocks;
    expect(String((note as { text: string }).text)).to.match(/truncated/);
    expect((table as { rows: unknown[][] }).rows).to.have.length(MAX_ODS_ROWS);
  });
});

describe('ODP reader', () => {
  it('reads each page as a slide named by its title frame, with lists, pictures and speaker notes', async () => {
    const frame = (cls: string, inner: string) =>
      `<draw:frame presentation:class="${cls}"><draw:text-box>${inner}</draw:text-box></draw:frame>`;
    const bytes = await buildOdf({
      kind: 'presentation',
      meta: '<dc:title>Deck</dc:title><dc:creator>Eve</dc:creator>',
      automaticStyles:
        '<text:list-style style:name="L2"><text:list-level-style-number text:level="1"/></text:list-style>',
      body:
        '<draw:page draw:name="page1">' +
        frame('title', '<text:p>Plan</text:p>') +
        frame(
          'outline',
          '<text:list><text:list-item><text:p>Goal</text:p><text:list><text:list-item><text:p>Sub</text:p>' +
            '</text:list-item></text:list></text:list-item></text:list>',
        ) +
        '<draw:frame><draw:image xlink:href="Pictures/p.png"/></draw:frame>' +
        `<presentation:notes><draw:page-thumbnail/>${frame('notes', '<text:p>Say hello.</text:p>')}</presentation:notes>` +
        '</draw:page>' +
        '<draw:page draw:name="page2">' +
        frame(
          'outline',
          '<text:list text:style-name="L2"><text:list-item><text:p>One</text:p></text:list-item></text:list>',
        ) +
        '<draw:custom-shape><text:p>Boxed</text:p></draw:custom-shape></draw:page>',
      pictures: { 'p.png': tinyPng() },
    });
    const model = await readOdp(bytes, DEFAULT_READ_LIMITS);
    expect(model).to.include({ format: 'odp', title: 'Deck', author: 'Eve' });
    expect(model.parts).to.deep.equal([
      {
        kind: 'slide',
        name: 'Plan',
        blocks: [
          { type: 'heading', level: 1, text: 'Plan' },
          { type: 'list_item', level: 0, ordered: false, text: 'Goal' },
          { type: 'list_item', level: 1, ordered: false, text: 'Sub' },
          { type: 'image', name: 'image-1.png' },
          { type: 'note', kind: 'speaker_notes', text: 'Say hello.' },
        ],
      },
      {
        kind: 'slide',
        blocks: [
          { type: 'list_item', level: 0, ordered: true, text: 'One' },
          { type: 'paragraph', text: 'Boxed' },
        ],
      },
    ]);
    expect(model.images.map((i) => i.name)).to.deep.equal(['image-1.png']);
  });
});
