import { expect } from 'chai';
import { DEFAULT_READ_LIMITS, DocumentError, type DocumentModel } from '../../domain/documents/model';
import { readDocument } from '../../domain/documents/read';
import { readEpub } from '../../domain/documents/readers/epub';
import { renderDocument } from '../../domain/documents/render';
import { tinyPng, zipOf, type ZipEntries } from '../support/documents/office-files';

const XML = '<?xml version="1.0" encoding="UTF-8"?>\n';
const CONTAINER =
  `${XML}<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">` +
  '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>' +
  '</container>';

const xhtml = (body: string, title = 'x') =>
  `${XML}<!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">` +
  `<head><title>${title}</title><style>p { color: red }</style></head><body>${body}</body></html>`;

interface Item {
  id: string;
  href: string;
  type: string;
  props?: string;
}

function opf(items: Item[], spine: string[], extra = '', toc = '') {
  return (
    `${XML}<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">` +
    '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="uid">urn:uuid:1</dc:identifier>' +
    `<dc:title>The Sea Book</dc:title><dc:creator>Ada Marin</dc:creator><dc:language>en-GB</dc:language>${extra}` +
    '</metadata><manifest>' +
    items
      .map(
        (i) =>
          `<item id="${i.id}" href="${i.href}" media-type="${i.type}"${i.props ? ` properties="${i.props}"` : ''}/>`,
      )
      .join('') +
    `</manifest><spine${toc ? ` toc="${toc}"` : ''}>${spine.map((s) => `<itemref idref="${s}"/>`).join('')}</spine>` +
    '</package>'
  );
}

/** An EPUB: `mimetype` first and stored, as the OCF specification requires, then the container and the files. */
const epubOf = (files: ZipEntries) =>
  zipOf({ mimetype: 'application/epub+zip', 'META-INF/container.xml': CONTAINER, ...files }, ['mimetype']);

const XHTML = 'application/xhtml+xml';
const CHAPTER_ONE = xhtml(
  '<section epub:type="chapter"><h1>Tides</h1><p>The <em>moon</em> pulls the <strong>sea</strong>&nbsp;twice a day.</p>' +
    '<ul><li>Spring tides<ul><li>at new moon</li></ul></li><li>Neap tides</li></ul>' +
    '<p><img src="../Images/wave.png" alt="A wave"/></p></section>',
);
const CHAPTER_TWO = xhtml(
  '<h2>Harbours</h2><table><caption>Depths</caption><thead><tr><th colspan="2">Harbour</th><th>Depth</th></tr></thead>' +
    '<tbody><tr><td>North</td><td><p>Pier</p><p>East</p></td><td>12 m</td></tr></tbody></table>' +
    '<p>See <a href="c1.xhtml#t">tides</a>.<a epub:type="noteref" href="#n1">1</a></p>' +
    '<aside epub:type="footnote" id="n1"><p>Measured at low water.</p></aside>',
);
const CHAPTER_THREE = xhtml('<h1>Storms</h1><ol start="3"><li>Gale</li><li>Hurricane</li></ol>');
const NAV = xhtml(
  '<nav epub:type="toc"><ol><li><a href="Text/c1.xhtml">1. Tides and the moon</a></li>' +
    '<li><a href="Text/c2.xhtml#top">2. Harbours of the coast</a></li></ol></nav>',
);
const MANIFEST: Item[] = [
  { id: 'nav', href: 'nav.xhtml', type: XHTML, props: 'nav' },
  { id: 'c1', href: 'Text/c1.xhtml', type: XHTML },
  { id: 'c2', href: 'Text/c2.xhtml', type: XHTML },
  { id: 'c3', href: 'Text/c3.xhtml', type: XHTML },
  { id: 'img', href: 'Images/wave.png', type: 'image/png' },
];

async function sampleEpub(extra: ZipEntries = {}) {
  return epubOf({
    // Zip order and manifest order are c1, c2, c3; the spine reads c3, c1, c2.
    'OEBPS/content.opf': opf(MANIFEST, ['c3', 'c1', 'c2']),
    'OEBPS/nav.xhtml': NAV,
    'OEBPS/Text/c1.xhtml': CHAPTER_ONE,
    'OEBPS/Text/c2.xhtml': CHAPTER_TWO,
    'OEBPS/Text/c3.xhtml': CHAPTER_THREE,
    'OEBPS/Images/wave.png': tinyPng(),
    ...extra,
  });
}

async function refusal(bytes: Buffer): Promise<DocumentError> {
  try {
    await readEpub(bytes, DEFAULT_READ_LIMITS);
  } catch (err) {
    expect(err).to.be.instanceOf(DocumentError);
    return err as DocumentError;
  }
  throw new Error('expected the EPUB to be refused');
}

describe('EPUB reader', () => {
  let book: DocumentModel;
  before(async () => {
    book = await readEpub(await sampleEpub(), DEFAULT_READ_LIMITS);
  });

  it('reads the Dublin Core title, creator and language of the package document', () => {
    expect(book).to.include({ format: 'epub', title: 'The Sea Book', author: 'Ada Marin', language: 'en-GB' });
  });

  it('gives one chapter per spine item in spine order, named by the nav document or else the first heading', () => {
    expect(book.parts.map((p) => [p.kind, p.name])).to.deep.equal([
      ['chapter', 'Storms'],
      ['chapter', '1. Tides and the moon'],
      ['chapter', '2. Harbours of the coast'],
    ]);
  });

  it('reads headings, emphasis, named entities and nested lists of a chapter', () => {
    const blocks = book.parts[1]!.blocks;
    expect(blocks[0]).to.deep.equal({ type: 'heading', level: 1, text: 'Tides' });
    expect(blocks[1]).to.deep.equal({
      type: 'paragraph',
      text: [
        { text: 'The ' },
        { text: 'moon', italic: true },
        { text: ' pulls the ' },
        { text: 'sea', bold: true },
        { text: '\u00a0twice a day.' },
      ],
    });
    expect(blocks.slice(2, 5)).to.deep.equal([
      { type: 'list_item', level: 0, ordered: false, text: 'Spring tides' },
      { type: 'list_item', level: 1, ordered: false, text: 'at new moon' },
      { type: 'list_item', level: 0, ordered: false, text: 'Neap tides' },
    ]);
    expect(book.parts[0]!.blocks.slice(1)).to.deep.equal([
      { type: 'list_item', level: 0, ordered: true, number: 3, text: 'Gale' },
      { type: 'list_item', level: 0, ordered: true, number: 4, text: 'Hurricane' },
    ]);
  });

  it('takes an image from the package, resolved against the chapter, into the images', () => {
    expect(book.parts[1]!.blocks.at(-1)).to.deep.equal({ type: 'image', name: 'image-1.png', alt: 'A wave' });
    expect(book.images.map((i) => [i.name, i.mime])).to.deep.equal([['image-1.png', 'image/png']]);
    expect(Buffer.from(book.images[0]!.data).equals(tinyPng())).to.equal(true);
  });

  it('reads a table with its column span on the spanning cell, its header row and caption, and a footnote', () => {
    const [heading, table, para, note] = book.parts[2]!.blocks;
    expect(heading).to.deep.equal({ type: 'heading', level: 2, text: 'Harbours' });
    expect(table).to.deep.equal({
      type: 'table',
      headerRows: 1,
      caption: 'Depths',
      rows: [
        [
          { text: 'Harbour', colspan: 2, header: true },
          { text: 'Depth', header: true },
        ],
        [{ text: 'North' }, { text: 'Pier East' }, { text: '12 m' }],
      ],
    });
    expect(para).to.deep.equal({
      type: 'paragraph',
      text: [{ text: 'See ' }, { text: 'tides', href: 'c1.xhtml#t' }, { text: '.' }, { text: '1', href: '#n1' }],
    });
    expect(note).to.deep.equal({ type: 'note', kind: 'footnote', label: 'n1', text: 'Measured at low water.' });
  });

  it('renders to text with the chapters in reading order and no style sheet or head text', () => {
    const { text } = renderDocument(book, { markdown: false });
    expect(text.indexOf('Storms')).to.be.lessThan(text.indexOf('Tides'));
    expect(text.indexOf('Tides')).to.be.lessThan(text.indexOf('Harbours'));
    expect(text).to.not.include('color: red');
  });

  it('is detected by its content and read through the registry, a spine naming a file twice reading it once', async () => {
    const bytes = await epubOf({
      'OEBPS/content.opf': opf(MANIFEST, ['c3', 'c3', 'c1']),
      'OEBPS/nav.xhtml': NAV,
      'OEBPS/Text/c1.xhtml': CHAPTER_ONE,
      'OEBPS/Text/c3.xhtml': CHAPTER_THREE,
    });
    const read = await readDocument(bytes, DEFAULT_READ_LIMITS);
    if (read.kind !== 'model') throw new Error(`expected a model, got ${read.kind}`);
    const { model } = read;
    expect(model.format).to.equal('epub');
    expect(model.parts.map((p) => p.name)).to.deep.equal(['Storms', '1. Tides and the moon']);
    // The image of chapter one is not in this package: its block is left out, nothing is invented.
    expect(model.images).to.deep.equal([]);
  });

  it('names chapters from an EPUB 2 NCX when there is no nav document', async () => {
    const ncx =
      `${XML}<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><navMap>` +
      '<navPoint id="p1"><navLabel><text>Part One</text></navLabel><content src="Text/c1.xhtml"/>' +
      '<navPoint id="p2"><navLabel><text>Harbour list</text></navLabel><content src="Text/c2.xhtml"/></navPoint>' +
      '</navPoint></navMap></ncx>';
    const items = [...MANIFEST.slice(1), { id: 'ncx', href: 'toc.ncx', type: 'application/x-dtbncx+xml' }];
    const bytes = await epubOf({
      'OEBPS/content.opf': opf(items, ['c1', 'c2', 'c3'], '', 'ncx'),
      'OEBPS/toc.ncx': ncx,
      'OEBPS/Text/c1.xhtml': CHAPTER_ONE,
      'OEBPS/Text/c2.xhtml': CHAPTER_TWO,
      'OEBPS/Text/c3.xhtml': CHAPTER_THREE,
      'OEBPS/Images/wave.png': tinyPng(),
    });
    const model = await readEpub(bytes, DEFAULT_READ_LIMITS);
    expect(model.parts.map((p) => p.name)).to.deep.equal(['Part One', 'Harbour list', 'Storms']);
  });

  it('refuses a book whose content files encryption.xml lists as 422 encrypted', async () => {
    const encryption =
      `${XML}<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" ` +
      'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>' +
      '<enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>' +
      '<enc:CipherData><enc:CipherReference URI="OEBPS/Text/c1.xhtml"/></enc:CipherData></enc:EncryptedData>' +
      '</encryption>';
    const err = await refusal(await sampleEpub({ 'META-INF/encryption.xml': encryption }));
    expect([err.code, err.reason]).to.deep.equal(['UNPROCESSABLE_INPUT', 'encrypted']);
  });

  it('reads a book whose encryption.xml only lists an obfuscated font', async () => {
    const encryption =
      `${XML}<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" ` +
      'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>' +
      '<enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/>' +
      '<enc:CipherData><enc:CipherReference URI="OEBPS/Fonts/serif.otf"/></enc:CipherData></enc:EncryptedData>' +
      '</encryption>';
    const model = await readEpub(await sampleEpub({ 'META-INF/encryption.xml': encryption }), DEFAULT_READ_LIMITS);
    expect(model.parts).to.have.length(3);
  });

  it('takes bold, italic and line-through from the classes of the style sheets, as LibreOffice exports them', async () => {
    const css =
      '/* .c0 { font-weight: bold } is commented out */ .para0 { font-style: italic; }\n' +
      'span.s1, .s2 { font-weight: 700 } .s3 { text-decoration: line-through } .s4 { font-weight: normal }';
    const chapter = xhtml(
      '<p class="para0"><span class="s1">Both</span> italic <span class="s4 c0">plain</span></p>' +
        '<p><span class="s2">bold</span> <span class="s3">gone</span> <span class="c0">x</span></p>',
    );
    const items = [
      { id: 'css', href: 'style.css', type: 'text/css' },
      { id: 'c', href: 'c.xhtml', type: XHTML },
    ];
    const bytes = await epubOf({
      'OEBPS/content.opf': opf(items, ['c']),
      'OEBPS/style.css': css,
      'OEBPS/c.xhtml': chapter,
    });
    const model = await readEpub(bytes, DEFAULT_READ_LIMITS);
    expect(model.parts[0]!.blocks).to.deep.equal([
      {
        type: 'paragraph',
        text: [
          { text: 'Both', italic: true, bold: true },
          // `.s4` sets the weight back to normal, not the style: the italic of the paragraph's class stays.
          { text: ' italic plain', italic: true },
        ],
      },
      {
        type: 'paragraph',
        text: [{ text: 'bold', bold: true }, { text: ' ' }, { text: 'gone', strike: true }, { text: ' x' }],
      },
    ]);
  });

  it('keeps only the alt text of a remote image and never reads it', async () => {
    const chapter = xhtml('<p>Look: <img src="https://example.com/a.png" alt="remote picture"/></p>');
    const bytes = await epubOf({
      'OEBPS/content.opf': opf([{ id: 'c', href: 'c.xhtml', type: XHTML }], ['c']),
      'OEBPS/c.xhtml': chapter,
    });
    const model = await readEpub(bytes, DEFAULT_READ_LIMITS);
    expect(model.images).to.deep.equal([]);
    expect(model.parts[0]!.blocks).to.deep.equal([{ type: 'paragraph', text: 'Look: remote picture' }]);
    expect(model.parts[0]!.name).to.equal(undefined);
  });

  it('reads a chapter that is not well-formed XML as HTML rather than losing the book', async () => {
    const broken = `<html xmlns="http://www.w3.org/1999/xhtml"><body><h1>Loose</h1><p>Line one<br>line two &frac34;</p></body></html>`;
    const bytes = await epubOf({
      'OEBPS/content.opf': opf(MANIFEST, ['c3', 'bad']).replace(
        '</manifest>',
        '<item id="bad" href="bad.xhtml" media-type="application/xhtml+xml"/></manifest>',
      ),
      'OEBPS/nav.xhtml': NAV,
      'OEBPS/Text/c3.xhtml': CHAPTER_THREE,
      'OEBPS/bad.xhtml': broken,
    });
    const model = await readEpub(bytes, DEFAULT_READ_LIMITS);
    expect(model.parts.map((p) => p.name)).to.deep.equal(['Storms', 'Loose']);
    expect(renderDocument(model, { markdown: false }).text).to.include('Line one\nline two \u00be');
  });

  it('refuses a chapter declaring entities (the billion-laughs shape) as 422 xml_entities', async () => {
    const bomb =
      `${XML}<!DOCTYPE html [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>` +
      '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>&b;</p></body></html>';
    const bytes = await epubOf({
      'OEBPS/content.opf': opf([{ id: 'c', href: 'c.xhtml', type: XHTML }], ['c']),
      'OEBPS/c.xhtml': bomb,
    });
    const err = await refusal(bytes);
    expect([err.code, err.reason]).to.deep.equal(['UNPROCESSABLE_INPUT', 'xml_entities']);
  });

  it('refuses a zip without a package document as 422 corrupt', async () => {
    const err = await refusal(await zipOf({ mimetype: 'application/epub+zip', 'a.txt': 'x' }, ['mimetype']));
    expect([err.code, err.reason]).to.deep.equal(['UNPROCESSABLE_INPUT', 'corrupt']);
  });
});
