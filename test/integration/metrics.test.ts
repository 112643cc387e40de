import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { freePort } from '../../scripts/services.mjs';
import { healthOk, ROOT, spawnService, type Proc } from '../support/servers/processes';
import { waitFor } from '../support/wait';
import { startTestApi } from '../support/servers/api';
import { sharedDevServer, tempDir } from '../support/servers/engines';
import { startWebhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver';

// Prometheus metrics of the API and of a worker, each its own process as `npm start` runs them (the worker with its
// Temporal SDK exporter), after real jobs: a synchronous PDF call twice (the second a cache hit), a job with a webhook.

const KEY = 'metrics-test-key';
const SAMPLE = fs.readFileSync(path.join(ROOT, 'samples/sample.pdf'));

/** The summed value of the samples of `name` whose labels include `labels` (0 when there is none). */
function value(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? ([^ ]+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

/** Every label value of `label` on the samples of metrics named `prefix…`. */
function labelValues(text: string, prefix: string, label: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(new RegExp(`^${prefix}[a-z_]*\\{[^}]*\\b${label}="([^"]*)"`, 'gm'))) out.add(m[1]);
  return out;
}

describe('Prometheus metrics of the API and the worker', function () {
  this.timeout(180_000);
  const procs: Proc[] = [];
  let receiver: WebhookReceiver;
  let url: string;
  let workerMetrics: string;
  const auth = { Authorization: `Bearer ${KEY}` };

  before(async function () {
    this.timeout(150_000);
    const temporal = await sharedDevServer();
    receiver = await startWebhookReceiver();
    const [port, metricsPort] = [await freePort(), await freePort()];
    const env = {
      TEMPORAL_ADDRESS: temporal.address,
      DATA_DIR: tempDir('docproc-metrics-'),
      PORT: String(port),
      HOST: '127.0.0.1',
      SERVICE_API_KEY: KEY,
      TASK_QUEUE_PREFIX: `metrics${port}`,
      WORKER_METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'warn',
    };
    url = `http://127.0.0.1:${port}`;
    workerMetrics = `http://127.0.0.1:${metricsPort}/metrics`;
    procs.push(spawnService('worker', env), spawnService('api', env));
    try {
      await waitFor(() => healthOk(url), 'a healthy service', 120_000);
      await waitFor(
        async () => ((await fetch(workerMetrics)).ok ? true : undefined),
        'the worker metrics listener',
        60_000,
      );
    } catch (err) {
      for (const p of procs) console.log(p.output().slice(-4000));
      throw err;
    }
  });

  after(async () => {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.ended));
    await receiver?.close();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') for (const p of procs) console.log(p.output().slice(-4000));
  });

  it('counts requests by route pattern and status, jobs, pages, cache lookups, webhooks and activity times', async () => {
    let pages = 0;
    // The first call asks for a job (`wait_ms`), the second is a cache hit the API answers, the third (another
    // range) is read by the API itself (INLINE_PDF_MAX_PAGES): its miss and its page are the API's.
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${url}/api/pdf/process${i === 0 ? '?wait_ms=60000' : ''}`, {
        method: 'POST',
        headers: auth,
        body: (() => {
          const form = new FormData();
          form.append('file', new Blob([new Uint8Array(SAMPLE)], { type: 'application/pdf' }), 'sample.pdf');
          form.append('extraction_method', 'native');
          if (i === 2) form.append('page_end', '1');
          return form;
        })(),
      });
      expect(r.status, await r.clone().text()).to.equal(200);
      pages ||= ((await r.json()) as any).data.metadata.text_contents.length;
      expect(r.headers.get('x-cache') ?? 'miss').to.equal(i === 1 ? 'hit' : 'miss');
    }
    const created = await fetch(`${url}/api/jobs/`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        job_type: 'transformer',
        parameters: { operation: 'html-to-markdown', html: '<h1>Metrics</h1>' },
        webhook: { url: receiver.url },
      }),
    }).then((r) => r.json() as Promise<any>);
    const jobId = created.data.job_id as string;
    const job = await waitFor(async () => {
      const r = (await fetch(`${url}/api/jobs/${jobId}?wait=5`, { headers: auth }).then((x) => x.json())) as any;
      return r.data.status === 'completed' || r.data.status === 'failed' ? r.data : undefined;
    }, 'the job to finish');
    expect(job.status).to.equal('completed');
    await receiver.waitFor((reqs) => reqs.some((q) => q.json?.phase === 'completed'), 30_000);
    // A wrong key, on a route with an id: refused before routing, labelled with the route's pattern all the same.
    expect((await fetch(`${url}/api/jobs/${jobId}`, { headers: { Authorization: 'Bearer wrong' } })).status).to.equal(
      401,
    );
    expect((await fetch(`${url}/no/such/${jobId}`, { headers: auth })).status).to.equal(404);

    const api = await fetch(`${url}/metrics`, { headers: auth }).then((r) => r.text());
    const http = 'docproc_http_request_duration_seconds_count';
    expect(value(api, http, { method: 'POST', route: '/api/pdf/process', status: '200' })).to.equal(3);
    expect(
      value(api, http, { method: 'POST', route: '/api/jobs/', status: '202' }) +
        value(api, http, { method: 'POST', route: '/api/jobs/', status: '200' }),
    ).to.equal(1);
    expect(value(api, http, { method: 'GET', route: '/api/jobs/:job_id', status: '200' })).to.be.at.least(1);
    expect(value(api, http, { method: 'GET', route: '/api/jobs/:job_id', status: '401' })).to.equal(1);
    expect(value(api, http, { method: 'GET', route: 'unmatched', status: '404' })).to.equal(1);
    // Bounded label values: route patterns only, never a raw path with an id in it.
    for (const route of labelValues(api, 'docproc_http_', 'route')) expect(route).to.not.include('job-');
    expect(value(api, 'process_resident_memory_bytes')).to.be.above(0);
    // The second call is answered from the cache by the API itself, without a job (issue 24): its hit is the API's.
    expect(value(api, 'docproc_cache_lookups_total', { operation: 'pdf', result: 'hit' })).to.equal(1);
    expect(value(api, 'docproc_cache_lookups_total', { operation: 'pdf', result: 'miss' })).to.equal(1);
    expect(value(api, 'docproc_pdf_pages_processed_total', { method: 'native' })).to.equal(1);

    // The receiver saw the webhook before its activity returned, and a job's workflow closes after its answer and its
    // webhooks: wait until the worker has seen both workflows close (the PDF cache hit started none).
    const w = await waitFor(
      async () => {
        const t = await fetch(workerMetrics).then((r) => r.text());
        const done =
          value(t, 'docproc_webhook_attempts_total', { phase: 'completed', outcome: 'delivered' }) >= 1 &&
          value(t, 'temporal_workflow_completed', { workflow_type: 'jobWorkflow' }) >= 2;
        return done ? t : undefined;
      },
      'the webhook attempt and the two workflows to be counted',
      30_000,
    );
    expect(value(w, 'docproc_jobs_finished_total', { job_type: 'pdf', outcome: 'completed' })).to.equal(1);
    expect(value(w, 'docproc_jobs_finished_total', { job_type: 'transformer', outcome: 'completed' })).to.equal(1);
    expect(value(w, 'docproc_jobs_finished_total', { outcome: 'failed' })).to.equal(0);
    expect(value(w, 'docproc_pdf_pages_processed_total', { method: 'native' }))
      .to.equal(pages)
      .and.above(0); // read once: the second call is a cache hit
    expect(value(w, 'docproc_cache_lookups_total', { operation: 'pdf', result: 'miss' })).to.equal(1);
    expect(value(w, 'docproc_cache_lookups_total', { operation: 'pdf', result: 'hit' })).to.equal(0);
    expect(
      value(w, 'docproc_activity_duration_seconds_count', {
        activity: 'readPdfText',
        outcome: 'ok',
        task_queue: `metrics${new URL(url).port}-media`,
      }),
    ).to.equal(1);
    expect(
      value(w, 'docproc_activity_duration_seconds_count', { activity: 'deliverWebhook', outcome: 'ok' }),
    ).to.be.at.least(1);
    expect(value(w, 'docproc_activity_duration_seconds_sum', { activity: 'readPdfText' })).to.be.above(0);
    // The Temporal SDK's own metrics, from its runtime exporter, on the same scrape.
    expect(value(w, 'temporal_workflow_completed', { workflow_type: 'jobWorkflow' })).to.equal(2);
    expect(value(w, 'temporal_activity_execution_latency_count')).to.be.at.least(1);
  });

  it('puts the SDK exporter on another port when the one found free is bound before the exporter binds it', async () => {
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'test/support/servers/sdk-runtime-clash.ts')],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    const r = JSON.parse(out.trim().split('\n').at(-1)!) as {
      held: number;
      offered: number[];
      address: string;
      status: number;
    };
    expect(r.offered[0], 'the held port offered first').to.equal(r.held);
    expect(r.offered).to.have.length(2);
    expect(r.address).to.equal(`127.0.0.1:${r.offered[1]}`);
    expect(r.status, 'the exporter serves on its second port').to.equal(200);
  });

  it('answers 401 to a scrape of the API without the key, and the worker listener 404 elsewhere', async () => {
    const r = await fetch(`${url}/metrics`);
    expect(r.status).to.equal(401);
    expect(((await r.json()) as any).error.code).to.equal('UNAUTHORIZED');
    expect((await fetch(workerMetrics.replace('/metrics', '/other'))).status).to.equal(404);
  });

  it('serves the API metrics without the key with METRICS_PUBLIC=true, and nothing else', async () => {
    const api = await startTestApi({ SERVICE_API_KEY: KEY, METRICS_PUBLIC: 'true' });
    try {
      const r = await fetch(`${api.url}/metrics`);
      expect(r.status).to.equal(200);
      expect(r.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
      expect(await r.text()).to.match(/^# HELP docproc_http_request_duration_seconds /m);
      expect((await fetch(`${api.url}/api/jobs/job-00000000-0000-4000-8000-000000000000`)).status).to.equal(401);
      expect((await fetch(`${api.url}/metrics/x`)).status).to.equal(401);
    } finally {
      await api.close();
    }
  });
});
