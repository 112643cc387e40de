import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PdfError } from '../../domain/pdf/errors';
import { expectPdfError } from '../support/assert';
import { pdfjsThreadsRunning } from '../../providers/pdf/pdfjs-thread';
import { pdfPageTexts, splitPages, tidyPageText } from '../../providers/pdf/poppler';
import { describePdf, PDF_TEXT_ENGINES, readPageTexts } from '../../providers/pdf/text-engine';
import { buildPdf, corruptPdf, PAGE_HEIGHT, scannedPdf, zeroPagePdf } from '../support/documents/pdf-factory';

// Both PDF text engines behind providers/pdf/text-engine.ts, on real poppler (pdfinfo, pdftotext) and real pdf.js,
// with PDFs generated here. Where the engines agree, one case runs on both; where their reading order differs,
// each engine's own answer is pinned.

const LEFT = [
  'Die linke Spalte beginnt hier mit',
  'einem Absatz, der über mehrere',
  'Zeilen läuft und vollständig',
  'gelesen werden muss.',
];
const RIGHT = [
  'The right column follows after the',
  'left one, with its own paragraph',
  'of several lines that must not be',
  'mixed with the lines on the left.',
];

describe('PDF text engines (poppler and pdf.js)', function () {
  this.timeout(60_000);
  let dir: string;
  let n = 0;
  const file = async (bytes: Buffer): Promise<string> => {
    const p = path.join(dir, `doc-${++n}.pdf`);
    await writeFile(p, bytes);
    return p;
  };

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'pdf-engines-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const engine of PDF_TEXT_ENGINES) {
    describe(`engine ${engine}`, () => {
      it('reads umlauts, sharp s and WinAnsi punctuation exactly, pages in order, lines top to bottom', async () => {
        const pages = [
          ['Grüße aus Köln', 'Äpfel, Öl und Übermut: äöü ÄÖÜ ß', 'Preis: 12,50 € – „Zitat“ (brutto)'],
          ['Page two, line one', 'Page two, line two', 'Page two, line three'],
          ['Seite drei', 'Ende des Dokuments'],
        ];
        const pdf = await file(
          buildPdf({ pages: pages.map((lines, i) => ({ kind: 'lines' as const, lines, reversed: i === 1 })) }),
        );
        const texts = await readPageTexts(pdf, [1, 2, 3], engine);
        expect([...texts.keys()]).to.deep.equal([1, 2, 3]);
        expect([...texts.values()]).to.deep.equal(pages.map((l) => l.join('\n')));
      });

      it('reports page count, title and author, non-ASCII ones included', async () => {
        const pdf = await file(
          buildPdf({
            title: 'Jahresbericht Größe & Maß',
            author: 'Jörg Müller',
            pages: [
              { kind: 'lines', lines: ['a'] },
              { kind: 'lines', lines: ['b'] },
            ],
          }),
        );
        expect(await describePdf(pdf, engine)).to.deep.equal({
          pageCount: 2,
          title: 'Jahresbericht Größe & Maß',
          author: 'Jörg Müller',
        });
      });

      it('reads the left column before the right one, drawn column by column or row by row', async () => {
        for (const interleave of [false, true]) {
          const pdf = await file(
            buildPdf({
              pages: [{ kind: 'columns', heading: 'Zweispaltiger Bericht', left: LEFT, right: RIGHT, interleave }],
            }),
          );
          const text = (await readPageTexts(pdf, [1], engine)).get(1)!;
          // pdf.js with our layout joins the blocks line by line; poppler keeps a blank line between them.
          const sep = engine === 'poppler' ? [''] : [];
          expect(text, `interleave ${interleave}`).to.equal(
            ['Zweispaltiger Bericht', ...LEFT, ...sep, ...RIGHT].join('\n'),
          );
        }
      });

      it('reads a page range and gives an image-only page an empty text', async () => {
        const scan = await scannedPdf('Nur Pixel.');
        const pdf = await file(
          buildPdf({
            pages: [
              { kind: 'lines', lines: ['eins'] },
              { kind: 'lines', lines: ['zwei'] },
              { kind: 'lines', lines: ['drei'] },
            ],
          }),
        );
        expect([...(await readPageTexts(pdf, [2, 3], engine)).entries()]).to.deep.equal([
          [2, 'zwei'],
          [3, 'drei'],
        ]);
        expect((await readPageTexts(await file(scan), [1], engine)).get(1)).to.equal('');
      });

      it('reads a document that anyone may open but that forbids copying its text', async () => {
        const pdf = await file(
          buildPdf({
            userPassword: '',
            allowCopy: false,
            pages: [{ kind: 'lines', lines: ['Nicht kopieren', 'Zweite Zeile'] }],
          }),
        );
        expect((await readPageTexts(pdf, [1], engine)).get(1)).to.equal('Nicht kopieren\nZweite Zeile');
      });

      it('refuses bad files with the contract codes, quickly', async () => {
        const png = await readFile(new URL('../../samples/image.png', import.meta.url));
        await expectPdfError(describePdf(await file(png), engine), 'INVALID_FORMAT', 'not_pdf');
        await expectPdfError(describePdf(await file(Buffer.alloc(0)), engine), 'INVALID_FORMAT', 'not_pdf');
        const encrypted = buildPdf({ userPassword: 'geheim', pages: [{ kind: 'lines', lines: ['Vertraulich'] }] });
        await expectPdfError(describePdf(await file(encrypted), engine), 'UNPROCESSABLE_INPUT', 'encrypted');
        await expectPdfError(describePdf(await file(corruptPdf()), engine), 'UNPROCESSABLE_INPUT', 'corrupt');
        await expectPdfError(describePdf(await file(zeroPagePdf()), engine), 'UNPROCESSABLE_INPUT', 'empty');
      });
    });
  }

  describe('where the engines differ', () => {
    const rows = [
      ['Name:', 'Jörg Müller'],
      ['Straße:', 'Hauptstraße 5'],
    ];
    const form = () =>
      buildPdf({
        pages: [
          {
            kind: 'runs',
            runs: rows.flatMap(([label, value], i) => [
              { text: value, x: 300, y: PAGE_HEIGHT - 100 - i * 20 },
              { text: label, x: 72, y: PAGE_HEIGHT - 100 - i * 20 },
            ]),
          },
        ],
      });

    it('pdf.js keeps the label and value of a form row on one line; poppler reads labels and values as blocks', async () => {
      const pdf = await file(form());
      expect((await readPageTexts(pdf, [1], 'pdfjs')).get(1)).to.equal('Name: Jörg Müller\nStraße: Hauptstraße 5');
      expect((await readPageTexts(pdf, [1], 'poppler')).get(1)).to.equal(
        'Name:\n\nJörg Müller\n\nStraße:\n\nHauptstraße 5',
      );
    });

    it('pdf.js puts a footer that spans both columns after them; poppler after the left column', async () => {
      const pdf = await file(
        buildPdf({
          pages: [{ kind: 'columns', heading: 'Bericht', left: LEFT, right: RIGHT, footer: 'Seite 1 von 1' }],
        }),
      );
      expect((await readPageTexts(pdf, [1], 'pdfjs')).get(1)).to.equal(
        ['Bericht', ...LEFT, ...RIGHT, 'Seite 1 von 1'].join('\n'),
      );
      expect((await readPageTexts(pdf, [1], 'poppler')).get(1)).to.equal(
        ['Bericht', ...LEFT, '', 'Seite 1 von 1', '', ...RIGHT].join('\n'),
      );
    });
  });

  describe('pdf.js in a worker thread', () => {
    const PAGES = 200;
    const all = Array.from({ length: PAGES }, (_, i) => i + 1);
    let big: string;
    /**
     * 360 lines a page: reading all pages takes pdf.js seconds, so an abort answers in time only by terminating the
     * thread.
     */
    let heavy: string;
    before(async () => {
      const pages = all.map((n) => ({
        kind: 'lines' as const,
        lines: [
          `Seite ${n} von ${PAGES}`,
          ...Array.from({ length: 30 }, (_, j) => `Zeile ${j + 1} über Größen und Maße.`),
        ],
      }));
      big = await file(buildPdf({ pages }));
      const lines = (n: number) =>
        Array.from({ length: 360 }, (_, j) => `Seite ${n}, Zeile ${j + 1} über Größen und Maße, mit etwas mehr Text.`);
      heavy = await file(
        buildPdf({ pages: all.map((n) => ({ kind: 'lines' as const, size: 2, leading: 2, lines: lines(n) })) }),
      );
    });

    /** The call's rejection, after checking that it settles within `ms` and leaves no thread behind. */
    async function rejection(work: Promise<unknown>, ms: number): Promise<unknown> {
      const t0 = Date.now();
      expect(pdfjsThreadsRunning(), 'threads while the call runs').to.be.at.most(1);
      const err = await work.then(
        () => expect.fail('the call should have been rejected'),
        (e: unknown) => e,
      );
      expect(Date.now() - t0, 'ms until the rejection').to.be.lessThan(ms);
      expect(pdfjsThreadsRunning(), 'threads left').to.equal(0);
      return err;
    }

    it('reads every page of a 200-page document in one thread, each in place', async () => {
      const texts = await readPageTexts(big, all, 'pdfjs');
      expect([...texts.keys()]).to.deep.equal(all);
      for (const n of all) expect(texts.get(n)!.split('\n')[0], `page ${n}`).to.equal(`Seite ${n} von ${PAGES}`);
      expect(pdfjsThreadsRunning()).to.equal(0);
    });

    it('terminates the thread when the limit passes and rejects with a timeout', async () => {
      // A 1 ms opening limit gives the call 1 + 200 × 1 ms: it ends while the thread is still loading pdf.js.
      const reading = readPageTexts(heavy, all, 'pdfjs', { timeoutMs: 1 });
      expect(pdfjsThreadsRunning()).to.equal(1);
      const err = await rejection(reading, 2000);
      expect(err, String(err)).to.be.instanceOf(PdfError);
      expect((err as PdfError).code).to.equal('UNPROCESSABLE_INPUT');
      expect((err as PdfError).reason).to.equal('timeout');
    });

    it('rejects with the abort reason, without a thread when aborted before, terminating it when aborted during', async () => {
      const before = new AbortController();
      before.abort(new Error('cancelled before'));
      expect(((await rejection(describePdf(big, 'pdfjs', { signal: before.signal }), 2000)) as Error).message).to.equal(
        'cancelled before',
      );

      const during = new AbortController();
      const reading = readPageTexts(heavy, all, 'pdfjs', { signal: during.signal });
      setTimeout(() => during.abort(new Error('cancelled during')), 100);
      expect(((await rejection(reading, 2000)) as Error).message).to.equal('cancelled during');
    });

    it('leaves JSON and Array.prototype.push of the calling thread as they were', async () => {
      // A fresh process, since this one has pdf.js loaded by other tests. core-js replaces Function.prototype.toString
      // too, so its replacements print as "[native code]": the check compares the functions with the originals. The
      // same check after pdf.js ran in the child's own thread shows it would see the replacement.
      const script = path.join(dir, 'json-untouched.mjs');
      await writeFile(
        script,
        `const originals = [JSON.stringify, JSON.parse, Array.prototype.push, Function.prototype.toString];
        const untouched = () => [JSON.stringify, JSON.parse, Array.prototype.push, Function.prototype.toString].every((f, i) => f === originals[i]);
        const [engineUrl, pdfjsUrl, pdfPath] = process.argv.slice(2);
        const { readPageTexts } = await import(engineUrl);
        const text = (await readPageTexts(pdfPath, [1], 'pdfjs')).get(1);
        const afterThread = untouched();
        const { openPdf } = await import(pdfjsUrl);
        const { readFile } = await import('node:fs/promises');
        await (await openPdf(await readFile(pdfPath))).close();
        process.stdout.write(JSON.stringify({ text, afterThread, afterInThread: untouched() }));`,
      );
      const pdf = await file(buildPdf({ pages: [{ kind: 'lines', lines: ['Kleines Dokument'] }] }));
      const url = (rel: string) => new URL(rel, import.meta.url).href;
      const args = [
        '--import',
        'tsx',
        script,
        url('../../providers/pdf/text-engine.ts'),
        url('../../providers/pdf/pdfjs.ts'),
        pdf,
      ];
      const { stdout } = await promisify(execFile)(process.execPath, args, { timeout: 20_000 });
      expect(JSON.parse(stdout)).to.deep.equal({ text: 'Kleines Dokument', afterThread: true, afterInThread: false });
    });
  });

  describe('pdftotext', () => {
    let big: string;
    before(async () => {
      const pages = Array.from({ length: 120 }, (_, i) => ({
        kind: 'lines' as const,
        lines: [
          `Seite ${i + 1} von 120`,
          ...Array.from({ length: 30 }, (_, j) => `Zeile ${j + 1} über Größen und Maße.`),
        ],
      }));
      big = await file(buildPdf({ pages }));
    });

    it('gives the same pages whether one process or four read the range, every page in place', async () => {
      const one = await pdfPageTexts(big, 1, 120, { parallel: 1 });
      const four = await pdfPageTexts(big, 1, 120, { parallel: 4 });
      expect(four).to.deep.equal(one);
      expect(one).to.have.length(120);
      one.forEach((t, i) => {
        const lines = t.split('\n');
        expect(lines[0], `page ${i + 1}`).to.equal(`Seite ${i + 1} von 120`);
        expect(lines[lines.length - 1]).to.equal('Zeile 30 über Größen und Maße.');
      });
      const middle = await pdfPageTexts(big, 37, 91, { parallel: 2 });
      expect(middle).to.deep.equal(one.slice(36, 91));
    });

    it('refuses pages beyond the end and an invalid range', async () => {
      await expectPdfError(pdfPageTexts(big, 119, 121), 'VALIDATION_ERROR', 'page_out_of_range');
      await expectPdfError(pdfPageTexts(big, 0, 3), 'VALIDATION_ERROR', 'page_out_of_range');
      await expectPdfError(pdfPageTexts(big, 5, 4), 'VALIDATION_ERROR', 'page_out_of_range');
    });

    it('kills a pdftotext process that outlives its limit and refuses the file as unprocessable, reason timeout', async () => {
      await expectPdfError(pdfPageTexts(big, 1, 120, { timeoutMs: 1 }), 'UNPROCESSABLE_INPUT', 'timeout');
    });

    it('stops when aborted and rejects with the abort reason', async () => {
      const controller = new AbortController();
      controller.abort(new Error('stop reading'));
      try {
        await pdfPageTexts(big, 1, 120, { signal: controller.signal });
        expect.fail('reading should have been aborted');
      } catch (err) {
        expect((err as Error).message).to.equal('stop reading');
      }
    });

    it('tidies page text: trailing spaces, runs of blank lines and blank edges go, and splits at form feeds', () => {
      expect(tidyPageText('\n\nTitel  \n\n\n\nText\t\n\n')).to.equal('Titel\n\nText');
      expect(splitPages('eins\n\n\fzwei\n\n\f', 2)).to.deep.equal(['eins', 'zwei']);
      expect(() => splitPages('eins\n\n\f', 2)).to.throw(PdfError);
    });
  });
});
