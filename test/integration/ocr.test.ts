import { expect } from 'chai';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  DEFAULT_LANGUAGES,
  installedLanguages,
  ocrImage,
  parseTesseractTsv,
  toTesseractLanguages,
  ocrLanguagesFor,
} from '../../providers/ocr/tesseract';
import { renderPages } from '../../providers/pdf/render';
import { mapPool } from '../../core/runtime/pool';
import type { AppError } from '../../core/errors';
import { configureEngineWatchdog, engineStallTimeoutMs, EngineStallError } from '../../providers/process/run-tool';
import { toActivityFailure } from '../support/workflows/boundary';
import { loadConfig } from '../../core/config/config';
import { createLogger } from '../../core/runtime/logger';
import { accuracy, normaliseSpace as normalise } from '../support/documents/accuracy';
import { blankScanPdf, scannedPdf } from '../support/documents/pdf-factory';

const GERMAN =
  'Über die Brücke gingen früh am Morgen zwei ältere Männer, die sich über das schöne Wetter freuten. ' +
  'Sie trugen schwere Körbe voller Äpfel, Birnen und süßer Pflaumen zum Markt in der Stadtmitte. ' +
  'Dort öffneten die Händler gerade ihre Stände, während aus der Bäckerei der Duft von frischem Brot ' +
  'über den Platz zog. Ein Mädchen zählte die Münzen in ihrer Geldbörse und überlegte, ob sie Blumen ' +
  'für ihre Großmutter kaufen sollte. Später regnete es kräftig, doch niemand ließ sich die gute Laune verderben.';
const ENGLISH =
  'The committee reviewed the quarterly figures on Thursday afternoon and agreed that the new warehouse ' +
  'had reduced delivery times by almost a third. Several members asked whether the savings would last ' +
  'through the winter, when demand usually peaks and temporary staff must be trained quickly.';

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('OCR with tesseract', function () {
  this.timeout(120_000);
  let dir: string;
  let scanPages: { page: number; path: string }[];
  let blankPage: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ocr-test-'));
    const scan = path.join(dir, 'scan.pdf');
    await writeFile(scan, await scannedPdf([GERMAN, ENGLISH]));
    await mkdir(path.join(dir, 'scan'));
    scanPages = await renderPages(scan, [1, 2], path.join(dir, 'scan'));
    const blank = path.join(dir, 'blank.pdf');
    await writeFile(blank, blankScanPdf());
    await mkdir(path.join(dir, 'blank'));
    [{ path: blankPage }] = await renderPages(blank, [1], path.join(dir, 'blank'));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('recognises a scanned German page with umlauts at 98 % character accuracy or better, with high confidence', async () => {
    expect(normalise(GERMAN).length).to.be.greaterThan(400);
    const result = await ocrImage(scanPages[0].path, { languages: ['deu', 'eng'] });
    const acc = accuracy(GERMAN, result.text);
    expect(acc, `accuracy ${acc.toFixed(4)}: ${result.text}`).to.be.at.least(0.98);
    expect(result.confidence).to.be.greaterThan(80);
    expect(result.words).to.be.within(70, 90);
    for (const word of ['Brücke', 'ältere', 'Äpfel', 'süßer', 'Großmutter', 'ließ'])
      expect(result.text).to.include(word);
  });

  it('recognises the pages of a scan in parallel, each in its own process, results in page order', async () => {
    const results = await mapPool(scanPages, 2, (p) =>
      ocrImage(p.path, { languages: toTesseractLanguages(['de', 'en']) }),
    );
    expect(results).to.have.length(2);
    expect(accuracy(GERMAN, results[0].text)).to.be.at.least(0.98);
    expect(accuracy(ENGLISH, results[1].text)).to.be.at.least(0.98);
    expect(results[1].confidence).to.be.greaterThan(80);
  });

  it('finds no text and no words on a blank page', async () => {
    const result = await ocrImage(blankPage, { languages: ['deu', 'eng'] });
    expect(result.text).to.equal('');
    expect(result.words).to.be.at.most(2);
    expect(result.confidence).to.be.lessThan(50);
  });

  it('resolves the languages a request asks for against the installed ones, refusing one that is not installed', async () => {
    const installed = await installedLanguages();
    expect(await ocrLanguagesFor(undefined)).to.deep.equal(['deu', 'eng']);
    expect(await ocrLanguagesFor('de+en')).to.deep.equal(['deu', 'eng']);
    const missing = ['jpn', 'kor', 'tha', 'heb'].find((l) => !installed.has(l))!;
    const err = await ocrLanguagesFor(missing).then(
      () => expect.fail('a language that is not installed was accepted'),
      (e: AppError) => e,
    );
    expect(err.code).to.equal('UNPROCESSABLE_INPUT');
    expect(err.details).to.include({ reason: 'language_not_installed', language: missing });
    expect(err.details.installed).to.deep.equal([...installed].sort());
  });

  it('kills tesseract promptly when aborted, and the process is gone', async () => {
    const controller = new AbortController();
    let pid: number | undefined;
    const work = ocrImage(scanPages[0].path, {
      languages: ['deu', 'eng'],
      signal: controller.signal,
      onSpawn: (p) => {
        pid = p;
        setTimeout(() => controller.abort(new Error('job cancelled')), 100);
      },
    });
    const t0 = Date.now();
    const outcome = await work.then(
      () => 'finished',
      (err: Error) => err.message,
    );
    expect(outcome).to.equal('job cancelled');
    expect(Date.now() - t0, 'rejects within a second of the abort').to.be.lessThan(1100);
    expect(pid).to.be.a('number');
    expect(isRunning(pid!), 'tesseract process still exists').to.equal(false);
  });

  it('a tesseract that stops (SIGSTOP) is killed by the engine watchdog: a retryable stall error, not UNPROCESSABLE_INPUT', async () => {
    const before = engineStallTimeoutMs();
    configureEngineWatchdog({
      stallTimeoutMs: loadConfig({ ENGINE_STALL_TIMEOUT_MS: '500' }).ENGINE_STALL_TIMEOUT_MS,
      logger: createLogger('test', 'silent'),
    });
    let pid: number | undefined;
    try {
      const err = await ocrImage(scanPages[0].path, {
        languages: ['deu'],
        timeoutMs: 60_000,
        onSpawn: (p) => process.kill((pid = p), 'SIGSTOP'),
      }).then(
        () => expect.fail('a stopped tesseract cannot finish'),
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(EngineStallError);
      expect((err as EngineStallError).engine).to.equal('tesseract');
      expect(toActivityFailure(err), 'passed on as a retryable failure').to.equal(err);
      expect(isRunning(pid!), 'tesseract process still exists').to.equal(false);
    } finally {
      configureEngineWatchdog({ stallTimeoutMs: before });
    }
  });

  it('does not start tesseract for a signal that is already aborted', async () => {
    let spawned = false;
    const controller = new AbortController();
    controller.abort(new Error('too late'));
    const work = ocrImage(scanPages[0].path, {
      languages: ['deu'],
      signal: controller.signal,
      onSpawn: () => (spawned = true),
    });
    await work.then(
      () => expect.fail('should reject'),
      (err: Error) => expect(err.message).to.equal('too late'),
    );
    expect(spawned).to.equal(false);
  });
});

describe('tesseract languages', () => {
  it('maps ISO 639-1 codes to tesseract codes and keeps their order', () => {
    expect(toTesseractLanguages(['de', 'en', 'fr', 'es', 'it', 'nl', 'pt', 'pl'])).to.deep.equal([
      'deu',
      'eng',
      'fra',
      'spa',
      'ita',
      'nld',
      'por',
      'pol',
    ]);
    expect(toTesseractLanguages('en')).to.deep.equal(['eng']);
  });

  it('accepts regional tags, tesseract codes, separators and duplicates', () => {
    expect(toTesseractLanguages('de-DE, en_US+deu')).to.deep.equal(['deu', 'eng']);
    expect(toTesseractLanguages(['ENG', 'zh', 'zh-TW'])).to.deep.equal(['eng', 'chi_sim', 'chi_tra']);
  });

  it('defaults to German and English when nothing or nothing known is asked for', () => {
    expect(DEFAULT_LANGUAGES).to.deep.equal(['deu', 'eng']);
    for (const input of [undefined, '', [], ['xx'], 'klingon', ['constructor', '__proto__']]) {
      expect(toTesseractLanguages(input), String(input)).to.deep.equal(['deu', 'eng']);
    }
  });

  it('drops languages that are not installed and falls back when none is left', () => {
    const installed = new Set(['deu', 'eng']);
    expect(toTesseractLanguages(['fr', 'de'], installed)).to.deep.equal(['deu']);
    expect(toTesseractLanguages(['fr', 'es'], installed)).to.deep.equal(['deu', 'eng']);
  });

  it('lists the installed languages from tesseract itself, without osd', async () => {
    const installed = await installedLanguages();
    expect(installed.has('deu')).to.equal(true);
    expect(installed.has('eng')).to.equal(true);
    expect(installed.has('osd')).to.equal(false);
    expect(await installedLanguages()).to.equal(installed);
  });
});

describe('tesseract TSV output', () => {
  const row = (level: number, block: number, par: number, line: number, word: number, conf: number, text: string) =>
    [level, 1, block, par, line, word, 0, 0, 10, 10, conf, text].join('\t');
  const HEADER = 'level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext';

  it('rebuilds lines, paragraphs and blocks and averages the word confidences', () => {
    const tsv = [
      HEADER,
      row(1, 0, 0, 0, 0, -1, ''),
      row(4, 1, 1, 1, 0, -1, ''),
      row(5, 1, 1, 1, 1, 90, 'Erste'),
      row(5, 1, 1, 1, 2, 80, 'Zeile'),
      row(5, 1, 1, 2, 1, 70, 'zweite'),
      row(5, 1, 2, 1, 1, 60, 'Absatz'),
      row(5, 2, 1, 1, 1, 100, 'Block'),
      '',
    ].join('\n');
    expect(parseTesseractTsv(tsv)).to.deep.equal({
      text: 'Erste Zeile\nzweite\n\nAbsatz\n\nBlock',
      confidence: 80,
      words: 5,
    });
  });

  it('ignores empty words and rows without confidence', () => {
    const tsv = [HEADER, row(5, 1, 1, 1, 1, 95, ' '), row(5, 1, 1, 1, 2, -1, 'x'), row(5, 1, 1, 1, 3, 50, 'ok')].join(
      '\n',
    );
    expect(parseTesseractTsv(tsv)).to.deep.equal({ text: 'ok', confidence: 50, words: 1 });
    expect(parseTesseractTsv(HEADER)).to.deep.equal({ text: '', confidence: 0, words: 0 });
  });
});
