import { expect } from 'chai';
import { DEFAULT_READ_LIMITS } from '../../domain/documents/model';
import { readDocument, UnsupportedDocumentError } from '../../domain/documents/read';

describe('readDocument (detect, then the format reader)', () => {
  it('reads Markdown, CSV and HTML by their content', async () => {
    const md = await readDocument(Buffer.from('# A\n\ntext\n'), DEFAULT_READ_LIMITS);
    expect(md.kind === 'model' && md.model.format).to.equal('markdown');
    const csv = await readDocument(Buffer.from('a,b\n1,2\n'), DEFAULT_READ_LIMITS, { filename: 'x.md' });
    expect(csv.kind === 'model' && csv.model.format).to.equal('csv');
    const html = await readDocument(Buffer.from('<html><body><p>x</p></body></html>'), DEFAULT_READ_LIMITS);
    expect(html.kind === 'model' && html.model.format).to.equal('html');
  });

  it('routes PDFs and images to their own pipelines', async () => {
    expect(await readDocument(Buffer.from('%PDF-1.4\n'), DEFAULT_READ_LIMITS)).to.deep.equal({
      kind: 'routed',
      format: 'pdf',
      mime: 'application/pdf',
    });
    const gif = await readDocument(Buffer.from('GIF89a\x01\x00\x01\x00'), DEFAULT_READ_LIMITS);
    expect(gif).to.deep.equal({ kind: 'routed', format: 'image', mime: 'image/gif' });
  });

  it('refuses random bytes and formats without a reader with INVALID_FORMAT and the supported list', async () => {
    const random = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 7919 + 13) % 256));
    const e1 = (await readDocument(random, DEFAULT_READ_LIMITS).catch((e: unknown) => e)) as UnsupportedDocumentError;
    expect(e1).to.be.instanceOf(UnsupportedDocumentError);
    expect(e1.code).to.equal('INVALID_FORMAT');
    expect(e1.details.supported_formats).to.include.members(['markdown', 'csv', 'html', 'pdf', 'image']);
    const rtf = (await readDocument(Buffer.from('{\\rtf1 x}'), DEFAULT_READ_LIMITS).catch(
      (e: unknown) => e,
    )) as UnsupportedDocumentError;
    expect(rtf.details).to.include({ error_type: 'unsupported_rtf', detected_format: 'rtf' });
    expect(rtf.details.supported_formats).to.not.include('rtf');
  });
});
