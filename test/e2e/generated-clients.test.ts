import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { useStack, type Stack } from '../support/servers/stack';
import { ensureClientGenerator } from '../../scripts/engines-fuzz.mjs';
import {
  generatePythonClient,
  lastJsonLine,
  mistakenTsClient,
  openapiTypes,
  PYTHON_PACKAGE,
  runPythonClient,
  runTsClient,
  TS_CLIENT,
  TS_MISTAKES,
  typecheckTsProject,
  writeTsProject,
  type Ran,
} from '../support/clients/generated-clients';
import { unzip } from '../support/jobs';
import { buildPdf } from '../support/documents/pdf-factory';
import { ROOT } from '../support/servers/processes';
import { tempDir } from '../support/servers/engines';

// Clients generated from the service's own GET /api/openapi.json, as their users make them (issue #23 point 9):
// TypeScript types from openapi-typescript used through openapi-fetch, and a Python package from
// openapi-python-client (each pinned: the npm devDependencies and the venv scripts/engines-fuzz.mjs provisions). Each
// calls a JSON endpoint (html-to-markdown), a multipart one (pdf/process, the Python client sending every field as its
// own text/plain part) and downloads a job's ZIP, a file it produced and a sample file, against a started stack with an
// API key. The document's binary downloads are checked to be kept by both generators: none is dropped or read as text
// or JSON.

const KEY = 'generated-clients-key-0123456789abcdef';
const HTML = '<h1>Quarterly report</h1><p>Revenue rose by <b>twelve percent</b> in the north.</p>';
const PDF_PAGES = [
  ['Harbour inspection notes', 'The crane on pier seven needs new cables.'],
  ['Second page of the notes', 'Ferry timetables change on the first of May.'],
];
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

interface Download {
  path: string;
  method: string;
  operationId: string;
  mediaTypes: string[];
}

/** Every operation whose 200 answer is a file: a media type with a `format: binary` schema. */
function binaryDownloads(doc: any): Download[] {
  const out: Download[] = [];
  for (const [p, item] of Object.entries<any>(doc.paths)) {
    for (const method of METHODS) {
      const content = item[method]?.responses?.['200']?.content ?? {};
      const mediaTypes = Object.keys(content).filter((mt) => content[mt]?.schema?.format === 'binary');
      if (mediaTypes.length) out.push({ path: p, method, operationId: item[method].operationId, mediaTypes });
    }
  }
  return out;
}

/** A TypeScript file that compiles only if every binary download's 200 content is in `paths`, as a Blob. */
function downloadsTypeFile(downloads: Download[]): string {
  const lines = ["import type { paths } from './docproc-api.js';", ''];
  downloads.forEach((d, i) =>
    d.mediaTypes.forEach((mt, j) => {
      const t = `paths[${JSON.stringify(d.path)}][${JSON.stringify(d.method)}]['responses'][200]['content'][${JSON.stringify(mt)}]`;
      lines.push(`export const download${i}_${j}: ${t} extends Blob ? true : false = true;`);
    }),
  );
  return lines.join('\n') + '\n';
}

/** The line numbers (1-based) of `src` holding each text. */
const linesOf = (src: string, texts: string[]) => texts.map((t) => src.slice(0, src.indexOf(t)).split('\n').length);

const snake = (operationId: string) => operationId.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

const show = (r: Ran) => `exit ${r.code}\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`;

describe('clients generated from the served OpenAPI document', function () {
  this.timeout(240_000);
  let s: Stack;
  let doc: any;
  let downloads: Download[];
  let work: string;
  let pdfFile: string;
  let python: string;

  before(async function () {
    this.timeout(600_000);
    python = await ensureClientGenerator();
  });
  useStack((stack) => (s = stack), { SERVICE_API_KEY: KEY });
  after(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });
  before(async () => {
    const r = await s.call('GET', '/api/openapi.json');
    expect(r.status).to.equal(200);
    doc = r.body;
    downloads = binaryDownloads(doc);
    work = tempDir('docproc-clients-');
    fs.writeFileSync(path.join(work, 'openapi.json'), JSON.stringify(doc));
    pdfFile = path.join(work, 'harbour notes.pdf');
    fs.writeFileSync(
      pdfFile,
      buildPdf({ title: 'Harbour', pages: PDF_PAGES.map((lines) => ({ kind: 'lines' as const, lines })) }),
    );
  });

  it('finds the ZIP downloads among the document’s binary downloads', () => {
    const zips = downloads.filter((d) => d.mediaTypes.includes('application/zip')).map((d) => d.path);
    expect(zips).to.include.members([
      '/api/jobs/{job_id}/download-archive',
      '/api/pdf/jobs/{job_id}/download-pages-archive',
      '/api/event-job/jobs/{job_id}/download-archive',
      '/api/event-job/batches/{batch_id}/archive',
    ]);
  });

  /** What a client printed, checked against what the service was given. */
  function checkCalls(out: any, who: string) {
    expect(out.markdown, who).to.include('# Quarterly report').and.include('**twelve percent**');
    for (const line of PDF_PAGES.flat()) expect(out.pdf_text, who).to.include(line);
    expect(out.pdf_pages, who).to.equal(PDF_PAGES.length);
    expect(out.job_id, who).to.match(/^job-/);
    expect(out.job_status, who).to.equal('completed');
    const zip = fs.readFileSync(out.zip_file);
    expect(zip.subarray(0, 4).toString('latin1'), who).to.equal('PK\x03\x04');
    const entries = unzip(zip);
    expect(entries.names, who).to.include.members(['result.md', 'manifest.json']);
    expect(entries.read('result.md').trim(), who).to.equal(out.markdown.trim());
    expect(out.result_text, who).to.equal(entries.read('result.md'));
    expect(JSON.parse(entries.read('manifest.json')), who).to.include({ job_id: out.job_id, status: 'completed' });
    expect(fs.readFileSync(out.sample_file).equals(fs.readFileSync(path.join(ROOT, 'samples', 'sample.pdf'))), who).to
      .be.true;
  }

  describe('TypeScript: openapi-typescript types through openapi-fetch', () => {
    let project: string;
    let mistaken: string;

    before(async () => {
      const types = await openapiTypes(doc);
      project = path.join(work, 'ts');
      writeTsProject(project, types, TS_CLIENT);
      fs.writeFileSync(path.join(project, 'downloads.ts'), downloadsTypeFile(downloads));
      const tsconfig = JSON.parse(fs.readFileSync(path.join(project, 'tsconfig.json'), 'utf8'));
      tsconfig.files.push('downloads.ts');
      fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
      mistaken = path.join(work, 'ts-mistaken');
      writeTsProject(mistaken, types, mistakenTsClient());
    });

    it('type-checks (strict) a client of the generated paths, and every binary download’s 200 content is a Blob there', async () => {
      const r = await typecheckTsProject(project);
      expect(r.code, show(r)).to.equal(0);
    });

    it('refuses the same client with a misspelled field (JSON body, multipart body, answer) or a value off an enum', async () => {
      const r = await typecheckTsProject(mistaken);
      expect(r.code, show(r)).to.not.equal(0);
      const src = mistakenTsClient();
      // tsc names the file relative to the working directory: the line number is what tells the errors apart.
      const errors = r.stdout
        .split('\n')
        .map((l) => /client\.ts\((\d+),\d+\): (error TS.*)/.exec(l))
        .filter((m) => m !== null)
        .map((m) => ({ line: Number(m[1]), text: m[2]! }));
      const lines = linesOf(
        src,
        TS_MISTAKES.map(([, mistake]) => mistake),
      );
      TS_MISTAKES.forEach(([, mistake, named], i) => {
        const at = errors.filter((e) => e.line === lines[i]).map((e) => e.text);
        expect(at, `no error at line ${lines[i]} (${mistake}):\n${show(r)}`).to.not.be.empty;
        expect(at.join('\n'), mistake).to.include(named);
      });
      // Nothing else is wrong with it: every error is at one of the mistakes.
      for (const e of errors) expect(lines, `${e.line}: ${e.text}`).to.include(e.line);
    });

    it('converts HTML, extracts a PDF’s text from a multipart upload and downloads a job’s ZIP', async () => {
      const r = await runTsClient(project, [s.url, KEY, pdfFile, HTML, work]);
      expect(r.code, show(r)).to.equal(0);
      checkCalls(lastJsonLine(r), 'openapi-fetch');
    });
  });

  describe('Python: openapi-python-client', () => {
    let project: string;
    let generated: Ran;

    before(async () => {
      project = path.join(work, 'py');
      generated = await generatePythonClient(python, path.join(work, 'openapi.json'), project);
    });

    it('generates the client without a warning: no operation or answer is left out', () => {
      expect(generated.code, show(generated)).to.equal(0);
      expect(`${generated.stdout}\n${generated.stderr}`, show(generated)).to.not.match(/warning|omitted|error/i);
    });

    it('reads every binary download as bytes (a File), none as text or JSON', () => {
      const apiDir = path.join(project, PYTHON_PACKAGE, 'api');
      for (const d of downloads) {
        const file = fs
          .readdirSync(apiDir)
          .map((tag) => path.join(apiDir, tag, `${snake(d.operationId)}.py`))
          .find((f) => fs.existsSync(f));
        expect(file, `${d.operationId}: no module`).to.be.a('string');
        const src = fs.readFileSync(file!, 'utf8');
        const at = src.indexOf('if response.status_code == 200:');
        expect(at, `${d.method.toUpperCase()} ${d.path}: its 200 answer is left out`).to.be.at.least(0);
        expect(src.slice(at), `${d.method.toUpperCase()} ${d.path}`).to.match(
          /^if response\.status_code == 200:\s+response_200 = File\(\s+payload = BytesIO\(response\.content\)/,
        );
      }
    });

    it('converts HTML, extracts a PDF’s text from a multipart upload and downloads a job’s ZIP', async () => {
      const r = await runPythonClient(python, project, [s.url, KEY, pdfFile, HTML, work]);
      expect(r.code, show(r)).to.equal(0);
      checkCalls(lastJsonLine(r), 'openapi-python-client');
    });
  });
});
