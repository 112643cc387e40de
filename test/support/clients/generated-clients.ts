import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { ROOT } from '../servers/processes';

// Clients generated from the service's served OpenAPI document, as their users make them: TypeScript types with
// openapi-typescript (the `paths` of the document, used through openapi-fetch) and a Python package with
// openapi-python-client. Each is written into a directory of its own, with the program that calls the service
// through it. Used by test/e2e/generated-clients.test.ts.

const HERE = path.dirname(fileURLToPath(import.meta.url));

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end (killed after `timeoutMs`), answering its exit code and output. */
export function runProgram(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The last line of a program's output, read as JSON (the calling programs print one line of results). */
export function lastJsonLine(ran: Ran): any {
  const lines = ran.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1] ?? '');
}

// ---- TypeScript: openapi-typescript + openapi-fetch ----------------------------------------------------------------

/**
 * The document's types as openapi-typescript writes them, with its documented transform for binary strings: a
 * `format: binary` schema (a multipart file, a download) is a `Blob`, so a file can be sent and a download received.
 */
export async function openapiTypes(doc: Record<string, unknown>): Promise<string> {
  const blob = ts.factory.createTypeReferenceNode(ts.factory.createIdentifier('Blob'));
  const ast = await openapiTS(doc as unknown as OpenAPI3, {
    transform: (schema) => (schema.format === 'binary' ? blob : undefined),
  });
  return astToString(ast);
}

/**
 * The TypeScript program that calls the service through openapi-fetch with the generated `paths`. Arguments: base
 * URL, API key, a PDF to upload, HTML to convert, a directory for the downloads; it prints one JSON line.
 */
export const TS_CLIENT = `import fs from 'node:fs';
import path from 'node:path';
import createClient from 'openapi-fetch';
import type { paths } from './docproc-api.js';

const [baseUrl, key, pdfPath, html, outDir] = process.argv.slice(2) as [string, string, string, string, string];
const client = createClient<paths>({ baseUrl, headers: { 'X-Service-Api-Key': key } });

// The request bodies, as the document describes them. (A body written inline in the call is checked against the same
// type, but not always for fields it does not know: an annotated object literal always is.)
type Post<P extends '/api/transformer/html-to-markdown' | '/api/pdf/process' | '/api/jobs/'> =
  paths[P]['post']['requestBody']['content'];
type MarkdownBody = Post<'/api/transformer/html-to-markdown'>['application/json'];
type PdfBody = Post<'/api/pdf/process'>['multipart/form-data'];
type JobBody = Post<'/api/jobs/'>['application/json'];

function fail(what: string, status: number, error: unknown): never {
  throw new Error(what + ': ' + status + ' ' + JSON.stringify(error));
}

// A JSON endpoint.
const markdownBody: MarkdownBody = { html };
const md = await client.POST('/api/transformer/html-to-markdown', { body: markdownBody });
if (!md.data || !('markdown' in md.data.data)) fail('html-to-markdown', md.response.status, md.error ?? md.data);
const markdown: string = md.data.data.markdown;

// A multipart endpoint: the file a Blob, the other fields text parts.
const pdfBody: PdfBody = {
  file: new Blob([fs.readFileSync(pdfPath)], { type: 'application/pdf' }),
  extraction_method: 'native',
};
const pdf = await client.POST('/api/pdf/process', {
  body: pdfBody,
  bodySerializer: (body) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(body ?? {})) {
      if (value instanceof Blob) form.append(name, value, path.basename(pdfPath));
      else if (value !== undefined) form.append(name, String(value));
    }
    return form;
  },
});
if (!pdf.data || !('extracted_text' in pdf.data.data)) fail('pdf/process', pdf.response.status, pdf.error ?? pdf.data);
const pdfText: string = pdf.data.data.extracted_text;
const pdfPages: number = pdf.data.data.metadata.page_count;

// A job, then its ZIP archive (the document's application/zip answer, a Blob).
const jobBody: JobBody = { job_type: 'transformer', parameters: { operation: 'html-to-markdown', html } };
const created = await client.POST('/api/jobs/', { body: jobBody });
if (!created.data) fail('jobs', created.response.status, created.error);
const jobId: string = created.data.data.job_id;
let jobStatus: string = created.data.data.job.status;
for (let i = 0; i < 60 && jobStatus !== 'completed' && jobStatus !== 'failed'; i++) {
  const job = await client.GET('/api/jobs/{job_id}', { params: { path: { job_id: jobId }, query: { wait: 5 } } });
  if (!job.data) fail('job', job.response.status, job.error);
  jobStatus = job.data.data.status;
}
const archive = await client.GET('/api/jobs/{job_id}/download-archive', {
  params: { path: { job_id: jobId } },
  parseAs: 'blob',
});
if (archive.response.status !== 200 || !(archive.data instanceof Blob))
  fail('download-archive', archive.response.status, archive.error);
const zipFile = path.join(outDir, 'ts-archive.zip');
fs.writeFileSync(zipFile, Buffer.from(await archive.data.arrayBuffer()));

// A file the job produced, by its path (slashes and all).
const produced = await client.GET('/api/event-job/files/{path}', {
  params: { path: { path: jobId + '/result.md' } },
  parseAs: 'text',
});
if (produced.response.status !== 200 || typeof produced.data !== 'string')
  fail('event-job/files', produced.response.status, produced.error);
const resultText: string = produced.data;

// A binary download with several media types.
const sample = await client.GET('/api/common/samples/{filename}', {
  params: { path: { filename: 'sample.pdf' } },
  parseAs: 'blob',
});
if (!(sample.data instanceof Blob)) fail('samples', sample.response.status, sample.error);
const sampleFile = path.join(outDir, 'ts-sample.pdf');
fs.writeFileSync(sampleFile, Buffer.from(await sample.data.arrayBuffer()));

console.log(
  JSON.stringify({
    markdown,
    pdf_text: pdfText,
    pdf_pages: pdfPages,
    job_id: jobId,
    job_status: jobStatus,
    zip_file: zipFile,
    result_text: resultText,
    sample_file: sampleFile,
  }),
);
`;

/**
 * Mistakes a client author could make, each of which the generated types must refuse: a misspelled field of a JSON
 * body, of a multipart body, of a JSON answer, and a value outside an enum. [written, mistaken, the name tsc reports].
 */
export const TS_MISTAKES: [string, string, string][] = [
  ['markdownBody: MarkdownBody = { html }', 'markdownBody: MarkdownBody = { htm: html }', "'htm'"],
  ["extraction_method: 'native',", "extraction_mode: 'native',", "'extraction_mode'"],
  ['pdf.data.data.metadata.page_count', 'pdf.data.data.metadata.pages_count', "'pages_count'"],
  ["job_type: 'transformer'", "job_type: 'transform'", '"transform"'],
];

/** The client program with every one of TS_MISTAKES made (each written text must occur in TS_CLIENT once). */
export function mistakenTsClient(): string {
  let src = TS_CLIENT;
  for (const [written, mistaken] of TS_MISTAKES) {
    if (src.split(written).length !== 2) throw new Error(`TS_MISTAKES: "${written}" is not in TS_CLIENT exactly once`);
    src = src.replace(written, mistaken);
  }
  return src;
}

/**
 * A directory holding the generated types (`docproc-api.d.ts`) and `client.ts`, set up as a strict ES module
 * project that finds this repository's node_modules (openapi-fetch, @types/node), as a user's project would.
 */
export function writeTsProject(dir: string, types: string, client: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'docproc-api.d.ts'), types);
  fs.writeFileSync(path.join(dir, 'client.ts'), client);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2022', 'DOM'],
        types: ['node'],
        strict: true,
        noEmit: true,
      },
      files: ['client.ts'],
    }),
  );
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
}

/** `tsc -p` on such a project. */
export const typecheckTsProject = (dir: string): Promise<Ran> =>
  runProgram(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { timeoutMs: 180_000 });

/** Runs the project's `client.ts` (through tsx, which only strips the types tsc checked). */
export const runTsClient = (dir: string, args: string[]): Promise<Ran> =>
  runProgram(process.execPath, ['--import', 'tsx', path.join(dir, 'client.ts'), ...args], { cwd: dir });

// ---- Python: openapi-python-client ---------------------------------------------------------------------------------

/** The package the generator writes (its name fixed by the config, so the calling script can import it). */
export const PYTHON_PACKAGE = 'docproc_client';

/**
 * Runs `openapi-python-client generate` on the document in `specFile`, writing the project to `outDir` (the package
 * in `outDir/docproc_client`). No post hooks: the generator would format its output with ruff where ruff is installed
 * (and warn where it is not); the code is the same either way.
 */
export async function generatePythonClient(python: string, specFile: string, outDir: string): Promise<Ran> {
  const config = path.join(path.dirname(specFile), 'openapi-python-client.yaml');
  fs.writeFileSync(
    config,
    ['project_name_override: docproc-client', `package_name_override: ${PYTHON_PACKAGE}`, 'post_hooks: []', ''].join(
      '\n',
    ),
  );
  return runProgram(
    python,
    ['-m', 'openapi_python_client', 'generate', '--path', specFile, '--output-path', outDir, '--config', config],
    { timeoutMs: 180_000 },
  );
}

/** Runs generated_client_calls.py with the generator's python, the generated project on PYTHONPATH. */
export const runPythonClient = (python: string, projectDir: string, args: string[]): Promise<Ran> =>
  runProgram(python, [path.join(HERE, 'generated_client_calls.py'), ...args], {
    env: { ...process.env, PYTHONPATH: projectDir, PYTHONDONTWRITEBYTECODE: '1' },
  });
