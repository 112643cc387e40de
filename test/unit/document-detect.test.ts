import { expect } from 'chai';
import * as CFB from 'cfb';
import yazl from 'yazl';
import { detectFormat } from '../../domain/documents/detect';
import { DEFAULT_READ_LIMITS, DocumentError } from '../../domain/documents/model';

/** A zip the test writes: `entries` in order, `mimetype` stored first as ODF and EPUB require. */
function zip(entries: Array<[string, string]>): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const [name, body] of entries) z.addBuffer(Buffer.from(body), name, { compress: name !== 'mimetype' });
  z.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    z.outputStream.on('data', (c: Buffer) => chunks.push(c));
    z.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    z.outputStream.on('error', reject);
  });
}

/** An OLE compound file with the named streams. */
function cfb(streams: string[]): Buffer {
  const c = CFB.utils.cfb_new();
  for (const s of streams) CFB.utils.cfb_add(c, `/${s}`, Buffer.from('x'.repeat(600)));
  return Buffer.from(CFB.write(c, { type: 'buffer' }) as Uint8Array);
}

const detect = async (b: Uint8Array | string, hints?: { filename?: string; declaredType?: string }) =>
  (await detectFormat(typeof b === 'string' ? Buffer.from(b) : b, DEFAULT_READ_LIMITS, hints))?.format ?? null;

describe('document format detection (by content)', () => {
  it('knows the OOXML containers by [Content_Types].xml and their part folders', async () => {
    const ct: [string, string] = ['[Content_Types].xml', '<Types/>'];
    expect(await detect(await zip([ct, ['word/document.xml', '<w/>']]))).to.equal('docx');
    expect(await detect(await zip([ct, ['ppt/presentation.xml', '<p/>']]))).to.equal('pptx');
    expect(await detect(await zip([ct, ['xl/workbook.xml', '<x/>']]))).to.equal('xlsx');
    // A zip of other things is no document, whatever its name says.
    expect(await detect(await zip([['a.txt', 'hello']]), { filename: 'report.docx' })).to.equal(null);
  });

  it('knows ODF and EPUB by their mimetype entry', async () => {
    const odf = (m: string) =>
      zip([
        ['mimetype', m],
        ['content.xml', '<c/>'],
      ]);
    expect(await detect(await odf('application/vnd.oasis.opendocument.text'))).to.equal('odt');
    expect(await detect(await odf('application/vnd.oasis.opendocument.presentation'))).to.equal('odp');
    expect(await detect(await odf('application/vnd.oasis.opendocument.spreadsheet'))).to.equal('ods');
    expect(await detect(await odf('application/epub+zip'))).to.equal('epub');
    expect(await detect(await odf('application/vnd.oasis.opendocument.graphics'))).to.equal(null);
  });

  it('refuses a container listing more entries than the budget', async () => {
    const many = await zip(Array.from({ length: 12 }, (_, i) => [`f${i}`, 'x'] as [string, string]));
    const err = await detectFormat(many, { ...DEFAULT_READ_LIMITS, maxEntries: 10 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DocumentError);
    expect((err as DocumentError).code).to.equal('PAYLOAD_TOO_LARGE');
  });

  it('knows OLE compound files by their streams, and an encrypted OOXML file as encrypted', async () => {
    expect(await detect(cfb(['WordDocument']))).to.equal('doc');
    expect(await detect(cfb(['Workbook']))).to.equal('xls');
    expect(await detect(cfb(['Book']))).to.equal('xls');
    expect(await detect(cfb(['PowerPoint Document']))).to.equal('ppt');
    expect(await detect(cfb(['__substg1.0_0037001F']))).to.equal('msg');
    expect(await detect(cfb(['Other']))).to.equal(null);
    const err = await detectFormat(cfb(['EncryptionInfo', 'EncryptedPackage']), DEFAULT_READ_LIMITS).catch((e) => e);
    expect((err as DocumentError).reason).to.equal('encrypted');
  });

  it('knows PDF, RTF and images by their signatures', async () => {
    expect(await detect('%PDF-1.7\n...')).to.equal('pdf');
    expect(await detect('{\\rtf1\\ansi hello}')).to.equal('rtf');
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    const got = await detectFormat(png, DEFAULT_READ_LIMITS, { filename: 'x.docx' });
    expect(got).to.deep.equal({ format: 'image', mime: 'image/png' });
    expect(await detect(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]))).to.equal('image');
    expect(await detect(Buffer.concat([Buffer.from('RIFF\0\0\0\0WEBPVP8 ')]))).to.equal('image');
    expect(await detect('GIF89a\x01\x00')).to.equal('image');
    // "BM" opening a text is not a bitmap (no DIB header size at offset 14).
    expect(await detect('BMW sells cars.\nMore text here.')).to.equal('text');
  });

  it('knows an e-mail by its header block, HTML by its markup', async () => {
    const mail = 'From: a@example.org\r\nTo: b@example.org\r\nSubject: Hi\r\n  folded\r\n\r\nBody';
    expect(await detect(mail)).to.equal('eml');
    expect(await detect('Title: notes\nsomething else\n\nbody')).to.not.equal('eml');
    expect(await detect('<!DOCTYPE html><html><body><p>x</p></body></html>')).to.equal('html');
    expect(await detect('<!-- c -->\n<html lang="de"><p>x</p></html>')).to.equal('html');
    expect(await detect('<div class="a"><p>Hello</p></div>')).to.equal('html');
  });

  it('knows CSV and TSV by consistent delimiters, Markdown by its marks, else plain text', async () => {
    expect(await detect('a,b,c\n1,2,3\n"x, y",5,6\n')).to.equal('csv');
    expect(await detect('a\tb\n1\t2\n')).to.equal('tsv');
    expect(await detect('a;b\n1;2\n')).to.equal('csv');
    expect(await detect('Hello, world.\nThis line, has two, commas.\n')).to.equal('text');
    expect(await detect('# Title\n\nSome text.\n')).to.equal('markdown');
    expect(await detect('Text\n\n```js\ncode\n```\n')).to.equal('markdown');
    expect(await detect('See [the docs](https://example.org).')).to.equal('markdown');
    expect(await detect('- one\n- two\n')).to.equal('markdown');
    expect(await detect('Just a sentence.\n')).to.equal('text');
  });

  it('takes the name or declared type only to break a tie between text formats', async () => {
    expect(await detect('Just a sentence.\n', { filename: 'notes.md' })).to.equal('markdown');
    expect(await detect('Just a sentence.\n', { declaredType: 'text/markdown; charset=utf-8' })).to.equal('markdown');
    expect(await detect('a,b,c\n', { filename: 'one.csv' })).to.equal('csv');
    expect(await detect('a,b,c\n')).to.equal('text');
    // A name never makes binary bytes a document.
    expect(await detect(Buffer.from([1, 2, 0, 3, 4, 250, 251]), { filename: 'x.txt' })).to.equal(null);
    expect(await detect(Buffer.alloc(0), { filename: 'x.txt' })).to.equal(null);
  });

  it('reads UTF-16 text by its BOM', async () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('# Heading\n\ntext\n', 'utf16le')]);
    expect(await detect(utf16)).to.equal('markdown');
  });
});
