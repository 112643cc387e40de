import { expect } from 'chai';
import {
  fromCache,
  jobResults,
  packJobFields,
  resultData,
  resultPreview,
  unpackJobResults,
  type JobFields,
} from '../../core/results/job-results';
import type { ExternalOcrMetadata, PdfMetadata } from '../../core/results/result-schemas-pdf';
import { externalOcrData, pdfData, transformerData } from '../../core/results/result-shapes';

const job = (text: string, metadata: Record<string, unknown> = {}): JobFields => ({
  structured_data: { extracted_text: text, metadata },
  assets: ['jobs/job-1/out/result.md'],
  target_dir: 'jobs/job-1/out',
  llm_info: { total_tokens: 3, total_cost: 0.1, requests: [] },
  from_cache: true,
});

describe('One result shape (core/results/job-results.ts, core/results/result-shapes.ts)', () => {
  it('gives back exactly the data a job result was built from, without the job fields', () => {
    const data = pdfData(
      'Text',
      { page_count: 1, text_contents: [{ page: 1, text: 'Text', method: 'native' }] } as PdfMetadata,
      null,
    );
    const results = jobResults(data, job('Text'));
    expect(results).to.include.keys('structured_data', 'assets', 'target_dir', 'llm_info', 'from_cache');
    expect(resultData(results)).to.deep.equal(data);
    expect(Object.keys(resultData(results))).to.deep.equal([
      'extracted_text',
      'metadata',
      'images_archive_filename',
      'images_archive_data',
    ]);
    expect(fromCache(results)).to.equal(true);
    expect(resultData(null)).to.deep.equal({});
  });

  it('refuses data that would shadow a job field', () => {
    expect(() => jobResults({ assets: [] }, job('x'))).to.throw(/assets/);
  });

  it('shapes each transformer operation as its endpoint answers it (spec §4.3)', () => {
    const r = {
      text: 'out',
      metadata: { tables: [{ headers: ['a'], rows: [] }] },
      output: { translated_text: 'out', source_language: 'de', target_language: 'en' },
    };
    expect(transformerData('text', { text: 'ein', source_language: 'de', target_language: 'en' }, r)).to.deep.equal({
      original_text: 'ein',
      translated_text: 'out',
      source_language: 'de',
      target_language: 'en',
    });
    expect(transformerData('html-to-markdown', { html: '<p>x</p>' }, r)).to.deep.equal({
      html: '<p>x</p>',
      markdown: 'out',
    });
    expect(transformerData('extract-tables', { html: '' }, r)).to.deep.equal({
      tables: [{ headers: ['a'], rows: [] }],
    });
    expect(
      transformerData('summarize', { text: 'lang' }, { text: 'kurz', metadata: {}, output: { summary: 'kurz' } }),
    ).to.deep.equal({ original_text: 'lang', summary: 'kurz' });
    expect(() => transformerData('nope', {}, r)).to.throw(/unknown/);
  });

  it('gives external OCR null image archives and the pages archive when there is one (spec §4.2)', () => {
    const d = externalOcrData(
      'md',
      { page_count: 1 } as ExternalOcrMetadata,
      { pages: [] },
      {
        filename: 'job-1-pages.zip',
        data: 'UEs=',
      },
    );
    expect(d).to.deep.include({
      pages_archive_filename: 'job-1-pages.zip',
      pages_archive_data: 'UEs=',
      images_archive_data: null,
      images_archive_filename: null,
    });
  });

  it('keeps a small preview for workflow history: the text cut to 2000 characters, scalar metadata only', () => {
    const long = 'x'.repeat(2500);
    const p = resultPreview(job(long, { page_count: 2, title: 'T', text_contents: [{ page: 1 }], tables: [] })) as any;
    expect(p.structured_data.extracted_text).to.equal(`${'x'.repeat(2000)}…`);
    expect(p.structured_data.metadata).to.deep.equal({ page_count: 2, title: 'T' });
    expect(p).to.deep.include({ assets: ['jobs/job-1/out/result.md'], target_dir: 'jobs/job-1/out', from_cache: true });
    expect(p).to.not.have.property('llm_info');
    expect((resultPreview(job('short')) as any).structured_data.extracted_text).to.equal('short');
  });
  it('stores the job fields without the values the data holds, and rebuilds the same results from both', () => {
    const long = 'Seite eins. '.repeat(20);
    const metadata = { page_count: 1, text_contents: [{ page: 1, text: long, method: 'native' }] };
    const data = pdfData(long, metadata as PdfMetadata, null);
    const stored = JSON.parse(JSON.stringify(packJobFields(data, job(long, metadata))));
    expect(stored.refs).to.deep.equal({ extracted_text: 'extracted_text', metadata: 'metadata' });
    expect(JSON.stringify(stored)).to.not.include('Seite eins');
    const rebuilt = unpackJobResults(JSON.parse(JSON.stringify(data)), stored);
    expect(rebuilt).to.deep.equal(jobResults(data, job(long, metadata)));
    expect(Object.keys(rebuilt)).to.deep.equal(Object.keys(jobResults(data, job(long, metadata))));
    expect(Object.keys(rebuilt.structured_data as object)).to.deep.equal(['extracted_text', 'metadata']);

    // A metadata value the data holds (extract-tables: the tables), and values it does not (kept inline).
    const tables = [{ headers: ['a'], rows: [['1']] }];
    const tableData = transformerData('extract-tables', {}, { text: '', metadata: { tables } });
    const fields = job('short', { operation: 'extract-tables', table_count: 1, tables });
    const packed = JSON.parse(JSON.stringify(packJobFields(tableData, fields)));
    expect(packed.refs).to.deep.equal({ 'metadata.tables': 'tables' });
    expect(packed.job.structured_data).to.deep.equal({
      extracted_text: 'short',
      metadata: { operation: 'extract-tables', table_count: 1, tables: null },
    });
    expect(unpackJobResults(tableData, packed)).to.deep.equal(jobResults(tableData, fields));
  });
});
