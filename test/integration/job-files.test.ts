import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { useStack, type Stack } from '../support/servers/stack';
import { readBlobBuffer } from '../../core/stores/blob-store';
import { buildPdf } from '../support/documents/pdf-factory';
import { rawRequest, transformerJob, unzip } from '../support/jobs';

// GET /api/event-job/files/{path} with the paths finished jobs hand out (`assets`, `target_dir`), on the real API
// and worker over loopback HTTP, on a Temporal dev server; and every way out of the job output folders refused.

const UNKNOWN_JOB = 'job-00000000-0000-4000-8000-000000000000';
const FILES = '/api/event-job/files/';
const perSegment = (p: string) => p.split('/').map(encodeURIComponent).join('/');

describe('GET /api/event-job/files/{path} with the paths jobs hand out', function () {
  this.timeout(90_000);
  let s: Stack;
  useStack((stack) => (s = stack));

  /** Runs a job through POST /api/jobs/ and answers its results (the job must complete). */
  async function finishedResults(body: unknown): Promise<any> {
    const r = await s.call('POST', '/api/jobs/', body);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const job = await s.waitJob(r.body.data.job_id, 60_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    expect(job.results.assets, 'assets').to.be.an('array').that.is.not.empty;
    expect(job.results.target_dir, 'target_dir').to.be.a('string');
    return job.results;
  }

  /** Downloads `asset` verbatim and with each segment percent-encoded; both must be the stored bytes and media type. */
  async function downloadAsset(asset: string, mime: RegExp): Promise<Buffer> {
    const stored = await readBlobBuffer(s.api.store, asset);
    for (const p of [asset, perSegment(asset)]) {
      const r = await rawRequest(s.url, FILES + p);
      expect(r.status, `${p}: ${r.text.slice(0, 200)}`).to.equal(200);
      expect(r.headers['content-type'], p).to.match(mime);
      expect(r.headers['content-disposition'], p).to.equal(
        `attachment; filename="${path.posix.basename(asset)}"; filename*=UTF-8''${path.posix.basename(asset)}`,
      );
      expect(r.body.equals(stored), `${p}: the stored bytes`).to.equal(true);
    }
    return stored;
  }

  it('downloads the Markdown asset of an html-to-markdown job as text/markdown', async () => {
    const results = await finishedResults(transformerJob('<h1>Bericht</h1><p>Grüße aus <b>Köln</b>.</p>'));
    expect(results.assets).to.have.length(1);
    const body = await downloadAsset(results.assets[0], /^text\/markdown; charset=utf-8$/);
    expect(body.toString('utf8')).to.equal('# Bericht\n\nGrüße aus **Köln**.');
  });

  it('downloads the JSON asset of an extract-tables job as application/json', async () => {
    const html = '<table><tr><th>Ort</th><th>Zahl</th></tr><tr><td>Bonn</td><td>7</td></tr></table>';
    const results = await finishedResults(transformerJob(html, { operation: 'extract-tables' }));
    const body = await downloadAsset(
      results.assets.find((a: string) => a.endsWith('.json')),
      /^application\/json/,
    );
    expect(JSON.parse(body.toString('utf8')).tables).to.deep.equal([
      { headers: ['Ort', 'Zahl'], rows: [['Bonn', '7']] },
    ]);
  });

  it('downloads every asset of a PDF job with page images, the images archive holding the image_paths', async () => {
    const dir = path.join(s.api.config.dataDir, 'inbox');
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, 'zwei-seiten.pdf');
    await writeFile(
      file,
      buildPdf({
        pages: [
          { kind: 'lines', lines: ['Seite eins.'] },
          { kind: 'lines', lines: ['Seite zwei.'] },
        ],
      }),
    );
    const results = await finishedResults({ job_type: 'pdf', parameters: { filename: file, includeImages: true } });
    const archive = results.assets.find((a: string) => a.endsWith('.zip'));
    expect(archive, JSON.stringify(results.assets)).to.be.a('string');
    for (const asset of results.assets)
      await downloadAsset(asset, asset.endsWith('.zip') ? /^application\/zip$/ : /^text\/markdown/);
    const names = unzip(await readBlobBuffer(s.api.store, archive)).names;
    const imagePaths = results.metadata.image_paths;
    expect(names).to.include.members(['page-0001.png', 'page-0002.png']);
    expect(imagePaths, 'image_paths name the archive entries').to.deep.equal(names);
  });

  it('answers target_dir (with or without a trailing slash) with a listing whose every path downloads its file', async () => {
    const results = await finishedResults(transformerJob('<p>Liste</p>'));
    for (const p of [results.target_dir, `${results.target_dir}/`, perSegment(results.target_dir)]) {
      const r = await rawRequest(s.url, FILES + p);
      expect(r.status, p).to.equal(200);
      expect(r.headers['content-type']).to.match(/^application\/json/);
      const listing = r.json().data;
      expect(listing.path).to.equal(results.target_dir);
      expect(listing.files.map((f: { path: string }) => f.path)).to.deep.equal(results.assets);
      for (const f of listing.files) {
        const got = await rawRequest(s.url, FILES + f.path);
        expect(got.status, f.path).to.equal(200);
        expect(got.headers['content-type']).to.equal(f.mime);
        expect(got.body.length).to.equal(f.size);
      }
    }
  });

  it('serves the legacy <job_id>/<file> form and answers 404 FILE_NOT_FOUND for an unknown job or file', async () => {
    const results = await finishedResults(transformerJob('<p>Alt</p>'));
    const jobId = results.target_dir.split('/')[1];
    const legacy = await rawRequest(s.url, `${FILES}${jobId}/result.md`);
    expect(legacy.status).to.equal(200);
    expect(legacy.text).to.equal('Alt');
    for (const p of [
      `${jobId}/nothing.md`,
      `jobs/${jobId}/out/nothing.md`,
      `jobs/${UNKNOWN_JOB}/out/result.md`,
      `jobs/${UNKNOWN_JOB}/out`,
      `${UNKNOWN_JOB}/result.md`,
    ]) {
      const r = await rawRequest(s.url, FILES + p);
      expect(r.status, p).to.equal(404);
      expect(r.json().error.code, p).to.equal('FILE_NOT_FOUND');
    }
  });

  it('refuses with 403 FORBIDDEN every path that leaves a job output folder, and never answers what lies there', async () => {
    const results = await finishedResults(transformerJob('<p>secret-free</p>'));
    const jobId = results.target_dir.split('/')[1];
    // A file next to the blob store: what a traversal out of the store would reach.
    await writeFile(path.join(s.api.config.dataDir, 'secret.txt'), 'TOP-SECRET');
    const out = `jobs/${jobId}/out`;
    const attempts = [
      '..%2F..%2Fetc%2Fpasswd',
      '../../etc/passwd',
      '%2Fetc%2Fpasswd',
      '/etc/passwd',
      `${out}/../../../secret.txt`,
      `${out}/..%2F..%2F..%2Fsecret.txt`,
      `${out}/%2e%2e/%2e%2e/%2e%2e/secret.txt`,
      `${out}/%2E%2E%2Finternal%2Fresults.json`,
      `${out}/../internal/results.json`,
      `${out}/..%5C..%5C..%5Csecret.txt`,
      `jobs%5C${jobId}%5Cinternal%5Cresults.json`,
      `${out}//result.md`,
      `${out}/.%2Fresult.md`,
      `${out}/%00result.md`,
      `jobs/${jobId}/internal/results.json`,
      `jobs/${jobId}`,
      `records/jobs/${jobId}.json`,
      `${jobId}/../../records/jobs/${jobId}.json`,
      `${jobId}/%2e%2e/internal/results.json`,
      'secret.txt',
    ];
    for (const p of attempts) {
      const r = await rawRequest(s.url, FILES + p);
      expect(r.status, p).to.equal(403);
      expect(r.json().error.code, p).to.equal('FORBIDDEN');
      for (const leak of ['root:', 'TOP-SECRET', 'structured_data', 'secret-free'])
        expect(r.text, `${p} leaks ${leak}`).not.to.include(leak);
    }
  });
});
