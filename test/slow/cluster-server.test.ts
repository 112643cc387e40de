import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Connection } from '@temporalio/client';
import { parse } from 'yaml';
import { S3BlobStore } from '../../providers/storage/s3.store';
import { serverSettings } from '../../scripts/cluster-server-config.mjs';
import { freePort } from '../../scripts/services.mjs';
import { chaosBatch, type BatchCounts } from '../support/chaos/chaos-batch';
import {
  apiClient,
  checkJob,
  expectModelCallsAnsweredOnce,
  expectOneCompletionWebhookEach,
} from '../support/chaos/chaos-checks';
import { environOf, runMixed, stackPids } from '../support/servers/cluster-run';
import { npmCluster, untilBanner, type Launched } from '../support/servers/launcher';
import { startLlmDouble, type LlmDouble } from '../support/servers/llm-double';
import { LLM_KEY, LLM_MODEL } from '../support/servers/llm-env';
import { ROOT } from '../support/servers/processes';
import { tempDir } from '../support/servers/engines';
import { startWebhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver';

// Issue #27: the cluster layout of docker-compose.yml run for real — `npm run cluster -- --temporal server`:
// PostgreSQL, the Temporal server on it (4 history shards) and its UI, MinIO, 2 APIs, an io and 2 media workers, each
// supervised — works through a mixed batch of 200 jobs (native and OCR PDFs, translations and templates answered by
// the LLM double, a webhook each) POSTed round-robin to both APIs, while the Temporal server, PostgreSQL, a media
// worker and an API are SIGKILLed in turn mid-batch and restarted by the launcher. Every job completes exactly once
// with its own result and one completion webhook.

const COUNTS: BatchCounts = { native: 172, scan: 8, audio: 0, translate: 14, template: 6, session: 0 };
const JOBS = Object.values(COUNTS).reduce((a, b) => a + b, 0);

describe('the cluster layout on a real Temporal server with PostgreSQL under SIGKILL (slow)', function () {
  this.timeout(1_500_000);
  let dataDir = '';
  let stack: Launched | undefined;
  let double: LlmDouble | undefined;
  let hook: WebhookReceiver | undefined;

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && stack) console.log(stack.output().slice(-12000));
    stack?.killAll();
    await double?.stop();
    await hook?.close();
    try {
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    } catch {
      // a process killed just now may still have had a file open
    }
    stack = double = hook = undefined;
  });

  it('completes a mixed batch of 200 jobs exactly once with its own results while the Temporal server, PostgreSQL, a worker and an API are killed', async () => {
    const t0 = Date.now();
    dataDir = tempDir('docproc-cluster-server-');
    hook = await startWebhookReceiver();
    double = await startLlmDouble({
      port: await freePort(),
      dir: path.join(dataDir, 'llm'),
      apiKey: LLM_KEY,
      generationMs: 200,
    });
    const jobs = await chaosBatch({ dir: path.join(dataDir, 'in'), counts: COUNTS, hookUrl: hook.url });
    expect(jobs).to.have.length(JOBS);
    stack = await npmCluster(
      await freePort(),
      dataDir,
      ['--temporal', 'server', '--apis', '2', '--io-workers', '1', '--media-workers', '2'],
      { LLM_BASE_URL: double.url, LLM_MODEL, LLM_API_KEY: LLM_KEY, LLM_TIMEOUT_MS: '60000', LLM_MAX_RETRIES: '2' },
    );
    const s = stack;
    await untilBanner(s, 900_000);
    const ready = Date.now();
    expect(s.output()).to.match(/Temporal UI: +http:\/\/127\.0\.0\.1:\d+/);
    expect(s.output()).to.include('namespace default: added JobType, JobStatus, BatchId, UserId');

    // A real server: several history shards, persistence on PostgreSQL; the processes told what compose tells them.
    const connection = await Connection.connect({ address: s.temporalAddress });
    try {
      const info = await connection.workflowService.getClusterInfo({});
      expect(info.historyShardCount).to.equal(4);
      expect(info.persistenceStore).to.equal('postgres12');
      expect(info.serverVersion).to.equal('1.29.1');
    } finally {
      await connection.close();
    }
    const compose = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }).services;
    const fromCompose = (service: string, name: string) =>
      String(compose[service].environment[name]).replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/, '$1');
    for (const [service, queues] of [
      ['worker-io', 'io,llm'],
      ['worker-media', 'media'],
    ]) {
      const pid = stackPids(s, 'worker/main.ts', { WORKER_QUEUES: queues })[0];
      const env = environOf(pid);
      for (const name of ['STORAGE', 'S3_BUCKET', 'TEMPORAL_NAMESPACE', 'WORKER_QUEUES'])
        expect(env[name], `${service} ${name}`).to.equal(fromCompose(service, name));
    }
    expect(serverSettings({}).namespace).to.equal(fromCompose('temporal', 'DEFAULT_NAMESPACE'));

    const run = await runMixed(s, jobs, hook, {
      victims: ['temporal', 'postgresql', 'worker', 'api'],
      timeoutMs: 900_000,
      log: (l) => console.log(l),
    });
    expect(run.kills.map((k) => k.victim)).to.deep.equal(['temporal', 'postgresql', 'worker', 'api']);
    for (const k of run.kills) expect(k.servingAt, `${k.victim} replaced and serving`).to.be.a('number');
    expect(Object.values(run.perApi).every((n) => n > 0)).to.equal(true);

    // Every job exactly once, with its own result; one completion webhook each; no model call answered twice.
    const ids = jobs.map((j) => j.jobId!);
    expect(new Set(ids).size).to.equal(JOBS);
    const api = apiClient(Object.keys(run.perApi)[0]);
    for (const j of jobs) await checkJob(api, j);
    expectOneCompletionWebhookEach(hook, ids);
    const byKind = (k: string) => jobs.filter((j) => j.kind === k).length;
    expect({ native: byKind('native'), scan: byKind('scan'), translate: byKind('translate') }).to.deep.equal({
      native: COUNTS.native,
      scan: COUNTS.scan,
      translate: COUNTS.translate,
    });
    await expectModelCallsAnsweredOnce(double, jobs, s.temporalAddress, ready);

    // One record per job in the bucket, no upload left.
    const minio = /MinIO \(S3\): +(http:\/\/\S+) +bucket (\S+)/.exec(s.output())!;
    const store = await new S3BlobStore({
      endpoint: minio[1],
      accessKey: 'docproc',
      secretKey: 'docproc-cluster-secret',
      bucket: minio[2],
    }).init();
    expect((await store.listKeys('records/jobs/')).sort()).to.deep.equal(
      ids.map((id) => `records/jobs/${id}.json`).sort(),
    );

    // The launcher's own account: each victim restarted once by its supervisor, nothing in a crash loop.
    for (const name of ['temporal', 'postgresql', 'media-\\d', 'api-2'])
      expect(s.output(), name).to.match(new RegExp(`\\[setup\\] ${name}: exited unexpectedly \\(SIGKILL\\)`));
    expect(s.output()).to.not.include('crash loop');

    const how = await s.stop(120_000);
    expect([0, 'SIGTERM']).to.include(how);
    console.log(
      `      cluster (Temporal server on PostgreSQL) figures: ready in ${((ready - t0) / 1000).toFixed(0)} s; ${JOBS} jobs in ` +
        `${run.seconds.toFixed(1)} s (${(JOBS / run.seconds).toFixed(2)} jobs/s) with 4 kills; ${run.retriedPosts} POSTs retried; per API ${Object.values(run.perApi).join('/')}; ` +
        run.kills
          .map(
            (k) =>
              `${k.victim}: healthy again after ${(((k.servingAt ?? NaN) - k.at) / 1000).toFixed(1)} s, ` +
              `a job taken after ${(((k.acceptedAt ?? NaN) - k.at) / 1000).toFixed(1)} s`,
          )
          .join(', '),
    );
  });
});
