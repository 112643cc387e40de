import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { freePort } from '../../scripts/services.mjs';
import { scannedPdf } from '../support/documents/pdf-factory';
import { healthOk, spawnService, waitForJobEnd, type Proc } from '../support/servers/processes';
import { waitFor } from '../support/wait';
import { startDevServer, tempDir, type DevServer } from '../support/servers/engines';

// A 30-page OCR job whose worker is killed with SIGKILL halfway: a new worker finishes it, and no page that was
// recognised before the kill is recognised again (its page-cache entry is never rewritten).

const PAGES = 30;
const text = (n: number) =>
  `Seite ${n}. Die Überprüfung der Dokumente ergab, dass die Größe der Dateien für die Verarbeitung geeignet ist. ` +
  `Zahl ${n * 7} und Straße ${n}.`;

function cacheEntries(dataDir: string): Map<string, number> {
  const dir = path.join(dataDir, 'blobs', 'objects', 'cache', 'pdf-page');
  const out = new Map<string, number>();
  if (!fs.existsSync(dir)) return out;
  for (const f of fs.readdirSync(dir)) out.set(f, fs.statSync(path.join(dir, f)).mtimeMs);
  return out;
}

describe('OCR durability', function () {
  this.timeout(300_000);
  let temporal: DevServer;
  const procs: Proc[] = [];

  after(async () => {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await temporal?.stop();
  });

  it('finishes a 30-page OCR job after the worker is killed, without recognising done pages again', async () => {
    temporal = await startDevServer();
    const dataDir = tempDir('docproc-ocr-kill-');
    const port = await freePort();
    const env = {
      TEMPORAL_ADDRESS: temporal.address,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      TASK_QUEUE_PREFIX: `ocrkill${port}`,
    };
    const url = `http://127.0.0.1:${port}`;
    const pages: string[] = [];
    for (let i = 1; i <= PAGES; i++) pages.push(text(i));
    const pdf = await scannedPdf(pages, 200);
    const file = path.join(dataDir, 'scan.pdf');
    fs.writeFileSync(file, pdf);

    let worker = spawnService('worker', env);
    const api = spawnService('api', env);
    procs.push(worker, api);
    await waitFor(() => healthOk(url), 'a healthy service', 120_000);

    const created = await fetch(`${url}/api/jobs/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        job_type: 'pdf',
        parameters: { filename: file, extraction_method: 'local_ocr', ocr_language: 'de' },
      }),
    }).then((r) => r.json() as Promise<any>);
    const jobId = created.data.job_id as string;

    // Kill the worker once about a third of the pages are recognised.
    await waitFor(
      async () => (cacheEntries(dataDir).size >= PAGES / 3 ? true : undefined),
      'a third of the pages',
      180_000,
      100,
    );
    worker.child.kill('SIGKILL');
    await worker.ended;
    const before = cacheEntries(dataDir);
    expect(before.size).to.be.lessThan(PAGES);

    worker = spawnService('worker', env);
    procs.push(worker);
    const job = await waitForJobEnd(url, jobId, 240_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    const contents = job.results.structured_data.metadata.text_contents as {
      page: number;
      text: string;
      method: string;
    }[];
    expect(contents.map((c) => c.page)).to.deep.equal(pages.map((_, i) => i + 1));
    for (const c of contents) {
      expect(c.method).to.equal('local_ocr');
      expect(c.text).to.include(`Seite ${c.page}`);
    }
    const after = cacheEntries(dataDir);
    expect(after.size).to.equal(PAGES);
    for (const [f, mtime] of before) expect(after.get(f), `page cache ${f} rewritten`).to.equal(mtime);
  });
});
