import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseImageList, pagesWithImages } from '../../providers/pdf/poppler';
import { expectPdfError, rejection } from '../support/assert';
import { pdfLiteral, PdfWriter } from '../support/documents/pdf-writer';

// Which pages paint an image (providers/pdf/poppler.ts `pagesWithImages`), on real poppler `pdfimages -list`, with
// every way a page can paint one written by hand: an image XObject, one inside a form XObject, an inline image
// and an image mask; and pages that paint none: text, vector lines, nothing.

const PAGES: { name: string; content: string; resources?: (img: number, form: number) => string; image: boolean }[] = [
  { name: 'text', content: `BT /F1 12 Tf 72 700 Td ${pdfLiteral('Native text page')} Tj ET`, image: false },
  {
    name: 'image XObject',
    content: 'q 200 0 0 200 0 0 cm /Im1 Do Q',
    resources: (img) => `/XObject << /Im1 ${img} 0 R >>`,
    image: true,
  },
  { name: 'vector lines', content: '10 10 m 190 190 l S 0 0 100 100 re f', image: false },
  {
    name: 'inline image',
    content: 'q 100 0 0 100 0 0 cm BI /W 2 /H 2 /CS /G /BPC 8 ID \x00\xff\xff\x00 EI Q',
    image: true,
  },
  { name: 'empty', content: '', image: false },
  { name: 'image mask', content: 'q 100 0 0 100 0 0 cm BI /W 8 /H 1 /IM true ID \xaa EI Q', image: true },
  {
    name: 'image in a form XObject',
    content: '/Fm1 Do',
    resources: (_img, form) => `/XObject << /Fm1 ${form} 0 R >>`,
    image: true,
  },
];

function imagesPdf(): Buffer {
  const w = new PdfWriter();
  const catalog = w.reserve();
  const pagesNum = w.reserve();
  const font = w.add(() => '/Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding');
  const img = w.add(
    () => '/Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray /BitsPerComponent 8',
    Buffer.from([0, 255, 255, 0]),
  );
  const form = w.add(
    () => `/Type /XObject /Subtype /Form /BBox [0 0 200 200] /Resources << /XObject << /Im1 ${img} 0 R >> >>`,
    Buffer.from('q 200 0 0 200 0 0 cm /Im1 Do Q', 'latin1'),
  );
  const kids = PAGES.map((p) => {
    const stream = w.add(() => '', Buffer.from(p.content, 'latin1'));
    const resources = `/Font << /F1 ${font} 0 R >> ${p.resources?.(img, form) ?? ''}`;
    return w.add(
      () =>
        `/Type /Page /Parent ${pagesNum} 0 R /MediaBox [0 0 200 200] /Contents ${stream} 0 R /Resources << ${resources} >>`,
    );
  });
  w.set(pagesNum, () => `/Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length}`);
  w.set(catalog, () => `/Type /Catalog /Pages ${pagesNum} 0 R`);
  return w.finish(catalog, undefined, undefined);
}

describe('pages that paint an image (poppler pdfimages -list)', function () {
  this.timeout(30_000);
  let dir: string;
  let pdf: string;
  const all = PAGES.map((_, i) => i + 1);
  const withImage = PAGES.flatMap((p, i) => (p.image ? [i + 1] : []));

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'pdf-images-'));
    pdf = path.join(dir, 'images.pdf');
    await writeFile(pdf, imagesPdf());
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('finds XObject, form, inline and mask images, and no image on text, vector and empty pages', async () => {
    const found = await pagesWithImages(pdf, all);
    for (const [i, p] of PAGES.entries()) expect(found.has(i + 1), `page ${i + 1} (${p.name})`).to.equal(p.image);
    expect([...found].sort((a, b) => a - b)).to.deep.equal(withImage);
  });

  it('answers only the asked pages, also when they are not consecutive', async () => {
    expect([...(await pagesWithImages(pdf, [1, 3, 6]))]).to.deep.equal([6]);
    expect([...(await pagesWithImages(pdf, [2]))]).to.deep.equal([2]);
    expect((await pagesWithImages(pdf, [])).size).to.equal(0);
  });

  it('refuses a page beyond the document as page_out_of_range', async () => {
    await expectPdfError(pagesWithImages(pdf, [PAGES.length + 1]), 'VALIDATION_ERROR', 'page_out_of_range');
  });

  it('rejects with the reason of an aborted signal without running poppler', async () => {
    const ac = new AbortController();
    ac.abort(new Error('stopped by the test'));
    const err = await rejection<Error>(pagesWithImages(pdf, all, { signal: ac.signal }));
    expect(err.message).to.equal('stopped by the test');
  });

  it('reads the page numbers of a listing and skips its two header lines', () => {
    const listing = [
      'page   num  type   width height color comp bpc  enc interp  object ID x-ppi y-ppi size ratio',
      '--------------------------------------------------------------------------------------------',
      '   2     0 image     827  1170  gray    1   8  image  no         6  0   100   100 2273B 0.2%',
      '  14     1 stencil     8     1  -       1   1  image  no   [inline]       6 0.720    0B 0.0%',
      '',
    ].join('\n');
    expect([...parseImageList(listing)]).to.deep.equal([2, 14]);
  });
});
