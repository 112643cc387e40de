import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { deflateSync } from 'node:zlib';
import { ContentDrawings } from '../../domain/pdf/content-drawings';
import type { PageDrawings } from '../../domain/pdf/drawings';
import { markdownPageLayouts } from '../../providers/pdf/markdown-layouts';
import { PdfUnsupported } from '../../domain/pdf/pdf-syntax';
import { openPdf } from '../../providers/pdf/pdfjs';
import { pdfjsThreadsRunning } from '../../providers/pdf/pdfjs-thread';
import { htmlToPdf, structuredDoc } from '../support/documents/html-pdf';
import { buildPdf } from '../support/documents/pdf-factory';

// Our content-stream reader of drawings (rulings, bullet marks) against real pdf.js's operator list on the same
// files: generated ones that use every path operator, transforms, nested forms, inline images and strings that look
// like operators; Chromium's and cairo's output; the same file written with an object stream and a cross-reference
// stream, and with an incremental update. An encrypted file is left to pdf.js.

const run = promisify(execFile);

/** pdf.js's drawings of each page. */
async function pdfjsDrawings(bytes: Buffer): Promise<PageDrawings[]> {
  const doc = await openPdf(bytes);
  try {
    const out: PageDrawings[] = [];
    for (let p = 1; p <= doc.pageCount; p++) out.push(await doc.pageDrawings(p));
    return out;
  } finally {
    await doc.close();
  }
}

function ourDrawings(bytes: Buffer): PageDrawings[] {
  const doc = new ContentDrawings(bytes);
  return Array.from({ length: doc.pageCount }, (_, i) => doc.pageDrawings(i + 1));
}

// A table's rulings as strokes, a filled thin rule, rectangles (one of zero height), curves of all three kinds, a
// clipping path (not drawn), a transformed and a nested form, a bullet drawn as a circle of curves, text whose strings
// hold operator names and parentheses, a marked-content dictionary, a comment, and an inline image whose data holds
// the bytes "EI" inside.
const CIRCLE = (cx: number, cy: number, r: number) => {
  const k = 0.5523 * r;
  return (
    `${cx + r} ${cy} m ${cx + r} ${cy + k} ${cx + k} ${cy + r} ${cx} ${cy + r} c ` +
    `${cx - k} ${cy + r} ${cx - r} ${cy + k} ${cx - r} ${cy} c ${cx - r} ${cy - k} ${cx - k} ${cy - r} ${cx} ${cy - r} c ` +
    `${cx + k} ${cy - r} ${cx + r} ${cy - k} ${cx + r} ${cy} c f`
  );
};
const DRAWING = [
  '% a comment with re and S in it',
  'q 0.5 w 72 700 m 523 700 l S 72 680 m 523 680 l 523 660 l S Q',
  'q 1 0 0 1 10 -20 cm 72 640 451 0.8 re f Q',
  '72 600 100 0 re S 72 560 451 30 re S',
  '100 500 m 150 550 200 450 250 500 c 300 520 350 500 v 400 480 450 500 y S',
  '72 400 300 300 re W n',
  `q ${CIRCLE(80, 380, 2.5)} Q`,
  '/P << /MCID 0 /Alt (a (nested) string with re S) >> BDC EMC',
  'BT /F1 10 Tf 100 300 Td [(S) -120 (re\\) f) 40 (q Q)] TJ ET',
  'BI /W 4 /H 1 /BPC 8 /CS /G ID \x00EI\x01 EI',
  '72 250 451 0.5 re f',
  'q 0.5 0 0 0.5 100 100 cm /Fa Do Q',
  '/Fb Do',
  's',
  '72 200 m 300 200 l 300 150 l s',
  '72 120 m 400 120 l h b',
].join('\n');
const FORMS = {
  Fa: { content: '0 0 m 400 0 l S 0 0 400 1 re f /Fb Do', matrix: [1, 0, 0, 1, 20, 30] },
  Fb: { content: '60 90 m 60 300 l S /Fb Do' },
};
const CELLS = [0, 1, 2, 3].flatMap((row) =>
  ['Name', 'Value', 'Unit'].map((t, col) => ({ text: `${t} ${row}`, x: 80 + col * 150, y: 690 - row * 20, size: 10 })),
);

describe('Drawings from content streams (ours) against pdf.js', function () {
  this.timeout(120_000);
  let dir: string;
  let fixture: Buffer;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'content-drawings-'));
    fixture = buildPdf({
      pages: [
        { kind: 'drawing', runs: CELLS, content: DRAWING, forms: FORMS },
        { kind: 'drawing', content: DRAWING, forms: FORMS, compress: true, cropBox: [20, 30, 580, 820] },
        { kind: 'lines', lines: ['No drawings here.'] },
      ],
    });
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('gives what pdf.js gives for every path operator, transforms, forms, inline images and odd strings', async () => {
    const ours = ourDrawings(fixture);
    expect(ours).to.deep.equal(await pdfjsDrawings(fixture));
    // Not empty: strokes, the thin fills, form rulings; the circle is a mark; the clip is not drawn.
    expect(ours[0].segments.length).to.be.above(15);
    expect(ours[0].marks).to.have.length(1);
    expect(ours[2]).to.deep.equal({ segments: [], marks: [] });
    // The second page's view starts at (20, 30): the same drawings moved by it.
    expect(ours[1].segments[0]).to.deep.equal({
      x0: ours[0].segments[0].x0 - 20,
      x1: ours[0].segments[0].x1 - 20,
      y0: ours[0].segments[0].y0 - 30,
      y1: ours[0].segments[0].y1 - 30,
    });
  });

  it('reads an object stream, a cross-reference stream with a PNG predictor, and an incremental update', async () => {
    const compact = toXrefStream(fixture);
    expect(compact.includes(Buffer.from('/Type /ObjStm'))).to.equal(true);
    expect(ourDrawings(compact)).to.deep.equal(await pdfjsDrawings(compact));
    expect(ourDrawings(compact)).to.deep.equal(ourDrawings(fixture));
    // An update replaces the third page's content: both readers see the new drawing.
    const updated = appendContentUpdate(compact, contentOf(fixture, 3), '72 500 m 523 500 l S');
    const ours = ourDrawings(updated);
    expect(ours).to.deep.equal(await pdfjsDrawings(updated));
    expect(ours[2].segments).to.deep.equal([{ x0: 72, y0: 500, x1: 523, y1: 500 }]);
  });

  it("gives pdf.js's drawings for Chromium's and cairo's output", async () => {
    const report = await htmlToPdf(structuredDoc().html, { pageHeaders: true });
    const ours = ourDrawings(report);
    expect(ours).to.deep.equal(await pdfjsDrawings(report));
    expect(ours.reduce((n, d) => n + d.segments.length, 0)).to.be.above(20);
    expect(ours.reduce((n, d) => n + d.marks.length, 0)).to.be.at.least(3);
    const src = path.join(dir, 'report.pdf');
    await writeFile(src, report);
    await run('pdftocairo', ['-pdf', src, path.join(dir, 'cairo.pdf')]);
    const cairo = await readFile(path.join(dir, 'cairo.pdf'));
    expect(ourDrawings(cairo)).to.deep.equal(await pdfjsDrawings(cairo));
  });

  it('leaves an encrypted file to pdf.js, and the Markdown layouts get the same drawings from it', async () => {
    const locked = buildPdf({
      pages: [{ kind: 'drawing', runs: CELLS, content: DRAWING, forms: FORMS }],
      userPassword: '',
    });
    expect(() => new ContentDrawings(locked)).to.throw(PdfUnsupported);
    const plainFile = path.join(dir, 'plain.pdf');
    const lockedFile = path.join(dir, 'locked.pdf');
    await writeFile(plainFile, buildPdf({ pages: [{ kind: 'drawing', runs: CELLS, content: DRAWING, forms: FORMS }] }));
    await writeFile(lockedFile, locked);
    const plain = (await markdownPageLayouts(plainFile, [1])).get(1)!;
    const viaPdfJs = (await markdownPageLayouts(lockedFile, [1])).get(1)!;
    // The grid of cells asks for drawings: the page has its rulings from either reader.
    expect(plain.segments.length).to.be.above(15);
    expect(viaPdfJs.segments).to.deep.equal(plain.segments);
    expect(pdfjsThreadsRunning()).to.equal(0);
  });

  it('refuses what it cannot read exactly as unsupported, never as a wrong answer', () => {
    const cut = fixture.subarray(0, fixture.length - 40); // no startxref
    expect(() => new ContentDrawings(cut)).to.throw(PdfUnsupported);
    const text = fixture.toString('latin1');
    // A cross-reference that points one object off.
    const off = Buffer.from(
      text.replace(/(\d{10}) 00000 n \n/, (_m, o: string) => `${String(Number(o) + 7).padStart(10, '0')} 00000 n \n`),
      'latin1',
    );
    expect(() => ourDrawings(off)).to.throw(PdfUnsupported);
    // Forms that each draw the next four times: millions of operators from a few bytes. Past the page's budget the
    // reader stops (pdf.js, in a thread it can stop, gets the file).
    const forms = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [
        `F${i}`,
        { content: i < 11 ? `/F${i + 1} Do `.repeat(4) : '0 0 m 9 0 l n' },
      ]),
    );
    const bomb = buildPdf({ pages: [{ kind: 'drawing', content: '/F0 Do', forms }] });
    expect(() => ourDrawings(bomb)).to.throw(PdfUnsupported, 'too many operators');
  });

  it('reads damaged copies of a file or refuses them as unsupported, never with another error', async () => {
    // 400 copies of the compact fixture with 1–8 bytes changed at random (a fixed seed), a fifth of them cut short.
    const base = toXrefStream(fixture);
    let seed = 25;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const outcomes = { read: 0, unsupported: 0 };
    for (let i = 0; i < 400; i++) {
      const b = Buffer.from(base);
      for (let k = 1 + Math.floor(rnd() * 8); k > 0; k--) b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
      const copy = rnd() < 0.2 ? b.subarray(0, Math.floor(rnd() * b.length)) : b;
      try {
        ourDrawings(copy);
        outcomes.read++;
      } catch (err) {
        if (!(err instanceof PdfUnsupported)) throw err;
        outcomes.unsupported++;
      }
    }
    expect(outcomes.read).to.be.above(0);
    expect(outcomes.unsupported).to.be.above(0);
    // One damaged copy through the Markdown layouts: an answer, or poppler's contract error; no thread left.
    const damaged = path.join(dir, 'damaged.pdf');
    await writeFile(damaged, Buffer.concat([base.subarray(0, 600), Buffer.alloc(40, 0x41), base.subarray(640)]));
    await markdownPageLayouts(damaged, [1]).catch((err: unknown) => {
      expect((err as { code?: string }).code).to.equal('UNPROCESSABLE_INPUT');
    });
    expect(pdfjsThreadsRunning()).to.equal(0);
  });
});

/**
 * The same PDF with its dictionaries in one object stream and a cross-reference stream (W [1 4 2], PNG Up predictor),
 * as pdfTeX and most writers of today save. Reads the regular output of `buildPdf` (no encryption).
 */
function toXrefStream(pdf: Buffer): Buffer {
  const text = pdf.toString('latin1');
  const objects = [...text.matchAll(/(\d+) 0 obj\n([\s\S]*?)\nendobj\n/g)].map((m) => ({
    num: Number(m[1]),
    body: m[2],
  }));
  const root = /\/Root (\d+) 0 R/.exec(text)![1];
  const plain = objects.filter((o) => !o.body.includes('\nstream\n'));
  const streams = objects.filter((o) => o.body.includes('\nstream\n'));
  const chunks: Buffer[] = [Buffer.from('%PDF-1.5\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let size = chunks[0].length;
  const push = (s: string | Buffer) => {
    const b = typeof s === 'string' ? Buffer.from(s, 'latin1') : s;
    chunks.push(b);
    size += b.length;
  };
  const entries = new Map<number, [number, number, number]>();
  for (const o of streams) {
    entries.set(o.num, [1, size, 0]);
    push(`${o.num} 0 obj\n${o.body}\nendobj\n`);
  }
  const objStmNum = objects.length + 1;
  let header = '';
  let body = '';
  plain.forEach((o, i) => {
    header += `${o.num} ${body.length} `;
    body += `${o.body}\n`;
    entries.set(o.num, [2, objStmNum, i]);
  });
  const objStm = deflateSync(Buffer.from(header + body, 'latin1'));
  entries.set(objStmNum, [1, size, 0]);
  push(
    `${objStmNum} 0 obj\n<< /Type /ObjStm /N ${plain.length} /First ${header.length} /Filter /FlateDecode /Length ${objStm.length} >>\nstream\n`,
  );
  push(objStm);
  push('\nendstream\nendobj\n');
  const xrefNum = objStmNum + 1;
  entries.set(xrefNum, [1, size, 0]);
  const rows: Buffer[] = [];
  let prev = Buffer.alloc(7);
  for (let n = 0; n <= xrefNum; n++) {
    const [type, a, b] = entries.get(n) ?? [0, 0, n === 0 ? 65535 : 0];
    const row = Buffer.alloc(7);
    row[0] = type;
    row.writeUInt32BE(a, 1);
    row.writeUInt16BE(b, 5);
    // PNG "Up": each byte minus the one above it.
    rows.push(Buffer.from([2]), Buffer.from(row.map((v, i) => (v - prev[i]) & 0xff)));
    prev = row;
  }
  const xref = deflateSync(Buffer.concat(rows));
  const xrefAt = size;
  push(
    `${xrefNum} 0 obj\n<< /Type /XRef /Size ${xrefNum + 1} /W [1 4 2] /Root ${root} 0 R /Filter /FlateDecode ` +
      `/DecodeParms << /Predictor 12 /Columns 7 >> /Length ${xref.length} >>\nstream\n`,
  );
  push(xref);
  push(`\nendstream\nendobj\nstartxref\n${xrefAt}\n%%EOF\n`);
  return Buffer.concat(chunks);
}

/** The number of page `page`'s content object in a `buildPdf` output. */
const contentOf = (pdf: Buffer, page: number) =>
  Number([...pdf.toString('latin1').matchAll(/\/Type \/Page \/Parent[^\n]*?\/Contents (\d+) 0 R/g)][page - 1][1]);

/** An incremental update (a classic table section with /Prev) giving object `contentNum` a new stream. */
function appendContentUpdate(pdf: Buffer, contentNum: number, content: string): Buffer {
  const text = pdf.toString('latin1');
  const prevXref = Number(/startxref\n(\d+)\n%%EOF\n$/.exec(text)![1]);
  const size = Number(/\/Size (\d+)/.exec(text)![1]);
  const root = /\/Root (\d+) 0 R/.exec(text)![1];
  const at = pdf.length;
  const obj = `${contentNum} 0 obj\n<< /Length ${content.length} >>\nstream\n${content}\nendstream\nendobj\n`;
  const xrefAt = at + obj.length;
  const update =
    obj +
    `xref\n0 1\n0000000000 65535 f \n${contentNum} 1\n${String(at).padStart(10, '0')} 00000 n \n` +
    `trailer\n<< /Size ${size} /Root ${root} 0 R /Prev ${prevXref} >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return Buffer.concat([pdf, Buffer.from(update, 'latin1')]);
}
