import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { startStack, type Stack } from '../support/servers/stack';
import { libreOfficePath } from '../../core/config/config';
import { LibreOfficeEngine } from '../../providers/office/libreoffice';
import { flatOdf, flatSheets, pframe } from '../support/documents/flat-odf';
import { emlWithAttachments } from '../support/documents/mail-files';
import { buildDocx, tinyPng, wp, wpic, wtc, zipOf } from '../support/documents/office-files';
import { buildPdf } from '../support/documents/pdf-factory';
import { okData, postMultipart, postPdf } from '../support/clients/pdf-http';
import { llmEnv } from '../support/servers/llm-env';
import { startLlmServer, type LlmServer } from '../support/servers/llm-server';
import { startWebhookReceiver } from '../support/servers/webhook-receiver';

// POST /api/document/process and job_type `document` (contract §12) on the real API, worker, Temporal dev server,
// LibreOffice, poppler and tesseract. The documents are written by the real LibreOffice from flat ODF the test
// writes (DOCX, DOC, XLSX, XLS, PPTX, a password-protected ODT), so every heading, cell and slide is known.

const REPORT = flatOdf(
  'text',
  '<office:text><text:h text:outline-level="1">Quarterly report</text:h>' +
    '<text:p>Revenue grew in every region this quarter.</text:p>' +
    '<text:h text:outline-level="2">Regions</text:h>' +
    '<text:list><text:list-item><text:p>North</text:p></text:list-item>' +
    '<text:list-item><text:p>South</text:p></text:list-item></text:list>' +
    '<table:table table:name="T"><table:table-column table:number-columns-repeated="2"/>' +
    '<table:table-row><table:table-cell><text:p>Region</text:p></table:table-cell>' +
    '<table:table-cell><text:p>Sales</text:p></table:table-cell></table:table-row>' +
    '<table:table-row><table:table-cell><text:p>North</text:p></table:table-cell>' +
    '<table:table-cell><text:p>120</text:p></table:table-cell></table:table-row></table:table>' +
    '<text:p>Prepared by the finance team.</text:p></office:text>',
  '',
  '<dc:title>Q3 report</dc:title>',
);

const SHEETS = flatSheets({
  Prices: [
    ['Fruit', 'Price'],
    ['Quince', 4.25],
    ['Medlar', 7.5],
  ],
  Stock: [
    ['Fruit', 'Crates'],
    ['Quince', 12],
  ],
});

const SLIDES = flatOdf(
  'presentation',
  '<office:presentation>' +
    ['Opening Gambit', 'Middle Game', 'Closing Argument']
      .map(
        (t, i) =>
          `<draw:page draw:name="s${i + 1}" draw:master-page-name="Default">` +
          pframe('title', 1, `<text:p>${t}</text:p>`) +
          pframe('outline', 5, `<text:p>Point ${i + 1}</text:p>`) +
          '</draw:page>',
      )
      .join('') +
    '</office:presentation>',
  '<style:style style:name="pr1" style:family="presentation"/>',
);

const MIME = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  doc: 'application/msword',
  xls: 'application/vnd.ms-excel',
  odt: 'application/vnd.oasis.opendocument.text',
};

describe('the document endpoint (real LibreOffice, poppler, tesseract and Temporal)', function () {
  this.timeout(180_000);
  let s: Stack;
  let dir: string;
  let engine: LibreOfficeEngine;
  let llm: LlmServer;
  const files: Record<string, Buffer> = {};

  const post = (fields: Record<string, string>, name: keyof typeof files | string, bytes?: Buffer) =>
    postMultipart(`${s.url}/api/document/process`, fields, {
      bytes: bytes ?? files[name],
      name,
      type: MIME[path.extname(name).slice(1) as keyof typeof MIME] ?? 'application/octet-stream',
    });

  before(async function () {
    this.timeout(300_000);
    const soffice = libreOfficePath({ LIBREOFFICE_PATH: process.env.LIBREOFFICE_PATH });
    if (!existsSync(soffice)) throw new Error(`no LibreOffice at ${soffice}: run the project's setup (npm test does)`);
    dir = await mkdtemp(path.join(os.tmpdir(), 'document-endpoint-'));
    await writeFile(path.join(dir, 'report.fodt'), REPORT);
    await writeFile(path.join(dir, 'prices.fods'), SHEETS);
    await writeFile(path.join(dir, 'talk.fodp'), SLIDES);
    // The test's own LibreOffice writes the inputs; the worker runs its own.
    engine = new LibreOfficeEngine({ sofficePath: soffice, scratchDir: dir, slots: 1 });
    const write = async (
      src: string,
      name: string,
      target: 'docx' | 'doc' | 'xlsx' | 'xls' | 'pptx' | 'ppt' | 'odt',
    ) => {
      const output = path.join(dir, name);
      await engine.convertTo({
        input: path.join(dir, src),
        output,
        target,
        ...(name === 'locked.odt' ? { encryptionPassword: 'hunter2' } : {}),
      });
      files[name] = await readFile(output);
    };
    await write('report.fodt', 'report.docx', 'docx');
    await write('report.fodt', 'report.doc', 'doc');
    await write('report.fodt', 'locked.odt', 'odt');
    await write('prices.fods', 'prices.xlsx', 'xlsx');
    await write('prices.fods', 'prices.xls', 'xls');
    await write('talk.fodp', 'talk.pptx', 'pptx');
    await write('talk.fodp', 'talk.ppt', 'ppt');
    await engine.close();
    llm = await startLlmServer();
    s = await startStack({ ...llmEnv(llm), INPUT_ROOTS: dir });
  });

  after(async () => {
    await engine?.close();
    await s?.stop();
    await llm?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('reads a DOCX into Markdown with its headings, list and table, and its metadata', async () => {
    const r = await post({ output_format: 'markdown' }, 'report.docx');
    const d = okData(r);
    expect(d.metadata).to.include({ format: 'docx', title: 'Q3 report', page_count: 1 });
    expect(d.markdown).to.include('# Quarterly report\n').and.include('## Regions\n');
    expect(d.markdown)
      .to.match(/^- North$/m)
      .and.match(/^- South$/m);
    expect(d.markdown)
      .to.match(/^\| Region \| Sales \|$/m)
      .and.match(/^\| North \| 120 \|$/m);
    expect(d.extracted_text).to.include('Revenue grew in every region').and.include('Prepared by the finance team.');
    expect(d.extracted_text, 'the text carries no Markdown marks').to.not.include('# Quarterly');
    expect(d.metadata.text_contents).to.have.length(1);
    expect(d.metadata.text_contents[0]).to.include({ page: 1, part: 'document' });
    // Its pages are LibreOffice's to lay out: a range over them asks for render, which reads page by page.
    const range = await post({ page_start: '2' }, 'report.docx');
    expect(range.status, JSON.stringify(range.body)).to.equal(400);
    expect(range.body.error.message).to.include('extraction_method=render');
    expect(d).to.include({ images_archive_filename: null, images_archive_data: null });
    expect(r.headers.get('x-cache')).to.equal('miss');
    // The same document again: the result cache answers, the same data.
    const again = await post({ output_format: 'markdown' }, 'report.docx');
    expect(again.headers.get('x-cache')).to.equal('hit');
    expect(okData(again)).to.deep.equal(d);
  });

  it('gives a table whose cells span as HTML in the Markdown, as GFM with table_format=gfm, and refuses other formats', async () => {
    const table =
      '<w:tbl><w:tblGrid><w:gridCol/><w:gridCol/><w:gridCol/></w:tblGrid>' +
      `<w:tr>${wtc('Region')}${wtc('Sales', '<w:gridSpan w:val="2"/>')}</w:tr>` +
      `<w:tr>${wtc('North')}${wtc('Q1')}${wtc('10')}</w:tr></w:tbl>`;
    const docx = await buildDocx({ body: wp('Sales by region.') + table });
    const html = okData(await post({ output_format: 'markdown' }, 'spans.docx', docx));
    expect(html.markdown).to.include('<table>').and.include('colspan="2"');
    const gfm = okData(await post({ output_format: 'markdown', table_format: 'gfm' }, 'spans.docx', docx));
    // Not the first answer's cache entry: the spanning cell's text repeated into both cells it covers.
    expect(gfm.markdown).to.not.include('<table>');
    expect(gfm.markdown).to.include('| Region | Sales | Sales |').and.include('| North | Q1 | 10 |');
    const r = await post({ output_format: 'markdown', table_format: 'html' }, 'spans.docx', docx);
    expect(r.status, JSON.stringify(r.body)).to.equal(400);
    expect(r.body.error.code).to.equal('VALIDATION_ERROR');
    expect(JSON.stringify(r.body.error)).to.include('table_format').and.include('html');
  });

  it('puts the embedded images in the images archive with includeImages, in place in the Markdown', async () => {
    const docx = await buildDocx({
      body: wp('A picture follows.') + `<w:p>${wpic('rIdImg', 'A chart')}</w:p>`,
      rels: [{ id: 'rIdImg', type: 'image', target: 'media/chart.png' }],
      media: { 'chart.png': tinyPng() },
    });
    const d = okData(await post({ includeImages: 'true', output_format: 'markdown' }, 'chart.docx', docx));
    expect(d.metadata.image_paths).to.have.length(1);
    const name = d.metadata.image_paths[0];
    expect(d.markdown).to.include(name);
    expect(d.images_archive_filename).to.match(/-images\.zip$/);
    const zip = Buffer.from(d.images_archive_data, 'base64');
    expect(zip.subarray(0, 4).toString('latin1')).to.equal('PK\u0003\u0004');
    expect(zip.includes(tinyPng()), 'the image, stored as it is').to.equal(true);
    expect(zip.includes(Buffer.from(name)), 'under its name').to.equal(true);
  });

  it('fills a template from the document’s text with the model (its call in the job’s llm_info)', async () => {
    llm.reset();
    const r = await postMultipart(
      `${s.url}/api/document/process`,
      { template: 'PdfMetadata' },
      { bytes: files['report.docx'], name: 'report.docx', type: MIME.docx },
      { Prefer: 'respond-async' },
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    const job = await s.waitJob(r.body.data.job_id, 120_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    expect(job.results.extracted_text).to.include('# title value').and.not.include('{{');
    expect(job.results.metadata).to.include({ format: 'docx', page_count: 1 });
    expect(job.results.llm_info.requests.map((q: { purpose: string }) => q.purpose)).to.include('template');
    expect(JSON.stringify(llm.chatRequests()[0].json.messages)).to.include('Revenue grew in every region');
  });

  it('reads a binary DOC through LibreOffice with the same structure', async () => {
    const d = okData(await post({ output_format: 'markdown' }, 'report.doc'));
    expect(d.metadata.format).to.equal('doc');
    expect(d.markdown).to.include('# Quarterly report\n').and.include('## Regions\n');
    expect(d.markdown).to.match(/^\| North \| 120 \|$/m);
  });

  it('reads every sheet of an XLSX and an XLS as a part with its values, and a page range of sheets', async () => {
    for (const name of ['prices.xlsx', 'prices.xls']) {
      const d = okData(await post({ output_format: 'markdown' }, name));
      expect(d.metadata.format).to.equal(path.extname(name).slice(1));
      expect(d.metadata.page_count).to.equal(2);
      expect(d.metadata.text_contents.map((c: any) => [c.part, c.name])).to.deep.equal([
        ['sheet', 'Prices'],
        ['sheet', 'Stock'],
      ]);
      expect(d.metadata.text_contents[0].markdown).to.match(/\| Quince \| 4\.25 \|/);
      expect(d.metadata.text_contents[0].markdown).to.match(/\| Medlar \| 7\.5 \|/);
    }
    const second = okData(await post({ page_start: '2' }, 'prices.xlsx'));
    expect(second.metadata.text_contents.map((c: any) => c.name)).to.deep.equal(['Stock']);
    expect(second.extracted_text).to.include('12').and.not.include('Medlar');
    const past = await post({ page_start: '3' }, 'prices.xlsx');
    expect(past.status, JSON.stringify(past.body)).to.equal(400);
    expect(past.body.error.code).to.equal('VALIDATION_ERROR');
  });

  it('reads a PPTX slide by slide in order, with each slide’s title', async () => {
    const d = okData(await post({ output_format: 'markdown' }, 'talk.pptx'));
    expect(d.metadata).to.include({ format: 'pptx', page_count: 3 });
    expect(d.metadata.text_contents.map((c: any) => [c.part, c.name])).to.deep.equal([
      ['slide', 'Opening Gambit'],
      ['slide', 'Middle Game'],
      ['slide', 'Closing Argument'],
    ]);
    expect(d.metadata.text_contents[1].text).to.include('Point 2');
  });

  it('reads a PPT and an RTF through LibreOffice: the slides in order, the RTF’s bold and paragraphs', async () => {
    const ppt = okData(await post({}, 'talk.ppt'));
    expect(ppt.metadata).to.include({ format: 'ppt', page_count: 3 });
    // Every slide in order with its title's text. (LibreOffice's own PPT of these slides keeps the title placeholder
    // on the first slide only: the others' titles arrive as text boxes, so only the first part is named.)
    expect(ppt.metadata.text_contents.map((c: any) => c.part)).to.deep.equal(['slide', 'slide', 'slide']);
    expect(ppt.metadata.text_contents[0].name).to.equal('Opening Gambit');
    ['Opening Gambit', 'Middle Game', 'Closing Argument'].forEach((t, i) =>
      expect(ppt.metadata.text_contents[i].text)
        .to.include(t)
        .and.include(`Point ${i + 1}`),
    );
    const rtf = Buffer.from(
      '{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0 Arial;}}\\f0\\pard Minutes of the {\\b annual} meeting.\\par\n' +
        '\\pard The budget was approved.\\par\n}',
    );
    const d = okData(await post({ output_format: 'markdown' }, 'minutes.rtf', rtf));
    expect(d.metadata.format).to.equal('rtf');
    expect(d.markdown).to.include('Minutes of the **annual** meeting.').and.include('The budget was approved.');
  });

  it('renders a DOCX to PDF with extraction_method=render and reads it by the PDF path', async () => {
    const d = okData(await post({ extraction_method: 'render' }, 'report.docx'));
    expect(d.metadata.format).to.equal('docx');
    expect(d.metadata.page_count).to.equal(1);
    expect(d.metadata.text_contents[0]).to.include({ page: 1, method: 'native' });
    expect(d.extracted_text).to.include('Quarterly report').and.include('Revenue grew in every region');
    const bad = await post({ extraction_method: 'ocr' }, 'report.docx');
    expect(bad.status).to.equal(400);
    expect(JSON.stringify(bad.body.error)).to.include('extraction_method');
    const orphan = await post({ render_method: 'local_ocr' }, 'report.docx');
    expect(orphan.status).to.equal(400);
    expect(JSON.stringify(orphan.body.error)).to.include('render_method');
  });

  it('answers a PDF exactly as /api/pdf/process does, and an image as image OCR does', async () => {
    const pdf = buildPdf({ pages: [{ kind: 'lines', lines: ['Routed to the PDF pipeline.'] }] });
    const viaDocument = okData(await post({}, 'routed.pdf', pdf));
    const viaPdf = okData(await postPdf(s, {}, pdf));
    expect(viaDocument).to.deep.equal(viaPdf);
    expect(viaDocument.metadata).to.not.have.property('format');

    // A page of that PDF rendered by poppler: a PNG read by tesseract.
    await writeFile(path.join(dir, 'ocr.pdf'), pdf);
    execFileSync('pdftoppm', ['-png', '-r', '200', '-singlefile', path.join(dir, 'ocr.pdf'), path.join(dir, 'ocr')]);
    const image = okData(await post({}, 'page.png', await readFile(path.join(dir, 'ocr.png'))));
    expect(image.extracted_text).to.match(/Routed to the PDF/);
    expect(image.metadata.format).to.match(/png/i);
    expect(image.metadata).to.have.property('confidence');
    expect(image).to.not.have.property('markdown');
    // With output_format=markdown the image's Markdown and blocks, as image OCR gives them (in its pixels).
    const md = okData(await post({ output_format: 'markdown' }, 'page.png', await readFile(path.join(dir, 'ocr.png'))));
    expect(md.markdown).to.match(/Routed to the PDF pipeline/);
    expect(md.blocks.map((b: { type: string }) => b.type)).to.deep.equal(['paragraph']);
    expect(md.blocks[0].bbox[2]).to.be.within(md.blocks[0].bbox[0], md.metadata.width);
  });

  it('reads an e-mail with its header block, its body and a PDF attachment read by the PDF path', async () => {
    const pdf = buildPdf({ pages: [{ kind: 'lines', lines: ['Invoice 4711 is attached.'] }] });
    const eml = emlWithAttachments({
      from: 'Ada <ada@example.org>',
      to: 'Bob <bob@example.org>',
      subject: 'The invoice',
      date: 'Tue, 01 Dec 2026 10:00:00 +0000',
      html: '<h1>Hello Bob</h1><p>Please find the <b>invoice</b> attached.</p><ul><li>one</li><li>two</li></ul>',
      attachments: [
        { filename: 'invoice.pdf', type: 'application/pdf', bytes: pdf },
        { filename: 'prices.csv', type: 'text/csv', bytes: Buffer.from('Item,Price\r\nQuince,4.25\r\n') },
      ],
    });
    const d = okData(await post({ output_format: 'markdown' }, 'mail.eml', eml));
    expect(d.metadata).to.include({ format: 'eml' });
    expect(d.metadata.text_contents.map((c: any) => [c.part, c.name ?? null])).to.deep.equal([
      ['message', 'The invoice'],
      ['attachment', 'invoice.pdf'],
      ['attachment', 'prices.csv'],
    ]);
    const [message, invoice, prices] = d.metadata.text_contents;
    expect(message.markdown)
      .to.include('ada@example.org')
      .and.include('# Hello Bob')
      .and.match(/^- one$/m);
    expect(invoice.text).to.include('Invoice 4711 is attached.');
    expect(prices.markdown).to.match(/\| Quince \| 4\.25 \|/);
  });

  it('refuses a format it does not read with 400 INVALID_FORMAT and the supported list, by content not name', async () => {
    const r = await post({}, 'song.docx', Buffer.from('ID3\u0003\u0000\u0000\u0000\u0000\u0000\u0000 not a document'));
    expect(r.status, JSON.stringify(r.body)).to.equal(400);
    expect(r.body.error.code).to.equal('INVALID_FORMAT');
    expect(r.body.error.details.supported_formats).to.include.members(['docx', 'doc', 'xls', 'ppt', 'rtf', 'pdf']);
    const zip = await zipOf({ 'hello.txt': 'not an office file' });
    const z = await post({}, 'archive.docx', zip);
    expect(z.status, JSON.stringify(z.body)).to.equal(400);
    expect(z.body.error.code).to.equal('INVALID_FORMAT');
  });

  it('refuses a password-protected and a corrupt document with 422 and its reason', async () => {
    const locked = await post({}, 'locked.odt');
    expect(locked.status, JSON.stringify(locked.body)).to.equal(422);
    expect(locked.body.error.code).to.equal('UNPROCESSABLE_INPUT');
    expect(locked.body.error.details.reason).to.match(/encrypted|password_protected/);
    const truncated = await post({}, 'cut.docx', files['report.docx'].subarray(0, 1500));
    expect(truncated.status, JSON.stringify(truncated.body)).to.equal(422);
    expect(truncated.body.error.details.reason).to.equal('corrupt');
  });

  it('refuses a zip bomb with 413 while inflating it, and a billion-laughs XML without expanding it', async () => {
    // 64 MiB of spaces in word/document.xml: about 64 KiB compressed, past the ratio bound of 200.
    const bomb = await buildDocx({ body: `${wp('x')}${' '.repeat(64 * 1024 * 1024)}` });
    expect(bomb.length).to.be.below(1024 * 1024);
    const r = await post({}, 'bomb.docx', bomb);
    expect(r.status, JSON.stringify(r.body)).to.equal(413);
    expect(r.body.error.code).to.equal('PAYLOAD_TOO_LARGE');
    expect(r.body.error.details.reason).to.equal('compression_ratio');
    const laughs =
      '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">' +
      Array.from({ length: 8 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`).join('') +
      ']>';
    const xml = await zipOf({
      '[Content_Types].xml': '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
      'word/document.xml': `${laughs}<w:document><w:body><w:p><w:r><w:t>&lol8;</w:t></w:r></w:p></w:body></w:document>`,
    });
    const x = await post({}, 'laughs.docx', xml);
    expect(x.status, JSON.stringify(x.body)).to.equal(422);
    expect(x.body.error.code).to.equal('UNPROCESSABLE_INPUT');
  });

  it('refuses a form field it does not take, naming it', async () => {
    const r = await post({ source_language: 'de' }, 'report.docx');
    expect(r.status).to.equal(400);
    expect(JSON.stringify(r.body.error)).to.include('source_language');
  });

  it('runs job_type document through /api/jobs/ for a file inside INPUT_ROOTS, with its webhook, and refuses one outside', async () => {
    const hook = await startWebhookReceiver();
    try {
      const file = path.join(dir, 'inbox', 'talk.pptx');
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, files['talk.pptx']);
      const created = await s.call('POST', '/api/jobs/', {
        job_type: 'document',
        parameters: { filename: file, output_format: 'markdown' },
        webhook: { url: `${hook.url}/done` },
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(200);
      const job = await s.waitJob(created.body.data.job_id, 120_000);
      expect(job.status, JSON.stringify(job.error)).to.equal('completed');
      expect(job.results.markdown).to.include('Closing Argument');
      await hook.waitFor((rs) => rs.some((q) => q.json?.phase === 'completed'));
      const outside = await s.call('POST', '/api/jobs/', {
        job_type: 'document',
        parameters: { filename: '/etc/hostname' },
      });
      // Accepted as any job naming a path; the job refuses a file outside INPUT_ROOTS without reading it.
      expect(outside.status, JSON.stringify(outside.body)).to.equal(200);
      const refused = await s.waitJob(outside.body.data.job_id, 60_000);
      expect(refused.status).to.equal('failed');
      expect(refused.error.code).to.equal('FORBIDDEN');
    } finally {
      await hook.close();
    }
  });

  it('runs document jobs in a batch, and posts a multipart request’s webhook', async () => {
    const hook = await startWebhookReceiver();
    try {
      const inbox = path.join(dir, 'inbox');
      await mkdir(inbox, { recursive: true });
      await writeFile(path.join(inbox, 'b1.xlsx'), files['prices.xlsx']);
      await writeFile(path.join(inbox, 'b2.docx'), files['report.docx']);
      const b = await s.call('POST', '/api/jobs/batch', {
        batch_name: 'documents',
        jobs: ['b1.xlsx', 'b2.docx'].map((f) => ({
          job_type: 'document',
          parameters: { filename: path.join(inbox, f) },
        })),
      });
      expect(b.status, JSON.stringify(b.body)).to.equal(200);
      const ids: string[] = b.body.data.batch.jobs.map((j: { job_id: string }) => j.job_id);
      const formats = [];
      for (const id of ids) {
        const job = await s.waitJob(id, 120_000);
        expect(job.status, JSON.stringify(job.error)).to.equal('completed');
        formats.push(job.results.metadata.format);
      }
      expect(formats).to.deep.equal(['xlsx', 'docx']);

      const r = await post({ webhook: JSON.stringify({ url: `${hook.url}/doc`, jobId: 'form-hook' }) }, 'report.docx');
      expect(okData(r).metadata.format).to.equal('docx');
      await hook.waitFor((rs) => rs.some((q) => q.json?.job?.id === 'form-hook' && q.json?.phase === 'completed'));
      const bad = await post({ webhook: '{"url": 7}' }, 'report.docx');
      expect(bad.status).to.equal(400);
      expect(JSON.stringify(bad.body.error)).to.include('webhook');
    } finally {
      await hook.close();
    }
  });

  it('answers 202 with the job id at once with Prefer: respond-async', async () => {
    const r = await postMultipart(
      `${s.url}/api/document/process`,
      {},
      { bytes: files['prices.xlsx'], name: 'p.xlsx', type: MIME.xlsx },
      { Prefer: 'respond-async' },
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    const job = await s.waitJob(r.body.data.job_id, 120_000);
    expect(job.status).to.equal('completed');
    expect(job.results.metadata.format).to.equal('xlsx');
  });
});
