import path from 'node:path';
import { expect } from 'chai';
import { S3BlobStore } from '../../providers/storage/s3.store';
import {
  completedWebhooks,
  retriedActivities,
  runRoundRobin,
  startCluster,
  writeLightPdfs,
  type Cluster,
} from '../support/servers/cluster';
import { startWebhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver';

// Issue #16: the service scaled out as `npm run cluster` runs it — 2 API processes, 1 io worker, 2 media workers,
// S3 storage on a real MinIO, a Temporal dev server — with 200 jobs submitted round-robin to both APIs while one
// API and one media worker are SIGKILLed midway and started again. Every job completes once, with its own output.

const JOBS = 200;

describe('a multi-process cluster under SIGKILL (slow)', function () {
  this.timeout(600_000);
  let cluster: Cluster | undefined;
  let hook: WebhookReceiver | undefined;

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && cluster) console.log(cluster.dump());
    await cluster?.stop();
    await hook?.close();
    cluster = hook = undefined;
  });

  it('completes 200 jobs submitted round-robin to two APIs exactly once while an API and a media worker are killed and restarted', async () => {
    cluster = await startCluster({ apis: 2, ioWorkers: 1, mediaWorkers: 2 });
    hook = await startWebhookReceiver();
    const docs = writeLightPdfs(path.join(cluster.dataDir, 'in'), JOBS);

    const run = await runRoundRobin(cluster, docs, hook, { kill: { after: 40 }, timeoutMs: 400_000 });

    // Both APIs took jobs; the killed one's share went to the other only while it was down.
    const ids = run.jobs.map((j) => j.jobId);
    expect(new Set(ids).size, 'one job id per POST').to.equal(JOBS);
    const perApi = cluster.apis.map((a) => run.jobs.filter((j) => j.via === a.url).length);
    expect(perApi[0] + perApi[1]).to.equal(JOBS);
    // Its share of the first half and of the last quarter (after its restart); the third quarter's share went over.
    expect(perApi).to.deep.equal([JOBS / 2 + JOBS / 8, JOBS / 2 - JOBS / 8]);
    expect(run.failedOver).to.equal(JOBS / 8);

    // Every webhook delivered: one completion event (one X-Webhook-Id, retries may repeat it) per job, none failed.
    const completed = completedWebhooks(hook);
    expect([...completed.keys()].sort()).to.deep.equal([...ids].sort());
    for (const [jobId, events] of completed) expect(events.size, `completion events of ${jobId}`).to.equal(1);
    expect(hook.requests.filter((r) => r.json?.phase === 'failed')).to.deep.equal([]);

    // Each job completed once, with its own document's text; asked of both APIs (the restarted one too).
    for (const [i, job] of run.jobs.entries()) {
      const url = cluster.apis[i % 2].url;
      const res = await fetch(`${url}/api/jobs/${job.jobId}`);
      expect(res.status, job.jobId).to.equal(200);
      const data = ((await res.json()) as { data: any }).data;
      expect(data.status, job.jobId).to.equal('completed');
      expect(data.results.structured_data.extracted_text, job.jobId).to.include(job.marker);
      const messages: string[] = data.logs.map((l: { message: string }) => l.message);
      expect(
        messages.filter((m) => m === 'Job completed'),
        `${job.jobId} completed once`,
      ).to.have.length(1);
      const webhookData = [...hook.requests].find(
        (r) => r.json?.phase === 'completed' && r.json.process?.id === job.jobId,
      )!.json.data;
      expect(webhookData.extracted_text, `webhook of ${job.jobId}`).to.include(job.marker);
    }

    // The object store holds exactly one record per job and no output of a job twice (no second run's files).
    const store = await new S3BlobStore({
      endpoint: cluster.minio.endpoint,
      accessKey: cluster.minio.accessKey,
      secretKey: cluster.minio.secretKey,
      bucket: cluster.env.S3_BUCKET,
    }).init();
    const records = await store.listKeys('records/jobs/');
    expect(records.sort()).to.deep.equal(ids.map((id) => `records/jobs/${id}.json`).sort());
    const outputs = await store.listKeys('jobs/');
    const jobsWithOutput = new Set(outputs.map((k) => k.split('/')[1]));
    expect([...jobsWithOutput].sort()).to.deep.equal([...ids].sort());
    const outNames = new Map<string, string[]>();
    for (const k of outputs) {
      const [, id, ...rest] = k.split('/');
      outNames.set(id, [...(outNames.get(id) ?? []), rest.join('/')]);
    }
    const shapes = new Set(
      [...outNames.values()].map((names) =>
        names
          .filter((n) => !n.includes('steps/'))
          .sort()
          .join(','),
      ),
    );
    expect(shapes.size, `every job has the same output files: ${[...shapes].join(' | ')}`).to.equal(1);

    // Steps the kill cut short were retried (how many depends on what the media worker held at that moment).
    const retried = await retriedActivities(cluster, ids);

    const rate = JOBS / run.seconds;
    console.log(
      `      cluster figures: ${JOBS} jobs in ${run.seconds.toFixed(1)} s (${rate.toFixed(1)} jobs/s) with 2 APIs, 1 io + 2 media workers; ` +
        `killed API + media worker at ${run.killedAt?.toFixed(1)} s; ${run.failedOver} POSTs went to the other API meanwhile; per API ${perApi.join('/')}; ` +
        `${retried} activities needed a second attempt`,
    );
  });
});
