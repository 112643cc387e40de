import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { ffmpeg } from '../media/media-factory';
import { buildPdf, rasterize, scannedPdf, wrapText } from '../documents/pdf-factory';
import { grayPng } from '../documents/png';
import { libreOfficePath } from '../../../core/config/config';
import { LibreOfficeEngine } from '../../../providers/office/libreoffice';
import { flatSheets } from '../documents/flat-odf';
import { emlWithAttachments } from '../documents/mail-files';
import { ROOT } from './processes';
import { sessionPage } from './session-site';
import { SENTENCES, speak } from '../media/speech-samples';

/** What the README's examples read: text that the answers can be checked against. */
export const README_TEXTS = {
  /** A German paragraph, typeset and scanned (no text layer) for `local_ocr` with `ocr_language=de`. */
  scan: 'Die Sitzung begann pünktlich um neun Uhr. Der Vorstand stellte den Haushalt für das kommende Jahr vor.',
  /** The text layer of the PDFs (documents, attachments, reports). */
  pdf: ['Open maps for everyone', 'Vector tiles served from a single laptop'],
  /** The text of the image for image OCR. */
  image: 'The quarterly report shows that sales grew by twelve percent in the northern region.',
  spoken: SENTENCES.en,
};

/** The README's spreadsheet: the second sheet is the one its example reads (`page_start=2`). */
const README_SHEETS = flatSheets({
  Prices: [
    ['Fruit', 'Price'],
    ['Quince', 4.25],
  ],
  Stock: [
    ['Fruit', 'Crates'],
    ['Quince', 12],
  ],
});

/** A text PDF of two pages, one line each. */
const textPdf = (title: string) =>
  buildPdf({ pages: README_TEXTS.pdf.map((line) => ({ kind: 'lines' as const, lines: [line], size: 24 })), title });

/** A grayscale PNG of typeset text (poppler renders a generated PDF at 150 dpi; the scanlines are deflated here). */
async function textPng(text: string): Promise<Buffer> {
  const image = await rasterize(buildPdf({ pages: [{ kind: 'lines', lines: wrapText(text, 60), size: 14 }] }), 150);
  const rows = Buffer.alloc((image.width + 1) * image.height);
  for (let y = 0; y < image.height; y++)
    image.pixels.copy(rows, y * (image.width + 1) + 1, y * image.width, (y + 1) * image.width);
  return grayPng(image.width, image.height, 8, deflateSync(rows));
}

export interface ReadmeFiles {
  pdf: Buffer;
  png: Buffer;
  mp4: Buffer;
  /** The repository's `samples/sample.docx`. */
  docx: Buffer;
}

/**
 * The files the README's examples name, made by the real engines into `dir` (the directory the examples run in):
 * `scan.pdf` (an image-only scan), `doc.pdf` and `report.pdf` (text PDFs), `scan.png`, `talk.mp3` and `talk.mp4`
 * (espeak-ng's speech; the video over ffmpeg's test picture), `prices.xlsx` (two sheets, written by LibreOffice),
 * `mail.eml` (an HTML body, the text PDF and a CSV attached), and `samples/` (the repository's, as the README's
 * `samples/sample.pdf` is). Answers the bytes the loopback site serves too.
 */
export async function writeReadmeFiles(dir: string): Promise<ReadmeFiles> {
  const pdf = textPdf('Report');
  fs.writeFileSync(path.join(dir, 'doc.pdf'), pdf);
  fs.writeFileSync(path.join(dir, 'report.pdf'), pdf);
  fs.writeFileSync(path.join(dir, 'scan.pdf'), await scannedPdf(README_TEXTS.scan, 200));
  const png = await textPng(README_TEXTS.image);
  fs.writeFileSync(path.join(dir, 'scan.png'), png);
  fs.symlinkSync(path.join(ROOT, 'samples'), path.join(dir, 'samples'));
  const media = fs.mkdtempSync(path.join(dir, 'media-'));
  const wav = await speak(README_TEXTS.spoken, 'en', media, 'talk');
  await ffmpeg('-i', wav, '-c:a', 'libmp3lame', '-b:a', '64k', path.join(dir, 'talk.mp3'));
  const mp4 = path.join(dir, 'talk.mp4');
  await ffmpeg(
    ...['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10', '-i', wav],
    ...['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', mp4],
  );
  fs.rmSync(media, { recursive: true, force: true });
  const office = new LibreOfficeEngine({
    sofficePath: libreOfficePath({ LIBREOFFICE_PATH: process.env.LIBREOFFICE_PATH }),
    scratchDir: dir,
  });
  try {
    fs.writeFileSync(path.join(dir, 'prices.fods'), README_SHEETS);
    await office.convertTo({
      input: path.join(dir, 'prices.fods'),
      output: path.join(dir, 'prices.xlsx'),
      target: 'xlsx',
    });
  } finally {
    await office.close();
  }
  fs.writeFileSync(
    path.join(dir, 'mail.eml'),
    emlWithAttachments({
      from: 'Ada <ada@example.org>',
      to: 'Bob <bob@example.org>',
      subject: 'Workshop notes',
      date: 'Tue, 01 Dec 2026 10:00:00 +0000',
      html: '<h1>Notes</h1><p>The <b>slides</b> and the sizes are attached.</p>',
      attachments: [
        { filename: 'slides.pdf', type: 'application/pdf', bytes: pdf },
        { filename: 'sizes.csv', type: 'text/csv', bytes: Buffer.from('Region,MB\r\nBerlin,310\r\n') },
      ],
    }),
  );
  return { pdf, png, mp4: fs.readFileSync(mp4), docx: fs.readFileSync(path.join(ROOT, 'samples', 'sample.docx')) };
}

export interface ReadmeSite {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Paths requested, in order, with the status answered. */
  hits: { path: string; status: number }[];
  close(): Promise<void>;
}

/**
 * A website on 127.0.0.1 standing in for the README's `https://example.org/…`, answering by the shape of the path so
 * any README URL of that kind is served: `*.pdf` a text PDF, `*.png` the text image, `*.mp4` the talk, `*.docx` the
 * sample Word document, a path ending
 * in `/attachments/` a page linking `slides.pdf`, any other path ending in `/` a session page (navigation and footer
 * around its `<main>`); anything else 404.
 */
export async function startReadmeSite(files: ReadmeFiles): Promise<ReadmeSite> {
  const hits: ReadmeSite['hits'] = [];
  const server = http.createServer((req, res) => {
    const p = decodeURIComponent((req.url ?? '/').split('?')[0]);
    const send = (status: number, type: string, body: Buffer | string) => {
      hits.push({ path: p, status });
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) }).end(body);
    };
    if (p.endsWith('.pdf')) return send(200, 'application/pdf', files.pdf);
    if (p.endsWith('.png')) return send(200, 'image/png', files.png);
    if (p.endsWith('.mp4')) return send(200, 'video/mp4', files.mp4);
    if (p.endsWith('.docx'))
      return send(200, 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', files.docx);
    if (p.endsWith('/attachments/'))
      return send(200, 'text/html; charset=utf-8', '<html><body><a href="slides.pdf">Slides (PDF)</a></body></html>');
    if (p.endsWith('/')) {
      const name = p.split('/').filter(Boolean).pop() ?? 'home';
      return send(
        200,
        'text/html; charset=utf-8',
        sessionPage(`Session ${name}`, `Abstract of ${name}: ${SENTENCES.en}`),
      );
    }
    send(404, 'text/plain', 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
