import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { extractEmbeddedImages } from '../../providers/pdf/render';
import { AppError } from '../../core/errors';
import { rejection } from '../support/assert';
import { imagePdf } from '../support/documents/image-pdf';
import { buildPdf, scannedPdf } from '../support/documents/pdf-factory';
import { tempDir } from '../support/servers/engines';

const filesUnder = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir) : []);

describe('embedded images of a PDF', () => {
  it('extracts one PNG per scanned page, named by page, only for the pages asked', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'scan.pdf');
    fs.writeFileSync(file, await scannedPdf(['Erste Seite', 'Zweite Seite', 'Dritte Seite'], 100));
    const all = await extractEmbeddedImages(file, 1, 3, path.join(dir, 'all'));
    expect(all.map((f) => path.basename(f))).to.deep.equal(['img-001-000.png', 'img-002-001.png', 'img-003-002.png']);
    expect(fs.readFileSync(all[0]).subarray(1, 4).toString()).to.equal('PNG');
    const some = await extractEmbeddedImages(file, 2, 2, path.join(dir, 'some'));
    expect(some).to.have.length(1);
    expect(path.basename(some[0])).to.match(/^img-002-/);
  });

  it('finds none in a text-only PDF', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'text.pdf');
    fs.writeFileSync(file, buildPdf({ pages: [{ kind: 'lines', lines: ['Nur Text'], size: 12, leading: 16 }] }));
    expect(await extractEmbeddedImages(file, 1, 1, path.join(dir, 'out'))).to.deep.equal([]);
  });

  it('refuses pages with more images than the limit with 422 before writing a file (a PDF of 3,000 tiny images)', async function () {
    this.timeout(60_000);
    const dir = tempDir();
    const file = path.join(dir, 'many.pdf');
    fs.writeFileSync(file, imagePdf({ width: 2, height: 2, draws: 3000 }));
    const out = path.join(dir, 'out');
    const err = await rejection(extractEmbeddedImages(file, 1, 1, out, { limits: { maxImages: 500 } }));
    expect(err).to.be.instanceOf(AppError);
    expect([err.code, err.status]).to.deep.equal(['UNPROCESSABLE_INPUT', 422]);
    expect(err.details).to.deep.include({ reason: 'embedded_images_over_limit', limit_images: 500 });
    expect(filesUnder(out)).to.deep.equal([]);
  });

  it('refuses an image declared over the pixel limit without decoding it (12,000 x 12,000 in 140 KB)', async function () {
    this.timeout(60_000);
    const dir = tempDir();
    const file = path.join(dir, 'huge.pdf');
    fs.writeFileSync(file, imagePdf({ width: 12_000, height: 12_000 }));
    const out = path.join(dir, 'out');
    const t0 = Date.now();
    const err = await rejection(extractEmbeddedImages(file, 1, 1, out));
    expect(err.code).to.equal('UNPROCESSABLE_INPUT');
    expect(err.details).to.deep.include({ page: 1, width: 12_000, height: 12_000, limit_pixels: 100_000_000 });
    expect(filesUnder(out)).to.deep.equal([]);
    expect(Date.now() - t0, 'answered from the listing, not after decoding 144 M pixels').to.be.below(20_000);
  });

  it('refuses images whose bytes together pass the byte limit, leaving no file behind', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'heavy.pdf');
    // 20 draws of a 300 x 300 grey image: 90 KB each uncompressed, 1.8 MB together.
    fs.writeFileSync(file, imagePdf({ width: 300, height: 300, draws: 20, shade: 128 }));
    const out = path.join(dir, 'out');
    const err = await rejection(extractEmbeddedImages(file, 1, 1, out, { limits: { maxBytes: 1_000_000 } }));
    expect(err.code).to.equal('UNPROCESSABLE_INPUT');
    expect(err.details).to.deep.include({ limit_bytes: 1_000_000 });
    expect(filesUnder(out)).to.deep.equal([]);
    // Within the limits the same document extracts as before.
    const all = await extractEmbeddedImages(file, 1, 1, path.join(dir, 'ok'), { limits: { maxBytes: 4_000_000 } });
    expect(all).to.have.length(20);
  });

  it('counts the bytes pdfimages writes, not only those declared: 3,000 files of 4 pixels pass a 100 KB limit on disk', async function () {
    this.timeout(60_000);
    const dir = tempDir();
    const file = path.join(dir, 'tiny.pdf');
    // Declared: 3,000 x 4 bytes; written: a PNG of about 70 bytes each, 200 KB together.
    fs.writeFileSync(file, imagePdf({ width: 2, height: 2, draws: 3000 }));
    const out = path.join(dir, 'out');
    const err = await rejection(
      extractEmbeddedImages(file, 1, 1, out, { limits: { maxBytes: 100_000, maxImages: 5000 } }),
    );
    expect(err.code).to.equal('UNPROCESSABLE_INPUT');
    expect(err.details).to.deep.include({ limit_bytes: 100_000 });
    expect(fs.existsSync(out), 'the files written are removed').to.equal(false);
  });
});
