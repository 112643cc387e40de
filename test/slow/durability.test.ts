import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { htmlToMarkdown } from '../../core/html';
import { freePort } from '../../scripts/services.mjs';
import { healthOk, spawnService, type Proc } from '../support/servers/processes';
import { waitFor } from '../support/wait';
import { startDevServer, tempDir, type DevServer } from '../support/servers/engines';
import { htmlOfSize, sectionsHtml } from '../support/workflows/workflow-env';

// The service as `npm start` runs it (separate api and worker processes, a Temporal dev server on a SQLite file),
// broken on purpose: a worker killed mid-step, then every process and the server stopped and started again, then
// Temporal's state lost altogether. Jobs finish once, and every answer survives from the records.

interface Deployment {
  env: Record<string, string>;
  url: string;
  procs: Proc[];
}

async function call(url: string, method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url + p, {
    method,
    headers: body !== undefined ? { 'content-type': 'application/json' } : {},
    body: body !== undefined ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function getOk(url: string, p: string): Promise<any> {
  const r = await call(url, 'GET', p);
  expect(r.status, `GET ${p}: ${JSON.stringify(r.body)}`).to.equal(200);
  return r.body.data;
}

/** Polls a job (long-poll of 5 s per request) until it is finished. */
async function finished(url: string, jobId: string, timeoutMs: number): Promise<any> {
  return waitFor(
    async () => {
      const job = await getOk(url, `/api/jobs/${jobId}?wait=5`);
      return job.status === 'completed' || job.status === 'failed' ? job : undefined;
    },
    `job ${jobId} to finish`,
    timeoutMs,
    100,
  );
}

function workerReady(p: Proc): Promise<true> {
  return waitFor(
    async () => (p.output().includes('"msg":"worker ready"') ? true : undefined),
    'the worker to be ready',
    90_000,
    100,
  );
}

async function stop(p: Proc | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | string | undefined> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return undefined;
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 15_000);
  p.child.kill(signal);
  const how = await p.ended;
  clearTimeout(timer);
  return how;
}

describe('durability of jobs across crashes and restarts (slow)', function () {
  this.timeout(240_000);
  const servers: DevServer[] = [];
  const procs: Proc[] = [];

  async function deploy(temporal: DevServer, dataDir: string, port?: number): Promise<Deployment> {
    const apiPort = port ?? (await freePort());
    const env = { TEMPORAL_ADDRESS: temporal.address, DATA_DIR: dataDir, PORT: String(apiPort), HOST: '127.0.0.1' };
    const worker = spawnService('worker', env);
    const api = spawnService('api', env);
    procs.push(worker, api);
    const url = `http://127.0.0.1:${apiPort}`;
    await workerReady(worker);
    await waitFor(() => healthOk(url), 'a healthy service', 90_000);
    return { env, url, procs: [worker, api] };
  }

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') {
      for (const p of procs)
        console.log(`--- ${p.child.spawnargs.at(-1)} (pid ${p.child.pid}) ---\n${p.output().slice(-3000)}`);
    }
    await Promise.all(procs.splice(0).map((p) => stop(p, 'SIGKILL')));
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });

  it('finishes a job exactly once after its worker is killed with SIGKILL in the middle of its step', async () => {
    const temporal = await startDevServer();
    servers.push(temporal);
    const dataDir = tempDir('docproc-durable-');
    const d = await deploy(temporal, dataDir);
    const [worker1] = d.procs;

    const html = htmlOfSize(7_000_000, 'killed');
    const created = await call(d.url, 'POST', '/api/jobs/', {
      job_type: 'transformer',
      parameters: { operation: 'html-to-markdown', html },
    });
    expect(created.status).to.equal(200);
    const jobId: string = created.body.data.job_id;
    const outDir = path.join(dataDir, 'blobs', 'objects', 'jobs', jobId, 'out');

    await waitFor(
      async () => {
        const job = await getOk(d.url, `/api/jobs/${jobId}`);
        return job.status === 'processing' && job.progress.step === 'transform' ? job : undefined;
      },
      'the job to be converting',
      60_000,
      100,
    );
    await new Promise((r) => setTimeout(r, 1000));
    process.kill(worker1.child.pid!, 'SIGKILL');
    expect(await worker1.ended).to.equal('SIGKILL');
    expect(fs.existsSync(outDir), 'no output yet: the step was cut short').to.equal(false);

    const worker2 = spawnService('worker', d.env);
    procs.push(worker2);
    await workerReady(worker2);
    const job = await finished(d.url, jobId, 150_000);

    expect(job.status).to.equal('completed');
    expect(fs.readdirSync(outDir)).to.deep.equal(['result.md']);
    const expected = htmlToMarkdown(html);
    expect(
      fs.readFileSync(path.join(outDir, 'result.md'), 'utf8') === expected,
      'result.md is the conversion of the page',
    ).to.equal(true);
    expect(job.results.structured_data.extracted_text === expected, 'the results hold the full text').to.equal(true);
    expect(job.results.structured_data.metadata).to.deep.equal({
      operation: 'html-to-markdown',
      characters: expected.length,
    });
    expect(job.results.assets).to.deep.equal([`jobs/${jobId}/out/result.md`]);
    const messages: string[] = job.logs.map((l: { message: string }) => l.message);
    expect(messages.filter((m) => m === 'Job completed')).to.have.length(1);
    expect(messages.filter((m) => m.startsWith('Step html-to-markdown'))).to.have.length(1);
    expect(messages.filter((m) => m.startsWith('Processing transformer job'))).to.have.length(1);
  });

  it('answers every job and batch the same after all processes and Temporal restart, and from the records once Temporal forgot them', async () => {
    const dbFile = path.join(tempDir('docproc-temporal-'), 'temporal.db');
    const temporalPort = await freePort();
    const apiPort = await freePort();
    const dataDir = tempDir('docproc-durable-');
    let temporal = await startDevServer({ dbFile, port: temporalPort });
    servers.push(temporal);
    let d = await deploy(temporal, dataDir, apiPort);

    const jobs = Array.from({ length: 50 }, (_, i) => ({
      job_type: 'transformer',
      parameters: { operation: 'html-to-markdown', html: sectionsHtml(2, `b${i}`) },
    }));
    const batch = await call(d.url, 'POST', '/api/jobs/batch', { batch_name: 'fifty', jobs });
    expect(batch.status).to.equal(200);
    const batchId: string = batch.body.data.batch_id;
    const jobIds: string[] = batch.body.data.batch.jobs.map((j: { job_id: string }) => j.job_id);
    expect(jobIds).to.have.length(50);
    const single = await call(d.url, 'POST', '/api/jobs/', {
      job_type: 'transformer',
      parameters: { operation: 'html-to-markdown', html: '<h1>Single</h1><p>One <em>job</em>.</p>' },
    });
    const singleId: string = single.body.data.job_id;

    await finished(d.url, singleId, 60_000);
    const before = await waitFor(
      async () => {
        const b = await getOk(d.url, `/api/jobs/batch/${batchId}`);
        return b.status === 'completed' ? b : undefined;
      },
      'the batch to complete',
      120_000,
      250,
    );
    expect(before).to.include({ job_count: 50, completed_count: 50, failed_count: 0 });
    const allIds = [...jobIds, singleId];
    const snapshot = new Map<string, any>();
    for (const id of allIds) snapshot.set(id, await getOk(d.url, `/api/jobs/${id}`));
    for (const [id, job] of snapshot) {
      expect(job.status, id).to.equal('completed');
      expect(job.results.structured_data.extracted_text, id).to.be.a('string').and.not.equal('');
    }
    expect(snapshot.get(singleId).results.structured_data.extracted_text).to.equal('# Single\n\nOne _job_.');

    // Stop everything; start the same server on the same database and port, and new processes.
    const [w, a] = d.procs;
    expect(await stop(a)).to.equal(0);
    expect(await stop(w)).to.equal(0);
    await temporal.stop();
    temporal = await startDevServer({ dbFile, port: temporalPort });
    servers.push(temporal);
    d = await deploy(temporal, dataDir, apiPort);

    const after = await getOk(d.url, `/api/jobs/batch/${batchId}`);
    expect(after).to.deep.equal(before);
    for (const id of allIds) expect(await getOk(d.url, `/api/jobs/${id}`), id).to.deep.equal(snapshot.get(id));

    // Retention passed: a new server on the same port with an empty database. The records still answer.
    await temporal.stop();
    temporal = await startDevServer({
      dbFile: path.join(tempDir('docproc-temporal-'), 'fresh.db'),
      port: temporalPort,
    });
    servers.push(temporal);
    const forgotten = await waitFor(
      async () => {
        const r = await call(d.url, 'GET', `/api/jobs/batch/${batchId}`);
        return r.status === 200 ? r.body.data : undefined;
      },
      'the batch from its record',
      30_000,
    );
    expect(forgotten).to.include({
      batch_id: batchId,
      status: 'completed',
      job_count: 50,
      completed_count: 50,
      failed_count: 0,
    });
    expect(forgotten.jobs).to.deep.equal(before.jobs);
    for (const id of allIds) {
      const job = await getOk(d.url, `/api/jobs/${id}`);
      expect(job, id).to.deep.equal(snapshot.get(id));
    }
  });
});
