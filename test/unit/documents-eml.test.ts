import { expect } from 'chai';
import { readEml, type AttachmentReader } from '../../domain/documents/readers/eml';
import { DEFAULT_READ_LIMITS, type DocPart } from '../../domain/documents/model';

// RFC 5322 messages written here, so every header, body block and attachment is known.
const crlf = (s: string): Uint8Array => Buffer.from(s.replace(/\r?\n/g, '\r\n'));
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

/** Reads text attachments as one paragraph (what the registry's text reader would), lists everything else. */
const calls: Array<{ filename: string; mime: string; depth: number }> = [];
const readAttachment: AttachmentReader = async ({ filename, mime, bytes, depth }) => {
  calls.push({ filename, mime, depth });
  if (mime !== 'text/plain') return null;
  const part: DocPart = {
    kind: 'document',
    blocks: [{ type: 'paragraph', text: Buffer.from(bytes).toString('utf8') }],
  };
  return [part];
};

const message = (subject: string, body: string, extra = ''): string =>
  `From: "Ann Example" <ann@example.org>\nTo: bob@example.org, Carl <carl@example.org>\nSubject: ${subject}\n` +
  `Date: Tue, 01 Dec 2026 10:00:00 +0100\nMIME-Version: 1.0\n${extra}${body}`;

describe('e-mail reader (EML, mailparser)', () => {
  beforeEach(() => (calls.length = 0));

  it('reads the headers as a front block and prefers the HTML alternative with its structure', async () => {
    const eml = message(
      'Quarterly =?UTF-8?Q?R=C3=A9sum=C3=A9?=',
      'Content-Type: multipart/alternative; boundary="alt"\n\n--alt\nContent-Type: text/plain; charset=utf-8\n' +
        'Content-Transfer-Encoding: quoted-printable\n\nPlain caf=C3=A9 stand-in\n--alt\n' +
        'Content-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n' +
        '<h2>Agenda</h2><p>Caf=C3=A9 at <b>ten</b>.</p><ul><li>one</li><li>two<ol><li>deep</li></ol></li></ul>' +
        '<table><tr><th>K</th><th>V</th></tr><tr><td colspan=3D"2">wide</td></tr></table>\n--alt--\n',
    );
    const doc = await readEml(crlf(eml), DEFAULT_READ_LIMITS, { readAttachment });
    expect(doc.format).to.equal('eml');
    expect(doc.title).to.equal('Quarterly Résumé');
    expect(doc.author).to.equal('"Ann Example" <ann@example.org>');
    const [msg] = doc.parts;
    expect(msg!.kind).to.equal('message');
    expect(msg!.blocks[0]).to.deep.equal({
      type: 'fields',
      fields: [
        ['From', '"Ann Example" <ann@example.org>'],
        ['To', 'bob@example.org, "Carl" <carl@example.org>'],
        ['Date', '2026-12-01T09:00:00.000Z'],
        ['Subject', 'Quarterly Résumé'],
      ],
    });
    expect(msg!.blocks.slice(1)).to.deep.equal([
      { type: 'heading', level: 2, text: 'Agenda' },
      { type: 'paragraph', text: [{ text: 'Café at ' }, { text: 'ten', bold: true }, { text: '.' }] },
      { type: 'list_item', level: 0, ordered: false, text: 'one' },
      { type: 'list_item', level: 0, ordered: false, text: 'two' },
      { type: 'list_item', level: 1, ordered: true, number: 1, text: 'deep' },
      {
        type: 'table',
        rows: [
          [
            { text: 'K', header: true },
            { text: 'V', header: true },
          ],
          [{ text: 'wide', colspan: 2 }],
        ],
        headerRows: 1,
      },
    ]);
  });

  it('reads a plain-text body and hands a base64 attachment to the attachment reader', async () => {
    const notes = Buffer.from('Attached notes, line one.').toString('base64');
    const eml = message(
      'Notes',
      'Content-Type: multipart/mixed; boundary="mix"\n\n--mix\nContent-Type: text/plain\n\nFirst paragraph\nwraps here.\n\n' +
        '> quoted reply\n--mix\nContent-Type: text/plain; name="notes.txt"\nContent-Disposition: attachment; ' +
        `filename="notes.txt"\nContent-Transfer-Encoding: base64\n\n${notes}\n--mix\nContent-Type: application/x-unknown\n` +
        'Content-Disposition: attachment; filename="blob.bin"\nContent-Transfer-Encoding: base64\n\nAAECAw==\n--mix--\n',
    );
    const doc = await readEml(crlf(eml), DEFAULT_READ_LIMITS, { readAttachment });
    expect(doc.parts[0]!.blocks.slice(1)).to.deep.equal([
      { type: 'paragraph', text: 'First paragraph wraps here.' },
      { type: 'quote', text: 'quoted reply' },
    ]);
    expect(doc.parts[1]).to.deep.equal({
      kind: 'attachment',
      name: 'notes.txt',
      blocks: [{ type: 'paragraph', text: 'Attached notes, line one.' }],
      attachment: { filename: 'notes.txt', mime: 'text/plain', size: 25 },
    });
    expect(doc.parts[2]).to.deep.equal({
      kind: 'attachment',
      name: 'blob.bin',
      blocks: [],
      attachment: { filename: 'blob.bin', mime: 'application/x-unknown', size: 4 },
    });
    expect(calls.map((c) => [c.filename, c.depth])).to.deep.equal([
      ['notes.txt', 0],
      ['blob.bin', 0],
    ]);
  });

  it('puts an inline cid: image into images, in its place in the HTML body', async () => {
    const eml = message(
      'Picture',
      'Content-Type: multipart/related; boundary="rel"\n\n--rel\nContent-Type: text/html\n\n' +
        '<p>Before</p><img src="cid:dot@example" alt="a dot"><p>After</p><img src="https://tracker.example/x.png">\n' +
        '--rel\nContent-Type: image/png\nContent-ID: <dot@example>\nContent-Disposition: inline\n' +
        `Content-Transfer-Encoding: base64\n\n${PNG.toString('base64')}\n--rel--\n`,
    );
    const doc = await readEml(crlf(eml), DEFAULT_READ_LIMITS, { readAttachment });
    expect(doc.images).to.have.length(1);
    expect(doc.images[0]!.name).to.equal('image-1.png');
    expect(Buffer.from(doc.images[0]!.data).equals(PNG)).to.equal(true);
    expect(doc.parts[0]!.blocks.slice(1)).to.deep.equal([
      { type: 'paragraph', text: 'Before' },
      { type: 'image', name: 'image-1.png', alt: 'a dot' },
      { type: 'paragraph', text: 'After' },
    ]);
    expect(doc.parts).to.have.length(1);
    expect(calls).to.deep.equal([]);
  });

  /** A message carrying `inner` as a message/rfc822 attachment. */
  const wrap = (subject: string, inner: string): string =>
    message(
      subject,
      'Content-Type: multipart/mixed; boundary="b-' +
        subject +
        '"\n\n--b-' +
        subject +
        '\nContent-Type: text/plain\n\n' +
        `Body of ${subject}\n--b-${subject}\nContent-Type: message/rfc822\nContent-Disposition: attachment; ` +
        `filename="${subject}-inner.eml"\n\n${inner}\n--b-${subject}--\n`,
    );

  it('reads e-mails nested three levels deep, and lists the ones past maxMessageDepth unread', async () => {
    const level3 = message('Level3', 'Content-Type: text/plain\n\nBody of Level3\n');
    const eml = crlf(wrap('Level0', wrap('Level1', wrap('Level2', level3))));
    const doc = await readEml(eml, DEFAULT_READ_LIMITS, { readAttachment });
    expect(doc.parts.map((p) => [p.kind, p.name])).to.deep.equal([
      ['message', 'Level0'],
      ['attachment', 'Level0-inner.eml'],
      ['attachment', 'Level1-inner.eml'],
      ['attachment', 'Level2-inner.eml'],
    ]);
    expect(doc.parts[3]!.blocks.at(-1)).to.deep.equal({ type: 'paragraph', text: 'Body of Level3' });
    expect(doc.parts[3]!.attachment?.format).to.equal('eml');

    const shallow = await readEml(eml, { ...DEFAULT_READ_LIMITS, maxMessageDepth: 1 }, { readAttachment });
    expect(shallow.parts.map((p) => [p.kind, p.name, p.blocks.length])).to.deep.equal([
      ['message', 'Level0', 2],
      ['attachment', 'Level0-inner.eml', 2],
      ['attachment', 'Level1-inner.eml', 0],
    ]);
    expect(calls, 'no nested message went to the attachment reader').to.deep.equal([]);
  });
});
