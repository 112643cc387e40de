import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { libreOfficePath } from '../../core/config/config';
import { AppError } from '../../core/errors';
import { LibreOfficeEngine } from '../../providers/office/libreoffice';
import { DEFAULT_READ_LIMITS } from '../../domain/documents/model';
import { readDocument } from '../../domain/documents/read';
import { renderDocument } from '../../domain/documents/render';
import { EngineStallError } from '../../providers/process/run-tool';
import { chaptersDocument, flatSheets, flatTitleSlides } from '../support/documents/flat-odf';
import { ROOT } from '../support/servers/processes';

// The office engine on the real LibreOffice (Debian's nogui packages, installed by the project's setup): inputs are
// flat ODF XML the test writes, so every expected heading, cell and slide title is known.

const SHEET = flatSheets({
  Prices: [
    ['Fruit', 'Price'],
    ['Quince', 4.25],
  ],
});
const SLIDES = flatTitleSlides(['Opening Gambit', 'Closing Argument']);

const pdfText = (file: string): string => execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
const pdfPages = (file: string): number =>
  Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [file], { encoding: 'utf8' }))![1]);
/** The text of one entry of a zip container (the OOXML outputs), by the system's unzip. */
const zipEntry = (file: string, entry: string): string =>
  execFileSync('unzip', ['-p', file, entry], { encoding: 'utf8' });

/** Whether `pid` runs: a zombie (killed, not yet reaped by its new parent) does not. */
const isAlive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** Processes whose command line names `needle` (the engine's profile root): none may outlive the engine. */
function processesNaming(needle: string): number[] {
  const out: number[] = [];
  for (const pid of execFileSync('ls', ['/proc'], { encoding: 'utf8' })
    .split('\n')
    .filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle) && isAlive(Number(pid))) out.push(Number(pid));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

async function expectUnprocessable(p: Promise<unknown>, reason: string): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'the conversion should have been refused').to.be.instanceOf(AppError);
  expect((err as AppError).code).to.equal('UNPROCESSABLE_INPUT');
  expect((err as AppError).status).to.equal(422);
  expect((err as AppError).details.reason).to.equal(reason);
}

describe('office engine (LibreOffice headless)', function () {
  this.timeout(120_000);
  let dir: string;
  let engine: LibreOfficeEngine;
  const soffice = libreOfficePath({ LIBREOFFICE_PATH: process.env.LIBREOFFICE_PATH });

  before(async function () {
    if (!existsSync(soffice)) throw new Error(`no LibreOffice at ${soffice}: run the project's setup (npm test does)`);
    dir = await mkdtemp(path.join(os.tmpdir(), 'office-engine-'));
    await writeFile(path.join(dir, 'ten.fodt'), chaptersDocument(10));
    await writeFile(path.join(dir, 'prices.fods'), SHEET);
    await writeFile(path.join(dir, 'talk.fodp'), SLIDES);
    engine = new LibreOfficeEngine({ sofficePath: soffice, scratchDir: dir, slots: 1 });
  });

  after(async () => {
    await engine?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a DOCX LibreOffice wrote is read by content into its headings and paragraphs, and rendered as Markdown', async () => {
    const docx = await engine.convert(path.join(dir, 'ten.fodt'), 'docx', dir);
    const read = await readDocument(await readFile(docx), DEFAULT_READ_LIMITS);
    if (read.kind !== 'model') throw new Error('a DOCX is read, not routed');
    expect(read.model.format).to.equal('docx');
    const headings = read.model.parts.flatMap((p) => p.blocks).filter((b) => b.type === 'heading');
    expect(headings.map((h) => [h.level, h.text])).to.deep.equal(
      Array.from({ length: 10 }, (_, i) => [1, `Chapter ${i + 1}`]),
    );
    const { markdown } = renderDocument(read.model, { markdown: true });
    expect(markdown).to.include('# Chapter 7\n').and.include('Paragraph 8 of chapter 10.');
  });

  it('converts a text document to DOCX and PDF, and to DOC and back to DOCX with its headings', async () => {
    const docx = await engine.convert(path.join(dir, 'ten.fodt'), 'docx', dir);
    expect(docx).to.equal(path.join(dir, 'ten.docx'));
    const xml = zipEntry(docx, 'word/document.xml');
    expect(xml).to.include('Chapter 7').and.include('Paragraph 8 of chapter 10');
    const pdf = await engine.convert(docx, 'pdf', dir);
    expect(pdfPages(pdf)).to.equal(10);
    expect(pdfText(pdf)).to.include('Chapter 10');

    const doc = path.join(dir, 'ten.doc');
    await engine.convertTo({ input: docx, output: doc, target: 'doc' });
    expect((await readFile(doc)).subarray(0, 8).toString('hex')).to.equal('d0cf11e0a1b11ae1'); // an OLE container
    const back = path.join(dir, 'back');
    execFileSync('mkdir', ['-p', back]);
    const again = await engine.convert(doc, 'docx', back);
    const backXml = zipEntry(again, 'word/document.xml');
    expect(backXml).to.include('Chapter 3');
    expect(backXml, 'the heading keeps its style').to.match(/w:pStyle w:val="Heading1"/);
  });

  it('converts a spreadsheet to XLSX, XLS and PDF, and a presentation to PPTX, PPT and PDF', async () => {
    const xlsx = await engine.convert(path.join(dir, 'prices.fods'), 'xlsx', dir);
    expect(zipEntry(xlsx, 'xl/workbook.xml')).to.include('name="Prices"');
    expect(zipEntry(xlsx, 'xl/sharedStrings.xml')).to.include('Quince');
    const xls = path.join(dir, 'prices.xls');
    await engine.convertTo({ input: xlsx, output: xls, target: 'xls' });
    const fromXls = await engine.convert(xls, 'pdf', path.join(dir, 'back'));
    expect(pdfText(fromXls)).to.include('Quince').and.include('4.25');

    const pptx = await engine.convert(path.join(dir, 'talk.fodp'), 'pptx', dir);
    expect(zipEntry(pptx, 'ppt/slides/slide2.xml')).to.include('Closing Argument');
    const ppt = path.join(dir, 'talk.ppt');
    await engine.convertTo({ input: pptx, output: ppt, target: 'ppt' });
    const fromPpt = await engine.convert(ppt, 'pdf', path.join(dir, 'back'));
    expect(pdfPages(fromPpt)).to.equal(2);
    expect(pdfText(fromPpt)).to.include('Opening Gambit');
  });

  it('refuses a password-protected document, a corrupt one and an impossible conversion with 422', async () => {
    const locked = path.join(dir, 'locked.odt');
    await engine.convertTo({
      input: path.join(dir, 'ten.fodt'),
      output: locked,
      target: 'odt',
      encryptionPassword: 'hunter2',
    });
    await expectUnprocessable(engine.convert(locked, 'pdf', dir), 'password_protected');

    const garbage = path.join(dir, 'garbage.docx');
    await writeFile(garbage, Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)));
    await expectUnprocessable(engine.convert(garbage, 'pdf', dir), 'corrupt');

    const docx = await engine.convert(path.join(dir, 'ten.fodt'), 'docx', dir);
    const truncated = path.join(dir, 'truncated.docx');
    await writeFile(truncated, (await readFile(docx)).subarray(0, 1500));
    await expectUnprocessable(engine.convert(truncated, 'pdf', dir), 'corrupt');

    await expectUnprocessable(engine.convert(path.join(dir, 'prices.fods'), 'pptx', dir), 'unsupported_conversion');
    // The engine is still the same warm one after refusals.
    expect(pdfText(await engine.convert(path.join(dir, 'talk.fodp'), 'pdf', dir))).to.include('Closing Argument');
  });

  it('never runs a document’s macro, one that runs as soon as a user allows macros', async () => {
    const script = path.join(ROOT, 'test/support/documents/macro_document.py');
    const macroDoc = path.join(dir, 'macro.odt');
    const marker = path.join(dir, 'MACRO_RAN');
    const py = (...args: string[]) =>
      execFileSync('/usr/bin/python3', [script, ...args], { timeout: 120_000, stdio: 'ignore' });
    py('make', path.join(dir, 'macro-profile'), macroDoc, marker);
    // The control: opened as by a user who allows macros, the macro runs and writes the marker.
    py('allow', path.join(dir, 'macro-profile'), macroDoc);
    expect(existsSync(marker), 'the macro runs when macros are allowed').to.equal(true);
    await rm(marker);
    // The engine converts it, to PDF and to DOCX, and the macro never runs.
    const pdf = await engine.convert(macroDoc, 'pdf', dir);
    expect(pdfText(pdf)).to.include('A document with a macro.');
    await engine.convert(macroDoc, 'docx', dir);
    expect(existsSync(marker), 'the engine ran the macro').to.equal(false);
  });

  it('converts a warm 10-page DOCX to PDF in under a second', async () => {
    const docx = await engine.convert(path.join(dir, 'ten.fodt'), 'docx', dir);
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      await engine.convert(docx, 'pdf', dir);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    console.log(`      warm 10-page DOCX -> PDF: ${times.map((t) => t.toFixed(0)).join(', ')} ms`);
    expect(times[1], 'median of three warm conversions').to.be.below(1000);
  });

  it('kills LibreOffice when the call is aborted, and starts it again for the next one', async () => {
    const big = path.join(dir, 'big.fodt');
    await writeFile(big, chaptersDocument(300, 20));
    const before = engine.pids();
    expect(before, 'the engine is warm from the earlier tests').to.have.length(2);
    const ac = new AbortController();
    const running = engine.convert(big, 'pdf', dir, { signal: ac.signal });
    setTimeout(() => ac.abort(new Error('cancelled by the test')), 300);
    const err = await running.then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as Error)?.message).to.equal('cancelled by the test');
    await new Promise((r) => setTimeout(r, 200));
    for (const pid of before) expect(isAlive(pid), `pid ${pid} killed`).to.equal(false);
    expect(processesNaming(path.join(dir, 'docproc-office-'))).to.deep.equal([]);

    const pdf = await engine.convert(path.join(dir, 'talk.fodp'), 'pdf', dir);
    expect(pdfText(pdf)).to.include('Opening Gambit');
    expect(engine.pids()).to.have.length(2).and.not.include.members(before);
  });

  it('converts a document whose LibreOffice dies under it once more by a soffice of its own, then keeps one again', async () => {
    const before = engine.pids();
    expect(before, 'the engine is warm from the earlier tests').to.have.length(2);
    const [, soffice] = before;
    // soffice dies while it lays out a 300-chapter document: what LibreOffice 7.4 does by itself on some files.
    const running = engine.convert(path.join(dir, 'big.fodt'), 'pdf', path.join(dir, 'crash'));
    execFileSync('mkdir', ['-p', path.join(dir, 'crash')]);
    setTimeout(() => process.kill(-soffice!, 'SIGKILL'), 300); // its process group: soffice.bin with it
    const pdf = await running;
    expect(pdfPages(pdf)).to.be.above(300);
    const last = execFileSync('pdftotext', ['-f', '300', pdf, '-'], { encoding: 'utf8' });
    expect(last).to.include('Paragraph 20 of chapter 300.');
    expect(isAlive(soffice!)).to.equal(false);
    // The one-shot soffice is gone; the next call starts a kept LibreOffice again.
    expect(engine.pids()).to.deep.equal([]);
    expect(pdfText(await engine.convert(path.join(dir, 'talk.fodp'), 'pdf', dir))).to.include('Opening Gambit');
    expect(engine.pids()).to.have.length(2).and.not.include.members(before);
  });

  it('kills a conversion that stalls past the stall timeout with a retryable EngineStallError', async () => {
    const stalling = new LibreOfficeEngine({
      sofficePath: soffice,
      scratchDir: path.join(dir, 's'),
      stallTimeoutMs: 4000,
    });
    try {
      await stalling.convert(path.join(dir, 'talk.fodp'), 'pdf', dir); // warm: the start is not the conversion
      const pids = stalling.pids();
      // A LibreOffice that stops answering, however fast the machine: its processes stopped (SIGSTOP), as a hung
      // engine is. Only the engine's own timeout ends the wait; its SIGKILL ends stopped processes too.
      for (const pid of pids) process.kill(pid, 'SIGSTOP');
      const err = await stalling.convert(path.join(dir, 'talk.fodp'), 'pdf', dir).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(EngineStallError);
      expect((err as EngineStallError).retryable).to.equal(true);
      await new Promise((r) => setTimeout(r, 200));
      for (const pid of pids) expect(isAlive(pid)).to.equal(false);
    } finally {
      await stalling.close();
    }
  });

  it('leaves no process and no profile behind after close', async () => {
    const other = new LibreOfficeEngine({ sofficePath: soffice, scratchDir: path.join(dir, 'c'), slots: 2 });
    await Promise.all([
      other.convert(path.join(dir, 'talk.fodp'), 'pdf', path.join(dir, 'c')),
      other.convert(path.join(dir, 'prices.fods'), 'pdf', path.join(dir, 'c')),
    ]);
    const pids = other.pids();
    expect(pids).to.have.length(4); // two slots, each a bridge and its soffice
    await other.close();
    await new Promise((r) => setTimeout(r, 200));
    for (const pid of pids) expect(isAlive(pid)).to.equal(false);
    expect(processesNaming(path.join(dir, 'c', 'docproc-office-'))).to.deep.equal([]);
    expect(existsSync(path.join(dir, 'c', `docproc-office-${process.pid}`))).to.equal(false);
  });
});
