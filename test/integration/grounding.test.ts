import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import '../support/servers/stack';
import type { Stack } from '../support/servers/stack';
import { message, useLlmStack } from '../support/servers/llm-env';
import { fieldsIn, type LlmServer } from '../support/servers/llm-server';
import { okData as ok, postMultipart, postPdf } from '../support/clients/pdf-http';
import { buildPdf } from '../support/documents/pdf-factory';
import { chunkedRecording } from '../support/media/speech-samples';

// grounding=true (contract §14) on the real API, worker and Temporal dev server with the OpenAI-compatible test
// server as the model: the model's answers (invented ones among them) checked by the service against the text, the
// invented ones emptied and named, each kept one with its span; a PDF's values on their pages and boxes, a
// recording's in its seconds; the 400s where grounding cannot be honoured.

const INVOICE =
  'Malerbetrieb Kowalski\nLindenstraße 12, 79098 Freiburg\n\nRechnung Nr. 2025-0417\nFreiburg, den 22. April 2025\n\n' +
  'Gesamtbetrag: 1.369,10 €\n\nBitte überweisen Sie den Betrag auf unser Konto, IBAN DE12 6805 0101 0012 3456 78.';
const INVOICE_TEMPLATE =
  'Nummer: {{invoice_number|Die Rechnungsnummer}}\nDatum: {{invoice_date|Das Rechnungsdatum als JJJJ-MM-TT}}\n' +
  'Betrag: {{total|Der Gesamtbetrag}}\nIBAN: {{iban}}\nSteuernummer: {{tax_number|Die Steuernummer}}\n' +
  'Fällig: {{due_date|Das Fälligkeitsdatum als JJJJ-MM-TT}}';
/** What a small model answers: the stated values, and two it made up. */
const INVOICE_ANSWER = {
  invoice_number: '2025-0417',
  invoice_date: '2025-04-22',
  total: '1.369,10 €',
  iban: 'DE12680501010012345678',
  tax_number: 'DE 287 654 321',
  due_date: '2025-05-06',
};

describe('grounded templates on the real stack', function () {
  this.timeout(120_000);
  let s: Stack;
  let llm: LlmServer;
  useLlmStack((stack, server) => {
    s = stack;
    llm = server;
  });
  const answer = (fields: Record<string, unknown>) => llm.respond(() => ({ content: JSON.stringify(fields) }));

  it('empties and names the values the text does not hold, and says where each kept one stands', async () => {
    answer(INVOICE_ANSWER);
    const body = { text: INVOICE, template_content: INVOICE_TEMPLATE, source_language: 'de', grounding: true };
    const r = await s.call('POST', '/api/transformer/template', body);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const d = r.body.data;
    expect(d.unsupported_fields).to.deep.equal(['tax_number', 'due_date']);
    expect(d.template_fields).to.deep.include({ tax_number: '', due_date: '', invoice_number: '2025-0417' });
    expect(d.transformed_text).to.include('Steuernummer: \n').and.include('Datum: 2025-04-22');
    expect(d.template_sources.tax_number).to.equal(null);
    expect(d.template_sources.invoice_date).to.include({ text: '22. April 2025' });
    expect(d.template_sources.iban.text).to.equal('DE12 6805 0101 0012 3456 78');
    for (const [name, src] of Object.entries<any>(d.template_sources))
      if (src) expect(INVOICE.slice(src.start, src.end), name).to.equal(src.text);
    // The model was told to take the values from the text as written, in its language.
    const system = message(llm.chatRequests()[0], 'system');
    expect(system).to.include('Write every value in German (de)').and.include('copy names, numbers');

    // Without grounding the same request is another answer (its own cache entry), the invented values kept.
    const plain = await s.call('POST', '/api/transformer/template', { ...body, grounding: undefined });
    expect(plain.status).to.equal(200);
    expect(plain.body.data.template_fields.tax_number).to.equal('DE 287 654 321');
    expect(plain.body.data).to.not.have.property('template_sources');
  });

  it("places a PDF's values on their pages, with their blocks' boxes from the Markdown", async () => {
    answer({
      title: 'Harbour inspection notes',
      authors: ['Jane Doe'],
      date: '2026-05-01',
      document_type: 'inspection notes',
      publisher: 'Port Authority of Bremen',
      keywords: ['crane', 'ferry timetables', 'submarine'],
      summary: 'The crane on pier seven needs new cables, and the ferry timetables change in May.',
    });
    const pdf = buildPdf({
      title: 'Harbour',
      pages: [
        { kind: 'lines', lines: ['Harbour inspection notes', 'The crane on pier seven needs new cables.'] },
        { kind: 'lines', lines: ['Issued by the Port Authority of Bremen.', 'Ferry timetables change on 1 May 2026.'] },
      ],
    });
    const fields = { template: 'PdfMetadata', output_format: 'markdown', grounding: 'true' };
    const d = ok(await postPdf(s, fields, pdf));
    expect(d.unsupported_fields).to.deep.equal(['authors']);
    expect(d.template_fields.keywords).to.deep.equal(['crane', 'ferry timetables']);
    const src = d.template_sources;
    expect(src.title).to.include({ page: 1 });
    expect(src.publisher).to.include({ page: 2, text: 'Port Authority of Bremen' });
    expect(src.date).to.include({ page: 2, text: '1 May 2026' });
    expect(src.keywords.items.map((i: any) => i.page)).to.deep.equal([1, 2]);
    for (const f of ['title', 'publisher', 'date']) {
      const [x0, y0, x1, y1] = src[f].bbox;
      expect(x1, f).to.be.greaterThan(x0);
      expect(y1, f).to.be.greaterThan(y0);
    }
    // The page's box holds the value's: the publisher's line is below the page's first line.
    expect(src.date.bbox[1]).to.be.at.least(src.publisher.bbox[1]);
    for (const [name, v] of Object.entries<any>(src))
      if (v) expect(d.markdown.slice(v.start, v.end), name).to.equal(v.text);
  });

  it("checks a document's values against its text, each on its part", async () => {
    answer({ title: 'Tide tables for the Weser', authors: ['Hannes Brandt'], publisher: 'Wasserstraßenamt Bremen' });
    const md = '# Tide tables for the Weser\n\nPublished by the Wasserstraßenamt Bremen for the 2026 season.\n';
    const r = await postMultipart(
      `${s.url}/api/document/process`,
      { template: 'PdfMetadata', grounding: 'true' },
      { bytes: Buffer.from(md), name: 'tides.md', type: 'text/markdown' },
    );
    const d = ok(r);
    expect(d.unsupported_fields).to.deep.equal(['authors']);
    expect(d.template_fields).to.deep.include({ authors: [], publisher: 'Wasserstraßenamt Bremen' });
    expect(d.template_sources.publisher).to.include({ text: 'Wasserstraßenamt Bremen', page: 1 });
    expect(d.template_sources.title).to.include({ page: 1 });
  });

  it('refuses grounding, naming it, where it cannot be honoured', async () => {
    const expect400 = (r: { status: number; body: any }) => {
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_ERROR');
      expect(JSON.stringify(r.body.error.details.issues)).to.contain('grounding');
    };
    // Values asked in another language than the text's: no span of the text holds a translation.
    expect400(
      await s.call('POST', '/api/transformer/template', {
        text: INVOICE,
        template_content: INVOICE_TEMPLATE,
        source_language: 'de',
        target_language: 'en',
        grounding: true,
      }),
    );
    // No template to ground.
    expect400(await postPdf(s, { grounding: 'true' }, buildPdf({ pages: [{ kind: 'lines', lines: ['x'] }] })));
    // Operations without templates to check.
    expect400(await s.call('POST', '/api/transformer/text', { text: 'x', target_language: 'en', grounding: true }));
    expect400(
      await s.call('POST', '/api/jobs/', {
        job_type: 'transformer',
        parameters: { operation: 'summarize', text: 'x', grounding: true },
      }),
    );
    expect(llm.chatRequests()).to.have.length(0);
  });

  describe('a recording', () => {
    let dir: string;
    let wav: Buffer;
    before(async function () {
      this.timeout(120_000);
      dir = mkdtempSync(path.join(os.tmpdir(), 'grounding-audio-'));
      wav = readFileSync((await chunkedRecording(dir)).file);
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('gives each value the seconds it was said in, and empties what was never said', async function () {
      this.timeout(300_000);
      // The model quotes the transcript's third and fourth words, and makes up a speaker.
      llm.respond((req) => {
        const user = message(req, 'user');
        const text = user.slice(user.indexOf('"""') + 3, user.lastIndexOf('"""')).trim();
        const words = text.split(/\s+/);
        const out: Record<string, unknown> = Object.fromEntries(fieldsIn(user).map((f) => [f, '']));
        const [first, second] = Object.keys(out);
        out[first!] = words
          .slice(2, 4)
          .join(' ')
          .replace(/[.,!?]$/, '');
        out[second!] = 'Professor Zacharias Quimby';
        return { content: JSON.stringify(out) };
      });
      const r = await postMultipart(
        `${s.url}/api/audio/process`,
        { source_language: 'en', target_language: 'en', template: 'VideoSummary', grounding: 'true' },
        { bytes: wav, name: 'talk.wav', type: 'audio/wav' },
      );
      const d = ok(r);
      const [first, second] = Object.keys(d.template_sources);
      expect(d.unsupported_fields).to.include(second);
      expect(d.template_sources[second!]).to.equal(null);
      const src = d.template_sources[first!];
      expect(src, JSON.stringify(d.template_sources)).to.be.an('object');
      expect(d.original_text.slice(src.start, src.end)).to.equal(src.text);
      // Said in the first sentence: within its segment's time.
      expect(src.start_s).to.be.at.least(d.segments[0].start - 0.01);
      expect(src.end_s).to.be.greaterThan(src.start_s);
      expect(src.end_s).to.be.at.most(d.segments[0].end + 0.01);
    });
  });
});
