import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { BlobStore } from '../../core/stores/blob-store';
import { jobOfUpload } from '../../core/jobs/ids';
import { buildPdf } from './documents/pdf-factory';
import type { LlmServer } from './servers/llm-server';
import type { WebhookReceiver } from './servers/webhook-receiver';

/** Helpers of the result-shape and OCR-cache tests: inputs, the job a synchronous call ran, results vs data. */

/** The fields of a job's results that are not the endpoint's `data` (spec §2 Job, plus bookkeeping). */
const JOB_FIELDS = ['structured_data', 'assets', 'target_dir', 'llm_info', 'from_cache'];

let counter = 0;
/** A sentence no earlier request of this process sent, so its first request misses the result cache. */
export const unique = (text: string): string => `${text} Nummer ${++counter} von ${process.pid}.`;

/** A one-page PDF of `lines` (14 pt). */
export const textPdf = (lines: string[], title = 'Ergebnis'): Buffer =>
  buildPdf({ title, pages: [{ kind: 'lines', lines, size: 14 }] });

/** A PNG (150 dpi render by poppler) of a page showing `lines`. */
export function pageImage(lines: string[]): Buffer {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'result-shape-img-'));
  try {
    writeFileSync(path.join(dir, 'page.pdf'), textPdf(lines));
    execFileSync('pdftoppm', ['-r', '150', '-png', '-singlefile', path.join(dir, 'page.pdf'), path.join(dir, 'page')], {
      timeout: 30_000,
    });
    return readFileSync(path.join(dir, 'page.png'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A static HTTP server on 127.0.0.1 for image URLs: `put(name, bytes)` serves `/<name>` as PNG; `hits` counts GETs. */
export async function startFileServer() {
  const files = new Map<string, Buffer>();
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    const bytes = files.get((req.url ?? '').slice(1));
    if (!bytes) return void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
    res.writeHead(200, { 'Content-Type': 'image/png' }).end(bytes);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    hits,
    put: (name: string, bytes: Buffer) => (files.set(name, bytes), `${base}/${name}`),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The job ids that have a record in the store. */
export async function recordedJobs(store: BlobStore): Promise<Set<string>> {
  return new Set((await store.list('records/jobs/')).map((b) => path.basename(b.key, '.json')));
}

/**
 * Uploads no job owns: those of requests refused or answered without a job (a job's input stays with the job, named
 * after it, until retention removes both).
 */
export async function strayUploads(store: BlobStore): Promise<string[]> {
  const jobs = await recordedJobs(store);
  return (await store.list('uploads/')).map((b) => b.key).filter((k) => !jobs.has(jobOfUpload(k) ?? ''));
}

/**
 * Runs a synchronous request and answers its `data`, its `X-Cache` and the id of the one job it ran (the one job
 * record that appeared meanwhile; the tests run nothing else at the same time).
 */
export async function syncCall(store: BlobStore, call: () => Promise<{ status: number; body: any; headers: Headers }>) {
  const before = await recordedJobs(store);
  const r = await call();
  expect(r.status, JSON.stringify(r.body).slice(0, 600)).to.equal(200);
  expect(r.body.status).to.equal('success');
  const added = [...(await recordedJobs(store))].filter((id) => !before.has(id));
  expect(added, 'the request ran one job').to.have.length(1);
  return { data: r.body.data, cache: r.headers.get('x-cache'), jobId: added[0] };
}

/** The endpoint's `data` is the job's results restricted to the data fields; the results carry the job fields too. */
export function expectResultsCarry(
  results: Record<string, any>,
  data: Record<string, unknown>,
  fields: string[],
): void {
  expect(Object.keys(data).sort(), 'the spec data fields').to.deep.equal([...fields].sort());
  expect(
    Object.keys(data).filter((k) => JOB_FIELDS.includes(k)),
    'no job field in data',
  ).to.deep.equal([]);
  expect(Object.fromEntries(fields.map((k) => [k, results[k]]))).to.deep.equal(data);
  expect(results.structured_data.extracted_text).to.be.a('string');
  expect(results.structured_data.metadata).to.be.an('object');
  expect(results.assets).to.be.an('array').that.is.not.empty;
  expect(results.target_dir).to.be.a('string');
}

/** The `data` of the completed webhook of job `jobId`. */
export async function completedWebhookData(hook: WebhookReceiver, jobId: string): Promise<unknown> {
  const completed = (r: { json: any }) => r.json?.phase === 'completed' && r.json?.process?.id === jobId;
  await hook.waitFor((rs) => rs.some(completed), 30_000);
  return hook.requests.find(completed)!.json.data;
}

/** Holds every answer of the LLM test server until the returned function is called. */
export function holdModel(llm: LlmServer): () => void {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  llm.respond(async () => {
    await gate;
    return undefined;
  });
  return () => {
    release();
    llm.respond(null);
  };
}
