import { expect } from 'chai';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expectPdfError } from '../support/assert';
import { openPdf, type PdfDoc } from '../../providers/pdf/pdfjs';
import { pdfInfo } from '../../providers/pdf/poppler';
import { renderPagePng, renderPages } from '../../providers/pdf/render';
import { buildPdf, corruptPdf, PAGE_HEIGHT, scannedPdf, zeroPagePdf } from '../support/documents/pdf-factory';

const LEFT = [
  'Die linke Spalte beginnt hier mit',
  'einem Absatz, der über mehrere',
  'Zeilen läuft und vollständig',
  'gelesen werden muss, bevor die',
  'rechte Spalte an die Reihe kommt.',
  'Auch die letzte Zeile gehört dazu.',
];
const RIGHT = [
  'The right column follows after the',
  'left one, with its own paragraph',
  'of several lines that must not be',
  'mixed with the lines on the left',
  'even though they share baselines.',
  'This is the end of the page text.',
];

async function withDoc<T>(bytes: Buffer, fn: (doc: PdfDoc) => Promise<T>): Promise<T> {
  const doc = await openPdf(bytes);
  try {
    return await fn(doc);
  } finally {
    await doc.close();
  }
}

describe('PDF text through pdf.js', function () {
  this.timeout(60_000);

  it('extracts German text with umlauts, sharp s and WinAnsi punctuation exactly', async () => {
    const lines = ['Grüße aus Köln', 'Äpfel, Öl und Übermut: äöü ÄÖÜ ß', 'Preis: 12,50 € – „Zitat“ (brutto)'];
    const page = await withDoc(buildPdf({ pages: [{ kind: 'lines', lines }] }), (doc) => doc.pageText(1));
    expect(page.text).to.equal(lines.join('\n'));
    expect(page.chars).to.equal([...lines.join('\n')].length);
  });

  it('reads three pages in page order and every page top to bottom, even when lines are drawn bottom first', async () => {
    const pdf = buildPdf({
      pages: [
        { kind: 'lines', lines: ['Seite eins, erste Zeile', 'Seite eins, zweite Zeile'] },
        { kind: 'lines', lines: ['Page two, line one', 'Page two, line two', 'Page two, line three'], reversed: true },
        { kind: 'lines', lines: ['Seite drei', 'Ende des Dokuments'] },
      ],
    });
    const texts = await withDoc(pdf, async (doc) => {
      expect(doc.pageCount).to.equal(3);
      return [await doc.pageText(1), await doc.pageText(2), await doc.pageText(3)].map((p) => p.text);
    });
    expect(texts).to.deep.equal([
      'Seite eins, erste Zeile\nSeite eins, zweite Zeile',
      'Page two, line one\nPage two, line two\nPage two, line three',
      'Seite drei\nEnde des Dokuments',
    ]);
  });

  for (const interleave of [false, true]) {
    it(`reads a two-column page left column first, the title before and the footer after (drawn ${interleave ? 'row by row' : 'column by column'})`, async () => {
      const pdf = buildPdf({
        pages: [
          {
            kind: 'columns',
            heading: 'Zweispaltiger Bericht über Spalten',
            left: LEFT,
            right: RIGHT,
            footer: 'Seite 1 von 1',
            interleave,
          },
        ],
      });
      const { text } = await withDoc(pdf, (doc) => doc.pageText(1));
      expect(text).to.equal(['Zweispaltiger Bericht über Spalten', ...LEFT, ...RIGHT, 'Seite 1 von 1'].join('\n'));
    });
  }

  it('keeps label and value rows of a form on one line instead of reading them as columns', async () => {
    const rows = [
      ['Name:', 'Jörg Müller'],
      ['Straße:', 'Hauptstraße 5'],
      ['Ort:', 'Köln'],
      ['Telefon:', '0221 123456'],
    ];
    const runs = rows.flatMap(([label, value], i) => [
      { text: value, x: 300, y: PAGE_HEIGHT - 100 - i * 20 },
      { text: label, x: 72, y: PAGE_HEIGHT - 100 - i * 20 },
    ]);
    const { text } = await withDoc(buildPdf({ pages: [{ kind: 'runs', runs }] }), (doc) => doc.pageText(1));
    expect(text).to.equal(rows.map((r) => r.join(' ')).join('\n'));
  });

  it('puts a space between runs with a gap but none inside a word split into runs', async () => {
    const y = PAGE_HEIGHT - 100;
    // Helvetica 12 pt: "Wort" is 24.66 pt wide, "ende" 26.0 pt.
    const runs = [
      { text: 'Wort', x: 72, y },
      { text: 'ende', x: 72 + 24.66, y },
      { text: 'danach', x: 72 + 24.66 + 26.0 + 4, y },
    ];
    const { text } = await withDoc(buildPdf({ pages: [{ kind: 'runs', runs }] }), (doc) => doc.pageText(1));
    expect(text).to.equal('Wortende danach');
  });

  it('reports page count, title and author, non-ASCII ones included', async () => {
    const pdf = buildPdf({
      title: 'Jahresbericht Größe & Maß',
      author: 'Jörg Müller',
      pages: [
        { kind: 'lines', lines: ['a'] },
        { kind: 'lines', lines: ['b'] },
      ],
    });
    const meta = await withDoc(pdf, (doc) => doc.metadata());
    expect(meta).to.include({
      title: 'Jahresbericht Größe & Maß',
      author: 'Jörg Müller',
      page_count: 2,
      pdf_version: '1.4',
    });
    expect(meta.producer).to.equal('docproc test pdf-factory');
  });

  it('gives empty text for an image-only page, which has no text layer', async () => {
    const pdf = await scannedPdf('Dieser Text steht nur in den Pixeln.');
    expect(await withDoc(pdf, (doc) => doc.pageText(1))).to.deep.equal({ text: '', chars: 0 });
  });

  it('refuses a page number outside the document', async () => {
    await withDoc(buildPdf({ pages: [{ kind: 'lines', lines: ['eins'] }] }), async (doc) => {
      await expectPdfError(doc.pageText(0), 'VALIDATION_ERROR', 'page_out_of_range');
      await expectPdfError(doc.pageText(2), 'VALIDATION_ERROR', 'page_out_of_range');
    });
  });

  it('refuses an encrypted PDF as unprocessable, reason encrypted, quickly', async () => {
    const pdf = buildPdf({ userPassword: 'geheim', pages: [{ kind: 'lines', lines: ['Vertraulich'] }] });
    await expectPdfError(openPdf(pdf), 'UNPROCESSABLE_INPUT', 'encrypted');
  });

  it('refuses a damaged PDF as unprocessable, reason corrupt, quickly', async () => {
    await expectPdfError(openPdf(corruptPdf()), 'UNPROCESSABLE_INPUT', 'corrupt');
  });

  it('refuses bytes without a PDF header as an invalid format, reason not_pdf', async () => {
    const png = await readFile(new URL('../../samples/image.png', import.meta.url));
    await expectPdfError(openPdf(png), 'INVALID_FORMAT', 'not_pdf');
    await expectPdfError(openPdf(Buffer.alloc(0)), 'INVALID_FORMAT', 'not_pdf');
  });

  it('refuses a PDF without pages as unprocessable, reason empty', async () => {
    await expectPdfError(openPdf(zeroPagePdf()), 'UNPROCESSABLE_INPUT', 'empty');
  });

  it('opens a 200-page PDF and extracts every page', async () => {
    const pages = Array.from({ length: 200 }, (_, i) => ({
      kind: 'lines' as const,
      lines: [
        `Seite ${i + 1} von 200`,
        ...Array.from({ length: 40 }, (_, j) => `Zeile ${j + 1} mit etwas Text über Größen und Maße.`),
      ],
    }));
    const texts = await withDoc(buildPdf({ pages }), async (doc) => {
      expect(doc.pageCount).to.equal(200);
      const out: string[] = [];
      for (let n = 1; n <= doc.pageCount; n++) out.push((await doc.pageText(n)).text);
      return out;
    });
    texts.forEach((t, i) => {
      const lines = t.split('\n');
      expect(lines, `page ${i + 1}`).to.have.length(41);
      expect(lines[0]).to.equal(`Seite ${i + 1} von 200`);
      expect(lines[40]).to.equal('Zeile 40 mit etwas Text über Größen und Maße.');
    });
  });
});

describe('PDF pages through poppler', function () {
  this.timeout(60_000);
  let dir: string;
  let pdfPath: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'pdf-native-'));
    pdfPath = path.join(dir, 'doc.pdf');
    const pages = [1, 2, 3, 4, 5].map((n) => ({ kind: 'lines' as const, lines: [`Seite ${n}`] }));
    await writeFile(pdfPath, buildPdf({ title: 'Fünf Seiten', author: 'Test', pages }));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads page count, encryption, title and author with pdfinfo', async () => {
    expect(await pdfInfo(pdfPath)).to.deep.equal({
      pages: 5,
      encrypted: false,
      title: 'Fünf Seiten',
      author: 'Test',
      pageSize: { width: 595, height: 842 },
    });
  });

  it('renders the asked pages as 300 dpi grayscale PGM files in page order', async () => {
    const out = path.join(dir, 'render');
    await mkdir(out);
    const pages = await renderPages(pdfPath, [5, 1, 2, 4], out);
    expect(pages.map((p) => p.page)).to.deep.equal([1, 2, 4, 5]);
    for (const p of pages) {
      const head = (await readFile(p.path)).subarray(0, 20).toString('latin1');
      expect(head).to.match(/^P5\s+2480\s+3509\s+255\s/);
    }
  });

  it('renders one page as a PNG for people and vision models', async () => {
    const png = await renderPagePng(pdfPath, 3, path.join(dir, 'page3.png'), 72);
    expect(png).to.equal(path.join(dir, 'page3.png'));
    const bytes = await readFile(png);
    expect(bytes.subarray(1, 4).toString('latin1')).to.equal('PNG');
    expect(bytes.readUInt32BE(16)).to.equal(595);
    expect((await stat(png)).size).to.be.greaterThan(100);
  });

  it('maps poppler failures to PDF errors: missing page, encryption, damage, no pages', async () => {
    await expectPdfError(renderPages(pdfPath, [9], dir), 'VALIDATION_ERROR', 'page_out_of_range');
    const write = async (name: string, bytes: Buffer) => {
      await writeFile(path.join(dir, name), bytes);
      return path.join(dir, name);
    };
    const encrypted = await write('enc.pdf', buildPdf({ userPassword: 'x', pages: [{ kind: 'lines', lines: ['x'] }] }));
    await expectPdfError(pdfInfo(encrypted), 'UNPROCESSABLE_INPUT', 'encrypted');
    await expectPdfError(renderPages(encrypted, [1], dir), 'UNPROCESSABLE_INPUT', 'encrypted');
    await expectPdfError(renderPages(await write('bad.pdf', corruptPdf()), [1], dir), 'UNPROCESSABLE_INPUT', 'corrupt');
    await expectPdfError(renderPages(await write('zero.pdf', zeroPagePdf()), [1], dir), 'UNPROCESSABLE_INPUT', 'empty');
  });

  it('stops rendering when aborted and rejects with the abort reason', async () => {
    const controller = new AbortController();
    const work = renderPages(pdfPath, [1, 2, 3, 4, 5], dir, { dpi: 600, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stop rendering')), 20);
    try {
      await work;
      expect.fail('rendering should have been aborted');
    } catch (err) {
      expect((err as Error).message).to.equal('stop rendering');
    }
  });
});
