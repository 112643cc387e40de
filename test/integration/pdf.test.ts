import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { useStack, type Stack } from '../support/servers/stack';
import { useLlmStack } from '../support/servers/llm-env';
import type { LlmServer } from '../support/servers/llm-server';
import {
  buildPdf,
  corruptPdf,
  rasterize,
  scannedPdf,
  upsideDownScanPdf,
  wrapText,
} from '../support/documents/pdf-factory';
import { accuracy } from '../support/documents/accuracy';
import { okData as ok, postPdf } from '../support/clients/pdf-http';

// POST /api/pdf/process (spec §4.2, contract §6) on the real API and worker, over loopback HTTP, on a Temporal dev
// server; real pdf.js, poppler and tesseract. Error cases and /api/pdf/job are in pdf-errors.test.ts.

const GERMAN =
  'Über die Brücke gingen früh am Morgen zwei ältere Männer, die sich über das schöne Wetter freuten. ' +
  'Sie trugen schwere Körbe voller Äpfel, Birnen und süßer Pflaumen zum Markt in der Stadtmitte. ' +
  'Dort öffneten die Händler gerade ihre Stände, während aus der Bäckerei der Duft von frischem Brot ' +
  'über den Platz zog. Ein Mädchen zählte die Münzen in ihrer Geldbörse und überlegte, ob sie Blumen ' +
  'für ihre Großmutter kaufen sollte.';
const SCANNED_MIDDLE =
  'Die zweite Seite wurde eingescannt und enthält nur Pixel. Größere Änderungen folgen später im Jahr.';

const PAGES = [
  ['Grüße aus Köln', 'Äpfel, Öl und Übermut: äöü ÄÖÜ ß'],
  ['Seite zwei: Straße und Maß'],
  ['Seite drei beginnt hier', 'und endet mit „Zitat“ – 12,50 €'],
  ['Letzte Seite, Schluss.'],
];
const FOUR_PAGES = buildPdf({
  title: 'Jahresbericht Größe & Maß',
  author: 'Jörg Müller',
  pages: PAGES.map((lines) => ({ kind: 'lines' as const, lines })),
});

/** Page 1: one short line of text and no image; page 2: a scan of text; page 3: nothing at all. */
async function shortTextThenScan(): Promise<Buffer> {
  const scanSource = buildPdf({
    pages: [{ kind: 'lines', lines: wrapText(SCANNED_MIDDLE, 70), size: 12, leading: 16 }],
  });
  return buildPdf({
    pages: [
      { kind: 'lines', lines: ['Native text page'] },
      { kind: 'image', image: await rasterize(scanSource, 300), dpi: 300 },
      { kind: 'lines', lines: [] },
    ],
  });
}

/** `combined` takes the text layer of pages without an image, however short or empty, and OCRs the scan. */
function expectShortTextThenScan(data: {
  metadata: { text_contents: { page: number; text: string; method: string }[] };
}): void {
  const contents = data.metadata.text_contents;
  expect(contents.map((c) => c.method)).to.deep.equal(['native', 'local_ocr', 'native']);
  expect(contents[0]).to.deep.equal({ page: 1, text: 'Native text page', method: 'native' });
  expect(contents[2]).to.deep.equal({ page: 3, text: '', method: 'native' });
  expect(accuracy(SCANNED_MIDDLE, contents[1].text)).to.be.at.least(0.95);
}

const LEFT = [
  'Die linke Spalte beginnt hier mit',
  'einem Absatz über mehrere Zeilen,',
  'der zuerst gelesen werden muss.',
];
const RIGHT = ['The right column follows after', 'the left one and shares its', 'baselines with the left column.'];

describe('PDF processing on the real engine', function () {
  this.timeout(90_000);
  let s: Stack;
  useStack((stack) => (s = stack));

  describe('native extraction', () => {
    it('extracts umlauts exactly, one text_contents entry per page in order, with page count, title and author', async () => {
      const data = ok(await postPdf(s, {}, FOUR_PAGES));
      expect(data.extracted_text).to.equal(PAGES.map((l) => l.join('\n')).join('\n\n'));
      expect(data.metadata).to.include({ page_count: 4, title: 'Jahresbericht Größe & Maß', author: 'Jörg Müller' });
      expect(data.metadata.text_contents).to.deep.equal(
        PAGES.map((lines, i) => ({ page: i + 1, text: lines.join('\n'), method: 'native' })),
      );
      expect(data.images_archive_data).to.equal(null);
    });

    it('takes text fields sent as typed parts without a filename (RFC 7578), as generated clients send them', async () => {
      // curl -F file=@doc.pdf -F "extraction_method=native;type=text/plain" -F "page_start=2;type=text/plain;
      // charset=utf-8" …
      const boundary = 'typed-fields-7578';
      const part = (headers: string, body: string | Buffer) =>
        Buffer.concat([Buffer.from(`--${boundary}\r\n${headers}\r\n\r\n`), Buffer.from(body), Buffer.from('\r\n')]);
      const body = Buffer.concat([
        part(
          'Content-Disposition: form-data; name="file"; filename="doc.pdf"\r\nContent-Type: application/pdf',
          FOUR_PAGES,
        ),
        part('Content-Disposition: form-data; name="extraction_method"\r\nContent-Type: text/plain', 'native'),
        part('Content-Disposition: form-data; name="page_start"\r\nContent-Type: text/plain; charset=utf-8', '2'),
        part('Content-Disposition: form-data; name="page_end"\r\nContent-Type: text/plain; charset=ISO-8859-1', '3'),
        Buffer.from(`--${boundary}--\r\n`),
      ]);
      const res = await fetch(`${s.url}/api/pdf/process`, {
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
      });
      const json = (await res.json()) as any;
      expect(res.status, JSON.stringify(json)).to.equal(200);
      expect(
        json.data.metadata.text_contents.map((c: { page: number; method: string }) => `${c.page}/${c.method}`),
      ).to.deep.equal(['2/native', '3/native']);
    });

    it('reads only pages 2 to 3 when page_start is 2 and page_end is 3, both inclusive', async () => {
      const data = ok(await postPdf(s, { extraction_method: 'native', page_start: '2', page_end: '3' }, FOUR_PAGES));
      expect(data.metadata.text_contents.map((c: { page: number }) => c.page)).to.deep.equal([2, 3]);
      expect(data.extracted_text).to.equal([PAGES[1], PAGES[2]].map((l) => l.join('\n')).join('\n\n'));
      expect(data.metadata.page_count).to.equal(4);
    });

    for (const [name, fields, message] of [
      ['page_start beyond the page count', { page_start: '5' }, /page range 5-4 lies outside the document/],
      ['page_end before page_start', { page_start: '3', page_end: '2' }, /page_end \(2\) is before page_start \(3\)/],
    ] as const) {
      it(`answers 400 VALIDATION_ERROR for ${name}, saying so in the message`, async () => {
        const r = await postPdf(s, fields, FOUR_PAGES);
        expect(r.status, JSON.stringify(r.body)).to.equal(400);
        expect(r.body.error.code).to.equal('VALIDATION_ERROR');
        expect(r.body.error.message).to.match(message);
      });
    }

    it('answers a repeated request from the result cache, and reads again with useCache=false or another range', async () => {
      const pdf = buildPdf({
        title: 'Zwischenspeicher',
        pages: [
          { kind: 'lines', lines: [`Einmalig ${Date.now()} – Größe`] },
          { kind: 'lines', lines: ['Zweite Seite'] },
        ],
      });
      const first = await postPdf(s, {}, pdf);
      expect(first.headers.get('x-cache')).to.equal('miss');
      const again = await postPdf(s, {}, pdf);
      expect(again.headers.get('x-cache')).to.equal('hit');
      expect(ok(again)).to.deep.equal(ok(first));
      const fresh = await postPdf(s, { useCache: 'false' }, pdf);
      expect(fresh.headers.get('x-cache')).to.equal('miss');
      expect(ok(fresh)).to.deep.equal(ok(first));
      const range = await postPdf(s, { page_end: '1' }, pdf);
      expect(range.headers.get('x-cache')).to.equal('miss');
      expect(ok(range).metadata.text_contents).to.have.length(1);
      const images = await postPdf(s, { includeImages: 'true' }, pdf);
      expect(images.headers.get('x-cache'), 'page images are never answered from the cache').to.equal('miss');
      expect(ok(images).images_archive_data).to.be.a('string');
    });

    it('reads a two-column page left column first, even when it is drawn row by row', async () => {
      const pdf = buildPdf({
        pages: [{ kind: 'columns', heading: 'Zweispaltiger Bericht', left: LEFT, right: RIGHT, interleave: true }],
      });
      const data = ok(await postPdf(s, {}, pdf));
      // Poppler (the default engine) keeps the break between the two column blocks as a blank line.
      expect(data.extracted_text).to.equal(['Zweispaltiger Bericht', ...LEFT, '', ...RIGHT].join('\n'));
    });
  });

  describe('OCR', () => {
    it('refuses local_ocr in a language that is not installed with 422 language_not_installed; native ignores the OCR language', async () => {
      const r = await postPdf(s, { extraction_method: 'local_ocr', ocr_language: 'ja', useCache: 'false' }, FOUR_PAGES);
      expect(r.status, JSON.stringify(r.body)).to.equal(422);
      expect(r.body.error.details).to.include({
        reason: 'language_not_installed',
        language: 'ja',
        tesseract_code: 'jpn',
      });
      expect(r.body.error.details.installed).to.include.members([
        'deu',
        'eng',
        'fra',
        'spa',
        'ita',
        'nld',
        'por',
        'pol',
      ]);
      expect(
        ok(await postPdf(s, { extraction_method: 'native', ocr_language: 'ja' }, FOUR_PAGES)).metadata.page_count,
      ).to.equal(4);
    });

    it('turns a page scanned upside down before OCR, reads it as well as an upright one and reports the rotation', async () => {
      const data = ok(
        await postPdf(s, { extraction_method: 'local_ocr', useCache: 'false' }, await upsideDownScanPdf(GERMAN)),
      );
      const acc = accuracy(GERMAN, data.extracted_text);
      console.log(`      upside-down scan, local_ocr character accuracy: ${(acc * 100).toFixed(2)} %`);
      expect(acc).to.be.at.least(0.98);
      expect(data.metadata.text_contents[0]).to.include({ page: 1, method: 'local_ocr', rotation: 180 });
      // An upright page is not turned and has no rotation.
      const upright = ok(
        await postPdf(s, { extraction_method: 'local_ocr', useCache: 'false' }, await scannedPdf(GERMAN)),
      );
      expect(upright.metadata.text_contents[0]).to.not.have.property('rotation');
    });

    it('recognises a scanned German page with local_ocr at 98 % character accuracy or better', async () => {
      const data = ok(await postPdf(s, { extraction_method: 'local_ocr' }, await scannedPdf(GERMAN)));
      const acc = accuracy(GERMAN, data.extracted_text);
      console.log(`      local_ocr character accuracy: ${(acc * 100).toFixed(2)} %`);
      expect(acc).to.be.at.least(0.98);
      expect(data.metadata.text_contents).to.have.length(1);
      expect(data.metadata.text_contents[0]).to.include({ page: 1, method: 'local_ocr' });
    });

    it('answers a repeated local_ocr request from the result cache, per OCR language', async () => {
      const pdf = await scannedPdf(`Zwischenspeicher für Seiten ${Date.now() % 1000}`);
      const first = await postPdf(s, { extraction_method: 'local_ocr' }, pdf);
      expect(first.headers.get('x-cache')).to.equal('miss');
      const again = await postPdf(s, { extraction_method: 'local_ocr' }, pdf);
      expect(again.headers.get('x-cache')).to.equal('hit');
      expect(ok(again)).to.deep.equal(ok(first));
      const english = await postPdf(s, { extraction_method: 'local_ocr', ocr_language: 'en' }, pdf);
      expect(english.headers.get('x-cache'), 'another OCR language is another result').to.equal('miss');
    });

    it('reads text pages natively and the scanned page by OCR with combined', async () => {
      const scanSource = buildPdf({
        pages: [{ kind: 'lines', lines: wrapText(SCANNED_MIDDLE, 70), size: 12, leading: 16 }],
      });
      const pdf = buildPdf({
        pages: [
          { kind: 'lines', lines: ['Erste Seite mit Textebene.'] },
          { kind: 'image', image: await rasterize(scanSource, 300), dpi: 300 },
          { kind: 'lines', lines: ['Dritte Seite, wieder mit Text.'] },
        ],
      });
      const data = ok(await postPdf(s, { extraction_method: 'combined' }, pdf));
      const contents = data.metadata.text_contents;
      expect(contents.map((c: { method: string }) => c.method)).to.deep.equal(['native', 'local_ocr', 'native']);
      expect(contents[0].text).to.equal('Erste Seite mit Textebene.');
      expect(contents[2].text).to.equal('Dritte Seite, wieder mit Text.');
      const acc = accuracy(SCANNED_MIDDLE, contents[1].text);
      console.log(`      combined scanned-page accuracy: ${(acc * 100).toFixed(2)} %`);
      expect(acc).to.be.at.least(0.95);
    });

    it('takes the text layer of a page without an image, however short or empty, and OCRs only the scanned page with combined', async () => {
      expectShortTextThenScan(ok(await postPdf(s, { extraction_method: 'combined' }, await shortTextThenScan())));
    });

    it('answers 503 PROVIDER_NOT_CONFIGURED for vision_llm when no language model is set up', async () => {
      const r = await postPdf(s, { extraction_method: 'vision_llm' }, FOUR_PAGES);
      expect(r.status, JSON.stringify(r.body)).to.equal(503);
      expect(r.body.error.code).to.equal('PROVIDER_NOT_CONFIGURED');
    });
  });

  describe('page images', () => {
    it('returns a Base64 ZIP with one PNG per page in the range when includeImages is true', async () => {
      const data = ok(await postPdf(s, { includeImages: 'true', page_start: '2', page_end: '3' }, FOUR_PAGES));
      expect(data.images_archive_filename)
        .to.be.a('string')
        .and.match(/\.zip$/);
      const dir = mkdtempSync(path.join(os.tmpdir(), 'pdf-images-'));
      try {
        const zip = path.join(dir, 'images.zip');
        writeFileSync(zip, Buffer.from(data.images_archive_data, 'base64'));
        const names = execFileSync('unzip', ['-Z1', zip]).toString('utf8').split('\n').filter(Boolean);
        expect(names).to.have.length(2);
        for (const n of names) {
          expect(n).to.match(/\.png$/);
          expect(execFileSync('unzip', ['-p', zip, n]).subarray(0, 8).toString('hex')).to.equal('89504e470d0a1a0a');
        }
        expect(names[0]).to.include('2');
        expect(names[1]).to.include('3');
        expect(data.metadata.image_paths).to.deep.equal(names);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});

describe('PDF processing with PDF_TEXT_ENGINE=pdfjs', function () {
  this.timeout(90_000);
  let s: Stack;
  useStack((stack) => (s = stack), { PDF_TEXT_ENGINE: 'pdfjs' });

  it('reads every page, a page range and the metadata through pdf.js', async () => {
    const data = ok(await postPdf(s, {}, FOUR_PAGES));
    expect(data.metadata).to.include({ page_count: 4, title: 'Jahresbericht Größe & Maß', author: 'Jörg Müller' });
    expect(data.metadata.text_contents).to.deep.equal(
      PAGES.map((lines, i) => ({ page: i + 1, text: lines.join('\n'), method: 'native' })),
    );
    const range = ok(await postPdf(s, { page_start: '2', page_end: '3' }, FOUR_PAGES));
    expect(range.extracted_text).to.equal([PAGES[1], PAGES[2]].map((l) => l.join('\n')).join('\n\n'));
  });

  it('keeps a footer after both columns (pdf.js layout rules), natively and in combined', async () => {
    const pdf = buildPdf({
      pages: [
        {
          kind: 'columns',
          heading: 'Zweispaltiger Bericht',
          left: LEFT,
          right: RIGHT,
          footer: 'Seite 1 von 1',
          interleave: true,
        },
      ],
    });
    const expected = ['Zweispaltiger Bericht', ...LEFT, ...RIGHT, 'Seite 1 von 1'].join('\n');
    expect(ok(await postPdf(s, {}, pdf)).extracted_text).to.equal(expected);
    expect(ok(await postPdf(s, { extraction_method: 'combined' }, pdf)).metadata.text_contents).to.deep.equal([
      { page: 1, text: expected, method: 'native' },
    ]);
  });

  it('with combined, OCRs only the pages that paint an image (one poppler rule for both text engines)', async () => {
    expectShortTextThenScan(ok(await postPdf(s, { extraction_method: 'combined' }, await shortTextThenScan())));
  });

  it('refuses a corrupt PDF with 422 UNPROCESSABLE_INPUT', async () => {
    const r = await postPdf(s, {}, corruptPdf());
    expect(r.status, JSON.stringify(r.body)).to.equal(422);
    expect(r.body.error.code).to.equal('UNPROCESSABLE_INPUT');
  });
});

describe('PDF processing with a vision model', function () {
  this.timeout(90_000);
  let s: Stack;
  let llm: LlmServer;
  const TRANSCRIPT = '# Seite eins\n\nÜbertragener Text der Seite.';

  useLlmStack(
    (stack, server) => {
      s = stack;
      llm = server;
    },
    { LLM_VISION_MODEL: 'vision-test' },
  );

  it('sends the rendered page as a PNG data URL to the vision model and returns its transcription', async () => {
    llm.respond(() => ({ content: TRANSCRIPT }));
    const pdf = buildPdf({ pages: [{ kind: 'lines', lines: ['Eine Seite für das Sehmodell.'] }] });
    const data = ok(await postPdf(s, { extraction_method: 'vision_llm' }, pdf));
    expect(data.extracted_text).to.equal(TRANSCRIPT);
    expect(data.metadata.text_contents).to.deep.equal([{ page: 1, text: TRANSCRIPT, method: 'vision_llm' }]);
    const reqs = llm.chatRequests();
    expect(reqs).to.have.length(1);
    expect(reqs[0].json.model).to.equal('vision-test');
    const parts = reqs[0].json.messages.flatMap((m: { content: unknown }) =>
      Array.isArray(m.content) ? m.content : [],
    );
    const image = parts.find((p: { type: string }) => p.type === 'image_url');
    expect(image, 'an image_url part').to.not.equal(undefined);
    const url: string = image.image_url.url;
    expect(url).to.match(/^data:image\/png;base64,/);
    expect(
      Buffer.from(url.slice(url.indexOf(',') + 1), 'base64')
        .subarray(0, 8)
        .toString('hex'),
    ).to.equal('89504e470d0a1a0a');
  });

  it('fills a template from the native text, with context values filling what they name', async () => {
    llm.respond(null);
    const before = llm.chatRequests().length;
    const data = ok(
      await postPdf(s, { template: 'PdfMetadata', context: JSON.stringify({ publisher: 'Stadt Köln' }) }, FOUR_PAGES),
    );
    const reqs = llm.chatRequests().slice(before);
    expect(reqs, 'one model call').to.have.length(1);
    const sent = JSON.stringify(reqs[0].json.messages);
    for (const line of PAGES.flat()) expect(sent, 'the page text reaches the model').to.include(line);
    expect(sent, 'a field the context fills is not asked for').to.not.match(/publisher:/);
    expect(data.extracted_text).to.match(/^title: title value$/m);
    expect(data.extracted_text).to.match(/^publisher: Stadt Köln$/m);
    expect(data.extracted_text).to.include('# title value');
    expect(data.metadata.text_contents.map((c: { page: number }) => c.page)).to.deep.equal([1, 2, 3, 4]);
  });
});
