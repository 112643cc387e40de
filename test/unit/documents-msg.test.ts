import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { detectFormat } from '../../domain/documents/detect';
import { DEFAULT_READ_LIMITS, DocumentError, type DocPart } from '../../domain/documents/model';
import { readDocument } from '../../domain/documents/read';
import { readerFor } from '../../domain/documents/readers';
import type { AttachmentReader } from '../../domain/documents/readers/eml';
import { readMsg } from '../../domain/documents/readers/msg';
import { renderDocument } from '../../domain/documents/render';
import { buildMsg, buildCfb, type MsgSpec } from '../support/documents/msg-files';
import { buildDocx, tinyPng } from '../support/documents/office-files';

// Outlook items written by the test (test/support/documents/msg-files.ts), so every property is known.

/** Reads text attachments as one paragraph, lists everything else; records what it was handed. */
const calls: Array<{ filename: string; mime: string; depth: number; size: number }> = [];
const readAttachment: AttachmentReader = async ({ filename, mime, bytes, depth }) => {
  calls.push({ filename, mime, depth, size: bytes.byteLength });
  if (mime !== 'text/plain') return null;
  return [{ kind: 'document', blocks: [{ type: 'paragraph', text: Buffer.from(bytes).toString('utf8') }] }];
};

const SENT = new Date('2026-12-01T09:00:00Z');
const people: Pick<MsgSpec, 'senderName' | 'senderEmail' | 'recipients' | 'sent'> = {
  senderName: 'Ann Example',
  senderEmail: 'ann@example.org',
  recipients: [
    { email: 'bob@example.org' },
    { name: 'Carl', email: 'carl@example.org' },
    { email: 'dee@example.org', type: 2 },
  ],
  sent: SENT,
};

const formatOf = async (b: Uint8Array) => (await detectFormat(b, DEFAULT_READ_LIMITS))?.format ?? null;

describe('Outlook item reader (MSG, msgreader)', () => {
  beforeEach(() => (calls.length = 0));

  it('reads the sender, recipients, date and subject as the front block, and the HTML body with its structure', async () => {
    const msg = buildMsg({
      ...people,
      subject: 'Quarterly Résumé',
      body: 'Plain stand-in',
      html:
        '<html><head><style>p{}</style></head><body><h2>Agenda</h2><p>Café at <b>ten</b>.</p>' +
        '<ul><li>one</li><li>two<ol><li>deep</li></ol></li></ul>' +
        '<table><tr><th>K</th><th>V</th></tr><tr><td>a</td><td>1</td></tr></table></body></html>',
    });
    const doc = await readMsg(msg, DEFAULT_READ_LIMITS, { readAttachment });
    expect(doc.format).to.equal('msg');
    expect(doc.title).to.equal('Quarterly Résumé');
    expect(doc.author).to.equal('"Ann Example" <ann@example.org>');
    expect(doc.parts).to.have.length(1);
    expect(doc.parts[0]!.kind).to.equal('message');
    expect(doc.parts[0]!.blocks[0]).to.deep.equal({
      type: 'fields',
      fields: [
        ['From', '"Ann Example" <ann@example.org>'],
        ['To', 'bob@example.org, "Carl" <carl@example.org>'],
        ['Cc', 'dee@example.org'],
        ['Date', '2026-12-01T09:00:00.000Z'],
        ['Subject', 'Quarterly Résumé'],
      ],
    });
    expect(doc.parts[0]!.blocks.slice(1, 6)).to.deep.equal([
      { type: 'heading', level: 2, text: 'Agenda' },
      { type: 'paragraph', text: [{ text: 'Café at ' }, { text: 'ten', bold: true }, { text: '.' }] },
      { type: 'list_item', level: 0, ordered: false, text: 'one' },
      { type: 'list_item', level: 0, ordered: false, text: 'two' },
      { type: 'list_item', level: 1, ordered: true, number: 1, text: 'deep' },
    ]);
    const md = renderDocument(doc, { markdown: true }).markdown!;
    expect(md).to.include('## Agenda');
    expect(md).to.include('Café at **ten**.');
    expect(md)
      .to.match(/^- one$/m)
      .and.to.match(/^- two$/m)
      .and.to.match(/^ +1\. deep$/m);
    expect(md)
      .to.match(/^\| K +\| V +\|$/m)
      .and.to.match(/^\| a +\| 1 +\|$/m);
    expect(md).to.not.include('Plain stand-in');
  });

  it('reads the HTML body stored as a string property too (PidTagBodyHtml)', async () => {
    const msg = buildMsg({ subject: 'S', html: '<h1>Title</h1><p>Text</p>', htmlAs: 'unicode' });
    const doc = await readMsg(msg, DEFAULT_READ_LIMITS, { readAttachment });
    expect(doc.parts[0]!.blocks.slice(1)).to.deep.equal([
      { type: 'heading', level: 1, text: 'Title' },
      { type: 'paragraph', text: 'Text' },
    ]);
  });

  it('reads a plain-text body as paragraphs, an Exchange sender by its SMTP address, and a sent Bcc', async () => {
    const msg = buildMsg({
      subject: 'Notes',
      senderName: 'Ann Example',
      senderAddressType: 'EX',
      senderEmail: '/O=EXCHANGELABS/OU=EXCHANGE ADMINISTRATIVE GROUP/CN=RECIPIENTS/CN=ANN',
      senderSmtpAddress: 'ann@example.org',
      recipients: [{ email: 'bob@example.org' }, { name: 'Eve', email: 'eve@example.org', type: 3 }],
      body: 'First paragraph\r\nwraps here.\r\n\r\n> quoted reply\r\n',
    });
    const doc = await readMsg(msg, DEFAULT_READ_LIMITS, { readAttachment });
    expect(doc.parts[0]!.blocks).to.deep.equal([
      {
        type: 'fields',
        fields: [
          ['From', '"Ann Example" <ann@example.org>'],
          ['To', 'bob@example.org'],
          ['Bcc', '"Eve" <eve@example.org>'],
          ['Subject', 'Notes'],
        ],
      },
      { type: 'paragraph', text: 'First paragraph wraps here.' },
      { type: 'quote', text: 'quoted reply' },
    ]);
  });

  it('says a body stored only as compressed RTF is not read', async () => {
    const doc = await readMsg(buildMsg({ subject: 'R', compressedRtf: Buffer.from('LZFu....') }), DEFAULT_READ_LIMITS, {
      readAttachment,
    });
    expect(doc.parts[0]!.blocks[1]).to.deep.equal({
      type: 'paragraph',
      text: [{ text: 'The body of this message is stored only as compressed RTF, which is not read.', italic: true }],
    });
  });

  it('hands each attachment to the attachment reader and lists the ones it cannot read', async () => {
    const msg = buildMsg({
      subject: 'Files',
      body: 'See attached.',
      attachments: [
        { filename: 'notes.txt', mime: 'text/plain', data: Buffer.from('Attached notes, line one.') },
        { filename: 'blob.bin', data: Buffer.from([0, 1, 2, 3]) },
      ],
    });
    const doc = await readMsg(msg, DEFAULT_READ_LIMITS, { readAttachment });
    expect(doc.parts.slice(1)).to.deep.equal([
      {
        kind: 'attachment',
        name: 'notes.txt',
        blocks: [{ type: 'paragraph', text: 'Attached notes, line one.' }],
        attachment: { filename: 'notes.txt', mime: 'text/plain', size: 25 },
      },
      {
        kind: 'attachment',
        name: 'blob.bin',
        blocks: [],
        attachment: { filename: 'blob.bin', mime: 'application/octet-stream', size: 4 },
      },
    ]);
    expect(calls.map((c) => [c.filename, c.depth])).to.deep.equal([
      ['notes.txt', 0],
      ['blob.bin', 0],
    ]);
  });

  it('puts an inline cid: image into images, in its place in the HTML body, not among the attachments', async () => {
    const png = tinyPng();
    const msg = buildMsg({
      subject: 'Picture',
      html: '<p>Before</p><img src="cid:dot@example" alt="a dot"><p>After</p>',
      attachments: [{ filename: 'dot.png', mime: 'image/png', data: png, contentId: 'dot@example', hidden: true }],
    });
    const doc = await readMsg(msg, DEFAULT_READ_LIMITS, { readAttachment });
    expect(doc.images.map((i) => [i.name, i.mime])).to.deep.equal([['image-1.png', 'image/png']]);
    expect(Buffer.from(doc.images[0]!.data).equals(png)).to.equal(true);
    expect(doc.parts[0]!.blocks.slice(1)).to.deep.equal([
      { type: 'paragraph', text: 'Before' },
      { type: 'image', name: 'image-1.png', alt: 'a dot' },
      { type: 'paragraph', text: 'After' },
    ]);
    expect(doc.parts).to.have.length(1);
    expect(calls).to.deep.equal([]);
  });

  /** A message whose only attachment is `inner`, embedded (attach method 5). */
  const wrap = (subject: string, inner: MsgSpec): MsgSpec => ({
    subject,
    body: `Body of ${subject}`,
    attachments: [{ name: `${subject}-inner`, message: inner }],
  });

  it('reads embedded Outlook items three levels deep, and lists the ones past maxMessageDepth unread', async () => {
    const level3: MsgSpec = {
      subject: 'Level3',
      body: 'Body of Level3',
      attachments: [{ filename: 'deep.txt', mime: 'text/plain', data: Buffer.from('deep text') }],
    };
    const msg = buildMsg(wrap('Level0', wrap('Level1', wrap('Level2', level3))));
    const doc = await readMsg(msg, DEFAULT_READ_LIMITS, { readAttachment });
    expect(doc.parts.map((p) => [p.kind, p.name, p.attachment?.format])).to.deep.equal([
      ['message', 'Level0', undefined],
      ['attachment', 'Level0-inner.msg', 'msg'],
      ['attachment', 'Level1-inner.msg', 'msg'],
      ['attachment', 'Level2-inner.msg', 'msg'],
      ['attachment', 'deep.txt', undefined],
    ]);
    expect(doc.parts[1]!.blocks[0]).to.deep.equal({ type: 'fields', fields: [['Subject', 'Level1']] });
    expect(doc.parts[3]!.blocks.at(-1)).to.deep.equal({ type: 'paragraph', text: 'Body of Level3' });
    expect(doc.parts[4]!.blocks).to.deep.equal([{ type: 'paragraph', text: 'deep text' }]);
    expect(calls.map((c) => [c.filename, c.depth])).to.deep.equal([['deep.txt', 3]]);

    const shallow = await readMsg(msg, { ...DEFAULT_READ_LIMITS, maxMessageDepth: 1 }, { readAttachment });
    expect(shallow.parts.map((p) => [p.kind, p.name, p.blocks.length])).to.deep.equal([
      ['message', 'Level0', 2],
      ['attachment', 'Level0-inner.msg', 2],
      ['attachment', 'Level1-inner.msg', 0],
    ]);
    expect(shallow.parts[2]!.attachment).to.include({ format: 'msg', mime: 'application/vnd.ms-outlook' });
    expect(shallow.parts[2]!.attachment!.size).to.be.greaterThan(0);
  });

  it('refuses an attachment total above maxUncompressedBytes with 413 expansion_too_large', async () => {
    const msg = buildMsg({ subject: 'Big', attachments: [{ filename: 'a.bin', data: Buffer.alloc(5000, 1) }] });
    const err = await readMsg(msg, { ...DEFAULT_READ_LIMITS, maxUncompressedBytes: 4096 }, { readAttachment }).catch(
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(DocumentError);
    expect(err).to.include({ code: 'PAYLOAD_TOO_LARGE', reason: 'expansion_too_large' });
  });

  it('refuses a truncated or damaged compound file with 422 corrupt', async () => {
    const msg = buildMsg({ ...people, subject: 'Whole', body: 'x'.repeat(5000) });
    const truncated = msg.subarray(0, 1024);
    const damaged = Buffer.from(msg);
    damaged.fill(0xff, 512, 2048);
    const wordLike = buildCfb({ WordDocument: Buffer.from('x'.repeat(600)) });
    // The directory's sector chain points back at itself: msgreader alone never returns from such a file.
    const looped = Buffer.from(msg);
    const dirStart = looped.readUInt32LE(0x30);
    looped.writeUInt32LE(dirStart, 512 * (1 + looped.readUInt32LE(0x4c)) + dirStart * 4);
    for (const bytes of [truncated, damaged, looped, wordLike, Buffer.from('not a compound file at all')]) {
      const err = await readMsg(bytes, DEFAULT_READ_LIMITS, { readAttachment }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(DocumentError);
      expect(err).to.include({ code: 'UNPROCESSABLE_INPUT', reason: 'corrupt' });
    }
  });
});

describe('Outlook items among the compound files (detection)', () => {
  it('tells an Outlook item from Word, Excel and PowerPoint files', async () => {
    expect(await formatOf(buildMsg({ subject: 'S' }))).to.equal('msg');
    const x = Buffer.from('x'.repeat(600));
    expect(await formatOf(buildCfb({ WordDocument: x, '1Table': x, '\u0001CompObj': x }))).to.equal('doc');
    expect(await formatOf(buildCfb({ Workbook: x }))).to.equal('xls');
    expect(await formatOf(buildCfb({ 'PowerPoint Document': x, 'Current User': x }))).to.equal('ppt');
    // A Word file that embeds an Outlook item in its object pool is still a Word file.
    expect(await formatOf(buildCfb({ WordDocument: x, 'ObjectPool/_1/__substg1.0_0037001F': x }))).to.equal('doc');
  });

  it('takes an Outlook item carrying a Word document as an OLE attachment for an Outlook item', async () => {
    const x = Buffer.from('x'.repeat(600));
    const msg = buildMsg({
      subject: 'OLE',
      body: 'b',
      attachments: [{ name: 'Report.doc', ole: { WordDocument: x } }],
    });
    expect(await formatOf(msg)).to.equal('msg');
    // The OLE object reaches the attachment reader as the compound file it is, which detection calls a DOC.
    const doc = await readMsg(msg, DEFAULT_READ_LIMITS, { readAttachment });
    expect(doc.parts[1]).to.deep.include({ kind: 'attachment', name: 'Report.doc' });
    expect(calls).to.have.length(1);
    const handed = await readMsg(msg, DEFAULT_READ_LIMITS, {
      readAttachment: async ({ bytes }) => {
        expect(await formatOf(bytes)).to.equal('doc');
        return null;
      },
    });
    expect(handed.parts).to.have.length(2);
  });
});

describe('readDocument of an Outlook item', () => {
  it('reads a CSV and a DOCX attachment by their content as parts of their own', async () => {
    const docx = await buildDocx({
      body:
        '<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Quarterly figures</w:t></w:r></w:p>' +
        '<w:p><w:r><w:t>Revenue rose in every region.</w:t></w:r></w:p>',
      styles:
        '<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/>' +
        '<w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style>',
    });
    const msg = buildMsg({
      ...people,
      subject: 'The report',
      body: 'The report is attached.',
      attachments: [
        { filename: 'figures.csv', mime: 'text/csv', data: Buffer.from('region,revenue\nNorth,10\nSouth,12\n') },
        { filename: 'report.bin', data: docx },
      ],
    });
    const read = await readDocument(msg, DEFAULT_READ_LIMITS);
    if (read.kind !== 'model') throw new Error('an Outlook item is read, not routed');
    expect(read.model.format).to.equal('msg');
    const [message, csv, ...rest] = read.model.parts;
    expect(message!.blocks[1]).to.deep.equal({ type: 'paragraph', text: 'The report is attached.' });
    expect(csv).to.deep.include({ kind: 'attachment', name: 'figures.csv' });
    expect(csv!.attachment).to.include({ filename: 'figures.csv', mime: 'text/csv' });
    const table = csv!.blocks.find((b) => b.type === 'table');
    expect(table && table.type === 'table' && table.rows.map((r) => r.map((c) => c.text))).to.deep.equal([
      ['region', 'revenue'],
      ['North', '10'],
      ['South', '12'],
    ]);
    expect(rest[0]).to.deep.include({ kind: 'attachment', name: 'report.bin' });
    expect(rest.flatMap((p: DocPart) => p.blocks)).to.deep.include({
      type: 'heading',
      level: 1,
      text: 'Quarterly figures',
    });
    const md = renderDocument(read.model, { markdown: true }).markdown!;
    expect(md).to.include('## figures.csv').and.to.include('# Quarterly figures');
  });

  it('bounds .msg files attached as plain files by maxMessageDepth as well', async () => {
    let inner = buildMsg({ subject: 'Level3', body: 'Body of Level3' });
    for (const level of [2, 1, 0])
      inner = buildMsg({
        subject: `Level${level}`,
        body: `Body of Level${level}`,
        attachments: [{ filename: `level${level + 1}.msg`, data: inner }],
      });
    const read = await readDocument(inner, { ...DEFAULT_READ_LIMITS, maxMessageDepth: 2 });
    if (read.kind !== 'model') throw new Error('read, not routed');
    expect(read.model.parts.map((p) => [p.kind, p.name, p.blocks.length])).to.deep.equal([
      ['message', 'Level0', 2],
      ['attachment', 'level1.msg', 2],
      ['attachment', 'level2.msg', 2],
      ['attachment', 'level3.msg', 0],
    ]);
  });

  it('is a registered reader, attachments listed without content when read alone', async () => {
    const msg = buildMsg({
      subject: 'Alone',
      attachments: [{ filename: 'n.txt', mime: 'text/plain', data: Buffer.from('n') }],
    });
    const doc = await readerFor('msg')!(msg, DEFAULT_READ_LIMITS);
    expect(doc.parts.map((p) => [p.kind, p.name, p.blocks.length])).to.deep.equal([
      ['message', 'Alone', 1],
      ['attachment', 'n.txt', 0],
    ]);
  });
});

/** Items saved by Outlook, from msgreader's own tests (Apache-2.0, see licenses/README.md). */
const real = (name: string) => readFileSync(new URL(`../fixtures/msg/${name}`, import.meta.url));

describe('Outlook items saved by Outlook', () => {
  it('reads an item with an embedded item and a PNG attachment (msgInMsg.msg)', async () => {
    const read = await readDocument(real('msgInMsg.msg'), DEFAULT_READ_LIMITS);
    if (read.kind !== 'model') throw new Error('read, not routed');
    const [outer, inner, png] = read.model.parts;
    expect(read.model.parts).to.have.length(3);
    expect(outer!.blocks).to.deep.equal([
      {
        type: 'fields',
        fields: [
          ['Date', '2020-09-10T10:18:08.000Z'],
          ['Subject', 'I have attachments!'],
        ],
      },
      { type: 'paragraph', text: 'I have attachments!' },
    ]);
    expect(inner!.name).to.equal('Microsoft Outlook テスト メッセージ.msg');
    expect(inner!.attachment).to.include({ format: 'msg', mime: 'application/vnd.ms-outlook' });
    expect(inner!.blocks).to.deep.equal([
      {
        type: 'fields',
        fields: [
          ['From', '"Microsoft Outlook" <xmailuser@xmailserver.test>'],
          ['To', '"xmailuser" <xmailuser@xmailserver.test>'],
          ['Date', '2020-05-12T05:45:17.000Z'],
          ['Subject', 'Microsoft Outlook テスト メッセージ'],
        ],
      },
      {
        type: 'paragraph',
        text: 'この電子メール メッセージは、アカウントの設定のテスト中に、Microsoft Outlook から自動送信されたものです。',
      },
    ]);
    // A PNG attachment goes to the image pipeline, which this pure code does not run: listed, with its size.
    expect(png).to.deep.equal({
      kind: 'attachment',
      name: 'green.png',
      blocks: [],
      attachment: { filename: 'green.png', mime: 'image/png', size: 134 },
    });
  });

  it("decodes a non-Unicode item's strings in its locale's code page (nonUnicodeCP932.msg, Japanese)", async () => {
    const doc = await readMsg(real('nonUnicodeCP932.msg'), DEFAULT_READ_LIMITS, { readAttachment });
    expect(doc.title).to.equal('日本語 Non Unicode タイトル');
    expect(doc.parts[0]!.blocks).to.deep.equal([
      {
        type: 'fields',
        fields: [
          ['To', 'xmailuser2@xmailserver.test'],
          ['Date', '2021-11-05T10:25:17.000Z'],
          ['Subject', '日本語 Non Unicode タイトル'],
        ],
      },
      { type: 'paragraph', text: '日本語 Non Unicode 本文' },
    ]);
  });
});
