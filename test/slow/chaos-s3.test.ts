import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { S3BlobStore } from '../../providers/storage/s3.store';
import { freePort } from '../../scripts/services.mjs';
import { chaosBatch } from '../support/chaos/chaos-batch';
import {
  apiClient,
  blame,
  checkJob,
  expectModelCallsAnsweredOnce,
  expectOneCompletionWebhookEach,
} from '../support/chaos/chaos-checks';
import {
  attributeRetries,
  figuresTable,
  HealthProbe,
  runningSteps,
  type KillRecord,
} from '../support/chaos/chaos-figures';
import { completedWebhooks } from '../support/servers/cluster';
import { npmCluster, untilBanner, type Launched } from '../support/servers/launcher';
import { startLlmDouble, type LlmDouble } from '../support/servers/llm-double';
import { LLM_KEY, LLM_MODEL } from '../support/servers/llm-env';
import { filesUnder } from '../support/clients/partial-upload';
import { healthOk } from '../support/servers/processes';
import { waitFor } from '../support/wait';
import { tempDir } from '../support/servers/engines';
import { killPid } from '../support/servers/stack-procs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver';

// Issue #22, faults across the whole surface, the S3 layout: `npm run cluster` (a Temporal dev server, MinIO, an API,
// an io and a media worker, each supervised) works through a smaller mixed batch (native and OCR PDFs, translations
// and templates answered by the LLM double as a remote endpoint, a webhook on each) and MinIO is killed with SIGKILL
// while the jobs' steps read and write their blobs. The cluster restarts it; every job completes once with its own
// result. (The npm start case, test/slow/chaos.test.ts, runs on the local store: the two layouts in one test would
// double its length.)

const COUNTS = { native: 8, scan: 2, audio: 0, translate: 4, template: 2, session: 0 };
const JOBS = Object.values(COUNTS).reduce((a, b) => a + b, 0);

describe('chaos in the S3 layout: MinIO killed while npm run cluster works through a batch (slow)', function () {
  this.timeout(600_000);
  let dataDir = '';
  let stack: Launched | undefined;
  let double: LlmDouble | undefined;
  let hook: WebhookReceiver | undefined;
  let probe: HealthProbe | undefined;
  let kills: KillRecord[] = [];
  let started = 0;
  let title = 'chaos figures, S3 layout (the test failed before its end)';

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && stack) console.log(stack.output().slice(-8000));
    await probe?.stop();
    for (const k of kills) {
      k.servedAgain ??= probe?.firstOkAfter(k.at);
      k.healthDropped ??= probe?.downBetween(k.at, k.servedAgain ?? Infinity);
    }
    if (kills.length) console.log(figuresTable(title, started, kills));
    kills = [];
    stack?.killAll();
    await double?.stop();
    await hook?.close();
    try {
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    } catch {
      // a process killed just now may still have had a file open
    }
    stack = double = hook = probe = undefined;
  });

  it('completes every job exactly once with its own result after MinIO is killed mid-batch, one webhook each, nothing left behind', async () => {
    const t0 = Date.now();
    dataDir = tempDir('docproc-chaos-s3-');
    hook = await startWebhookReceiver();
    double = await startLlmDouble({
      port: await freePort(),
      dir: path.join(dataDir, 'llm'),
      apiKey: LLM_KEY,
      generationMs: 1000,
    });
    const jobs = await chaosBatch({ dir: path.join(dataDir, 'in'), counts: COUNTS, hookUrl: hook.url });
    stack = await npmCluster(await freePort(), dataDir, ['--apis', '1', '--io-workers', '1', '--media-workers', '1'], {
      LLM_BASE_URL: double.url,
      LLM_MODEL,
      LLM_API_KEY: LLM_KEY,
      LLM_TIMEOUT_MS: '60000',
      LLM_MAX_RETRIES: '2',
      BATCH_WINDOW: '4',
      WORKER_LLM_SLOTS: '2',
    });
    const s = stack;
    await untilBanner(s);
    started = Date.now();
    probe = new HealthProbe(() => s.url);
    const api = apiClient(s.url);
    const minioUrl = /MinIO \(S3\): +(http:\/\/\S+) +bucket (\S+)/.exec(s.output())!;
    const store = await new S3BlobStore({
      endpoint: minioUrl[1],
      accessKey: 'docproc',
      secretKey: 'docproc-cluster-secret',
      bucket: minioUrl[2],
    }).init();

    const created = await api.post('/api/jobs/batch', { batch_name: 'chaos-s3', jobs: jobs.map((j) => j.spec) });
    expect(created.status, JSON.stringify(created.body).slice(0, 500)).to.equal(200);
    const batchId: string = created.body.data.batch_id;
    created.body.data.batch.jobs.forEach((j: { job_id: string }, i: number) => (jobs[i].jobId = j.job_id));

    // MinIO while steps of the batch run (they read their inputs and write their outputs through it).
    {
      const { running, processing } = await waitFor(
        async () => {
          const b = await api.batch(batchId);
          const ids = b.jobs.filter((j: { status: string }) => j.status === 'processing').map((j: any) => j.job_id);
          const steps = ids.length ? await runningSteps(s.temporalAddress, ids) : [];
          return steps.length ? { running: steps, processing: ids.length } : undefined;
        },
        'steps of the batch running',
        300_000,
        50,
      );
      const pid = s.pid(path.join(dataDir, 'minio'));
      killPid(pid);
      const k: KillRecord = {
        process: 'MinIO',
        pid,
        doing: `serving ${running.length} running steps of ${processing} jobs`,
        at: Date.now(),
        running,
      };
      kills.push(k);
      await waitFor(
        async () =>
          s.pids(path.join(dataDir, 'minio')).some((p) => p !== pid) && (await healthOk(s.url)) ? true : undefined,
        'MinIO back',
        180_000,
        100,
      );
      k.replaced = Date.now();
      k.replacedBy = 'npm run cluster restarted it';
    }

    const batch = await waitFor(
      async () => {
        const b = await api.batch(batchId);
        return b.status === 'completed' ? b : undefined;
      },
      'the batch to complete',
      300_000,
      500,
    );
    const batchIds = jobs.map((j) => j.jobId!);
    await hook.waitFor(() => batchIds.every((id) => completedWebhooks(hook!).has(id)), 120_000);
    const finished = Date.now();

    expect(batch).to.include({ job_count: JOBS, completed_count: JOBS, failed_count: 0 });
    expect(batch.jobs.map((j: { job_id: string }) => j.job_id).sort()).to.deep.equal([...batchIds].sort());
    for (const j of jobs) await checkJob(api, j);
    expectOneCompletionWebhookEach(hook, batchIds);
    const answered = await expectModelCallsAnsweredOnce(double, jobs, s.temporalAddress, started);

    // The model-call journal in the bucket: one entry per answered call, one per transformer job; one record per
    // job; no upload or partial object left.
    const keys = await store.listKeys('jobs/');
    const journal = keys.filter((k) => /^jobs\/[^/]+\/internal\/model-calls\//.test(k));
    expect(journal.length, 'journal entries').to.equal(answered.size);
    for (const j of jobs.filter((x) => x.kind === 'translate' || x.kind === 'template'))
      expect(journal.filter((k) => k.startsWith(`jobs/${j.jobId}/`)).length, `journal of ${j.clientId}`).to.equal(1);
    expect((await store.listKeys('records/jobs/')).sort()).to.deep.equal(
      batchIds.map((id) => `records/jobs/${id}.json`).sort(),
    );
    expect(await store.listKeys('uploads/'), 'uploads kept').to.deep.equal([]);
    await attributeRetries(s.temporalAddress, kills, blame);

    await probe.stop();
    for (const k of kills) {
      k.servedAgain = probe.firstOkAfter(k.at);
      k.healthDropped = probe.downBetween(k.at, k.servedAgain ?? Infinity);
      expect(k.servedAgain, `served again after ${k.process} was killed`).to.be.a('number');
    }
    const how = await s.stop(120_000);
    expect([0, 'SIGTERM']).to.include(how);
    for (const dir of ['scratch', 'tmp/uploads'])
      expect(filesUnder(path.join(dataDir, dir)), `${dir} after the run`).to.deep.equal([]);

    title =
      `chaos figures, S3 layout: ${JOBS} batch jobs; cluster ready after ${((started - t0) / 1000).toFixed(0)} s, ` +
      `all done ${((finished - started) / 1000).toFixed(0)} s after the first POST, test ${((Date.now() - t0) / 1000).toFixed(0)} s`;
  });
});
