import { expect } from 'chai';
import { DEFAULT_READ_LIMITS, DocumentError } from '../../domain/documents/model';
import { readHtml } from '../../domain/documents/readers/html';
import { renderDocument } from '../../domain/documents/render';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

describe('HTML reader', () => {
  it('reads a page into headings, paragraphs with emphasis, nested lists, tables and data: images', async () => {
    const page = `<!doctype html><html lang="de"><head><title>Seite</title><meta name="author" content="Ann">
      <script>alert(1)</script><style>p{}</style></head><body>
      <h1>Titel</h1><p>Ein <b>fetter</b> <a href="https://example.org">Link</a>.</p>
      <ol><li>eins<ul><li>innen</li></ul></li><li>zwei</li></ol>
      <table><tr><th>a</th><th>b</th></tr><tr><td colspan="2">breit</td></tr></table>
      <p><img alt="Logo" src="data:image/png;base64,${PNG.toString('base64')}"></p>
      <img src="https://example.org/remote.png" alt="fern">
      </body></html>`;
    const doc = await readHtml(Buffer.from(page), DEFAULT_READ_LIMITS);
    expect([doc.title, doc.author, doc.language]).to.deep.equal(['Seite', 'Ann', 'de']);
    expect(doc.images).to.have.length(1);
    expect(doc.images[0]!.name).to.equal('image-1.png');
    expect(Buffer.from(doc.images[0]!.data).equals(PNG)).to.equal(true);
    const md = renderDocument(doc, { markdown: true }).markdown;
    expect(md).to.equal(
      '# Titel\n\nEin **fetter** [Link](<https://example.org>).\n\n1. eins\n   - innen\n2. zwei\n\n' +
        '<table>\n<thead>\n<tr><th>a</th><th>b</th></tr>\n</thead>\n<tbody>\n<tr><td colspan="2">breit</td></tr>\n' +
        '</tbody>\n</table>\n\n![Logo](images/image-1.png)\n\nfern\n',
    );
    expect(md).to.not.contain('alert');
    expect(md).to.not.contain('remote.png');
  });

  it('bounds embedded images by the budget', async () => {
    const page = `<p><img src="data:image/png;base64,${Buffer.alloc(4096).toString('base64')}"></p>`;
    const err = await readHtml(Buffer.from(page), { ...DEFAULT_READ_LIMITS, maxUncompressedBytes: 1024 }).catch(
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(DocumentError);
    expect((err as DocumentError).code).to.equal('PAYLOAD_TOO_LARGE');
  });

  it('flattens nesting past the depth budget into text instead of recursing', async () => {
    const deep = '<div>'.repeat(50) + 'deep text' + '</div>'.repeat(50);
    const doc = await readHtml(Buffer.from(deep), { ...DEFAULT_READ_LIMITS, maxXmlDepth: 10 });
    expect(renderDocument(doc, { markdown: false }).text).to.equal('deep text');
  });

  it('keeps the blocks of a blockquote: a table stays a table, its paragraphs are quoted one by one', async () => {
    const page =
      '<body><blockquote><p>Versions tested:</p><table><tr><th>CPU</th><th>Versions</th></tr>' +
      '<tr><td>Debian</td><td>i386/amd64</td></tr></table><p>Both fine.</p></blockquote></body>';
    const doc = await readHtml(Buffer.from(page), DEFAULT_READ_LIMITS);
    expect(doc.parts[0].blocks.map((b) => b.type)).to.deep.equal(['quote', 'table', 'quote']);
    const { markdown } = renderDocument(doc, { markdown: true });
    expect(markdown)
      .to.include('> Versions tested:')
      .and.include('| Debian | i386/amd64 |')
      .and.include('> Both fine.');
  });
});
