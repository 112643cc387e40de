import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { useStack, type Stack } from '../support/servers/stack';
import { htmlToPdf, structuredDoc, type StructuredDoc } from '../support/documents/html-pdf';
import { okData as ok, postPdf } from '../support/clients/pdf-http';
import { buildPdf, rasterize, scannedPdf, wrapText } from '../support/documents/pdf-factory';
import { textLayerWords, type TextLayerWord } from '../support/documents/text-layer-words';

// output_format=markdown (contract §9) on the real API and worker: documents of known structure printed by Chromium,
// read by pdf.js (fonts, rulings, outline), and a scan read by tesseract.

const row = (cells: string[]) => `| ${cells.join(' | ')} |`;

/** The text layer's words of a PDF in memory (`textLayerWords` reads a file). */
async function layerWordsOf(pdf: Buffer): Promise<TextLayerWord[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'docproc-bbox-'));
  try {
    await writeFile(path.join(dir, 'in.pdf'), pdf);
    return await textLayerWords(path.join(dir, 'in.pdf'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('PDF to Markdown on the real engine', function () {
  this.timeout(120_000);
  let s: Stack;
  useStack((stack) => (s = stack));
  let doc: StructuredDoc;
  let pdf: Buffer;

  before(async () => {
    doc = structuredDoc();
    // With Chromium's own running header and footer (date, title, address, page n/m) on every page.
    pdf = await htmlToPdf(doc.html, { pageHeaders: true });
  });

  it('gives headings, column paragraphs in reading order, lists, tables (one across the page break) and code', async () => {
    const data = ok(await postPdf(s, { output_format: 'markdown' }, pdf));
    const mdText: string = data.markdown;
    const lines = mdText.split('\n');
    // Headings with their levels, in document order.
    const headings = lines.filter((l) => /^#{1,6} /.test(l));
    expect(headings).to.deep.equal(doc.headings.map((h) => `${'#'.repeat(h.level)} ${h.text}`));
    // Each paragraph of the two columns whole, on one line, in reading order (left column first).
    const at = doc.columnParagraphs.map((p) => lines.indexOf(p));
    expect(
      at.every((i) => i >= 0),
      mdText.slice(0, 3000),
    ).to.equal(true);
    expect(at).to.deep.equal([...at].sort((a, b) => a - b));
    // Lists.
    expect(mdText).to.include(doc.bullets.map((b) => `- ${b}`).join('\n'));
    expect(mdText).to.include(doc.steps.map((b, i) => `${i + 1}. ${b}`).join('\n'));
    // The unruled table.
    expect(mdText).to.include(
      [row(doc.unruled[0]), row(doc.unruled[0].map(() => '---')), ...doc.unruled.slice(1).map(row)].join('\n'),
    );
    // The ruled table, across the page break: one table, its header once, every row in order.
    const ruled = [row(doc.ruledHeader), row(doc.ruledHeader.map(() => '---')), ...doc.ruledRows.map(row)].join('\n');
    expect(mdText, mdText.slice(mdText.indexOf('## Inventory'), mdText.indexOf('## Code'))).to.include(ruled);
    expect(mdText.split(row(doc.ruledHeader)).length - 1).to.equal(1);
    // Code, fenced, indentation kept.
    expect(mdText).to.include(['```', ...doc.code, '```'].join('\n'));
    // Chromium's running header and footer and the page numbers are gone from the Markdown, not from the text.
    expect(mdText).not.to.match(/file:\/\/|\b\d\/\d\b/);
    expect(data.extracted_text).to.match(/file:\/\//);
  });

  it('adds each page its Markdown and quality, and leaves extracted_text as the text format gives it', async () => {
    const md = ok(await postPdf(s, { output_format: 'markdown' }, pdf));
    const text = ok(await postPdf(s, {}, pdf));
    expect(md.extracted_text).to.equal(text.extracted_text);
    expect(text).not.to.have.property('markdown');
    expect(text.metadata.text_contents[0]).to.have.keys(['page', 'text', 'method']);
    const pages = md.metadata.text_contents;
    expect(pages.length).to.be.at.least(2);
    for (const p of pages) {
      expect(p.markdown).to.be.a('string').and.not.equal('');
      expect(p.quality.score).to.be.within(0.8, 1);
      expect(p.quality.signals).to.include.keys(['chars', 'garbage_ratio', 'word_shape_rate', 'glyphs_per_area']);
    }
    // The page where the table goes on shows its part under the table's header.
    const cont = pages.find((p: { markdown: string }) =>
      p.markdown.includes(row(doc.ruledRows[doc.ruledRows.length - 1])),
    );
    expect(cont.markdown.split('\n')[0]).to.equal(row(doc.ruledHeader));
  });

  it("gives each page its blocks: types and levels, its Markdown their text, boxes around the text layer's words", async () => {
    const data = ok(await postPdf(s, { output_format: 'markdown' }, pdf));
    const words = await layerWordsOf(pdf);
    const pages = data.metadata.text_contents as {
      page: number;
      markdown: string;
      blocks: { type: string; text: string; bbox: number[]; level?: number; order: number }[];
    }[];
    const headings = pages.flatMap((p) => p.blocks.filter((b) => b.type === 'heading'));
    expect(headings.map((b) => b.text)).to.deep.equal(doc.headings.map((h) => `${'#'.repeat(h.level)} ${h.text}`));
    expect(headings.map((b) => b.level)).to.deep.equal(doc.headings.map((h) => h.level));
    let found = 0;
    let total = 0;
    for (const p of pages) {
      expect(p.blocks.map((b) => b.order)).to.deep.equal(p.blocks.map((_, i) => i));
      const body = p.blocks.filter((b) => b.type !== 'header' && b.type !== 'footer');
      // The page's Markdown is its blocks' text in order: a blank line apart, items of one list (bullets, or numbers) a
      // line apart.
      const bullet = (k: number) => /^\s*- /.test(body[k].text);
      const tight = (k: number) =>
        body[k].type === 'list_item' && body[k - 1].type === 'list_item' && bullet(k) === bullet(k - 1);
      expect(body.map((b, k) => (k === 0 ? '' : tight(k) ? '\n' : '\n\n') + b.text).join('')).to.equal(p.markdown);
      // Chromium's running header and footer are blocks outside the Markdown.
      expect(
        p.blocks.some((b) => b.type === 'header' || b.type === 'footer'),
        `page ${p.page}`,
      ).to.equal(true);
      for (const b of body) {
        // Each word of the block (its Markdown marks aside) stands inside its box on the page's text layer.
        const mine = b.text
          .replace(/[#`|*-]+/g, ' ')
          .split(/\s+/)
          .filter((w) => /^\p{L}{4,}$/u.test(w));
        for (const w of mine) {
          total++;
          const inBox = words.some(
            (x) =>
              x.page === p.page &&
              x.text.includes(w) &&
              x.cx >= b.bbox[0] - 1 &&
              x.cx <= b.bbox[2] + 1 &&
              x.cy >= b.bbox[1] - 1 &&
              x.cy <= b.bbox[3] + 1,
          );
          if (inBox) found++;
        }
      }
    }
    expect(total).to.be.above(100);
    expect(found / total, `${found} of ${total} words inside their block's box`).to.be.at.least(0.98);
  });

  it('answers 400 naming an unknown output_format', async () => {
    const r = await postPdf(s, { output_format: 'html' }, pdf);
    expect(r.status).to.equal(400);
    expect(r.body.error.code).to.equal('VALIDATION_ERROR');
    expect(JSON.stringify(r.body.error)).to.include('output_format').and.include('html');
    // The field keeps its name, also at the start of the message.
    expect(r.body.error.message).to.match(/^output_format: /);
  });

  it('writes a table whose header spans columns (booktabs rules, filled rectangles) as HTML, as GFM with table_format=gfm, in the direct answer and in a job', async () => {
    // booktabs' own example: a group label over a \cmidrule, its rules as pdfTeX draws them (0.8 and 0.4 pt high).
    const top = 600;
    const ys = [top - 12, top - 29, top - 46, top - 58, top - 70];
    const cells: [string, number, number][] = [
      ['Artikel', 294, ys[0]],
      ['Tier', 251, ys[1]],
      ['Beschreibung', 302, ys[1]],
      ['Preis', 372, ys[1]],
      ['Mücke', 251, ys[2]],
      ['pro Gramm', 302, ys[2]],
      ['13.65', 385, ys[2]],
      ['pro Stück', 302, ys[3]],
      ['0.01', 390, ys[3]],
      ['Gnu', 251, ys[4]],
      ['ausgestopft', 302, ys[4]],
      ['92.50', 385, ys[4]],
    ];
    const runs = [
      {
        text: 'Die Preise der Tiere stehen in der folgenden Tabelle, nach Artikel geordnet.',
        x: 150,
        y: 650,
        size: 10,
      },
      ...cells.map(([text, x, y]) => ({ text, x, y, size: 9 })),
      { text: 'Unter der Tabelle geht der Text weiter, so breit wie der Satzspiegel.', x: 150, y: 500, size: 10 },
    ];
    const rule = (y: number, x0: number, x1: number, h: number) => `${x0} ${y} ${x1 - x0} ${h} re f`;
    const content = [
      rule(top, 250, 410, 0.8),
      rule(top - 17, 250, 361, 0.4),
      rule(top - 34, 250, 410, 0.4),
      rule(top - 76, 250, 410, 0.8),
    ].join('\n');
    const booktabs = buildPdf({ pages: [{ kind: 'drawing', runs, content }] });
    const html = ok(await postPdf(s, { output_format: 'markdown' }, booktabs));
    expect(html.markdown).to.include('<tr><th colspan="2">Artikel</th><th></th></tr>');
    expect(html.markdown).to.include('<tr><td>Mücke</td><td>pro Gramm</td><td>13.65</td></tr>');
    expect(html.metadata.text_contents[0].blocks.map((b: { type: string }) => b.type)).to.include('table');
    // Its own cache entry: the spanning header's text in both columns it covers.
    const gfm = ok(await postPdf(s, { output_format: 'markdown', table_format: 'gfm' }, booktabs));
    expect(gfm.markdown).to.not.include('<table>');
    expect(gfm.markdown)
      .to.include(row(['Artikel', 'Artikel', '']))
      .and.include(row(['Mücke', 'pro Gramm', '13.65']));
    // The same through a job (the worker's path).
    const dir = path.join(s.api.config.dataDir, 'inbox');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'booktabs.pdf'), booktabs);
    const r = await s.call('POST', '/api/pdf/job', {
      filename: path.join(dir, 'booktabs.pdf'),
      output_format: 'markdown',
      table_format: 'gfm',
      use_cache: false,
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const job = await s.waitJob(r.body.data.job_id, 90_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    expect(job.results.markdown).to.equal(gfm.markdown);
    const bad = await postPdf(s, { output_format: 'markdown', table_format: 'latex' }, booktabs);
    expect(bad.status).to.equal(400);
    expect(JSON.stringify(bad.body.error)).to.include('table_format').and.include('latex');
  });

  it('gives a pdf job started with /api/pdf/job its Markdown', async () => {
    const dir = path.join(s.api.config.dataDir, 'inbox');
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, 'report.pdf');
    await writeFile(file, pdf);
    const r = await s.call('POST', '/api/pdf/job', { filename: file, output_format: 'markdown' });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const job = await s.waitJob(r.body.data.job_id, 90_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    expect(job.results.markdown).to.include(`# ${doc.title}`);
  });

  it('builds the paragraphs of a scanned page from the OCR, with the OCR confidence in its quality', async () => {
    const paragraphs = [
      'The first paragraph of the scanned letter talks about the weather and the long journey home.',
      'A second paragraph follows after an empty line and speaks of the harvest in the autumn.',
    ];
    // One page: two paragraphs of two lines each, an empty line between them.
    const lines = [...wrapText(paragraphs[0], 60), '', ...wrapText(paragraphs[1], 60)];
    const source = buildPdf({ pages: [{ kind: 'lines', lines, size: 12, leading: 16 }] });
    const scan = buildPdf({ pages: [{ kind: 'image', image: await rasterize(source, 300), dpi: 300 }] });
    const data = ok(
      await postPdf(s, { output_format: 'markdown', extraction_method: 'local_ocr', ocr_language: 'en' }, scan),
    );
    const blocks = (data.markdown as string).split('\n\n');
    expect(blocks, data.markdown).to.have.length(2);
    expect(blocks.every((b) => !b.includes('\n'))).to.equal(true);
    expect(blocks[0]).to.match(/^The first paragraph .* home\.$/);
    expect(blocks[1]).to.match(/^A second paragraph .* autumn\.$/);
    const page = data.metadata.text_contents[0];
    expect(page.method).to.equal('local_ocr');
    expect(page.quality.signals.ocr_confidence).to.be.above(0.8);
    expect(page.quality.score).to.be.above(0.7);
  });

  it('says per page why combined took the text layer or the OCR', async () => {
    const scan = await scannedPdf(['A scanned page that has no text layer at all and must be read by OCR.']);
    const data = ok(
      await postPdf(s, { output_format: 'markdown', extraction_method: 'combined', ocr_language: 'en' }, scan),
    );
    const page = data.metadata.text_contents[0];
    expect(page.method).to.equal('local_ocr');
    expect(page.quality.reason).to.match(/text layer not usable/);
    const native = ok(await postPdf(s, { output_format: 'markdown', extraction_method: 'combined' }, pdf));
    expect(native.metadata.text_contents[0].quality.reason).to.match(/^text layer usable/);
  });
});
