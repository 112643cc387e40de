import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { extractEmbeddedImages } from '../../providers/pdf/render';
import { buildPdf, scannedPdf } from '../support/pdf-factory';
import { tempDir } from '../support/servers';

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
});
