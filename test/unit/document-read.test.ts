import { expect } from 'chai';
import { DEFAULT_READ_LIMITS } from '../../domain/documents/model';
import { readDocument, UnsupportedDocumentError } from '../../domain/documents/read';
import { buildDocx } from '../support/documents/office-files';

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

describe('readDocument of an e-mail with a Word attachment', () => {
  it('reads the attachment by its content as a part of its own, headings and all', async () => {
    const docx = await buildDocx({
      body:
        '<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Quarterly figures</w:t></w:r></w:p>' +
        '<w:p><w:r><w:t>Revenue rose in every region.</w:t></w:r></w:p>',
      styles:
        '<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/>' +
        '<w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style>',
    });
    const mail = [
      'From: Ann <ann@example.org>',
      'To: Bob <bob@example.org>',
      'Subject: The report',
      'Date: Tue, 01 Dec 2026 10:00:00 +0000',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'The report is attached.',
      '--b1',
      'Content-Type: application/octet-stream; name="report.bin"',
      'Content-Disposition: attachment; filename="report.bin"',
      'Content-Transfer-Encoding: base64',
      '',
      docx.toString('base64').replace(/.{76}/g, '$&\n'),
      '--b1--',
      '',
    ].join('\r\n');
    const read = await readDocument(Buffer.from(mail), DEFAULT_READ_LIMITS);
    if (read.kind !== 'model') throw new Error('an e-mail is read, not routed');
    expect(read.model.format).to.equal('eml');
    expect(read.model.title).to.equal('The report');
    const attachment = read.model.parts.find((p) => p.kind === 'attachment');
    expect(attachment?.attachment?.filename).to.equal('report.bin');
    // Read by content (a DOCX), though its name and declared type say nothing of it.
    const blocks = read.model.parts.filter((p) => p !== read.model.parts[0]).flatMap((p) => p.blocks);
    expect(blocks).to.deep.include({ type: 'heading', level: 1, text: 'Quarterly figures' });
  });
});
