import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import proto from '@temporalio/proto';
import { newJobId, taskQueues } from '../../core/jobs/ids';
import { jobWorkflow } from '../../workflows/job.workflow';
import { pingWorkflow } from '../../workflows/ping.workflow';
import { llmEnv, LLM_KEY } from '../support/servers/llm-env';
import { startLlmServer, type LlmServer } from '../support/servers/llm-server';
import { waitFor } from '../support/wait';
import { sharedDevServer, tempDir } from '../support/servers/engines';
import { startTestWorker, type TestWorker } from '../support/workflows/worker';

const { temporal } = proto;

/** WORKER_QUEUES splits the io, media and llm Workers into processes of their own (compose runs io,llm and media). */
describe('worker queues and memory budget', function () {
  this.timeout(120_000);
  const started: TestWorker[] = [];
  let address: string;
  before(async () => {
    address = (await sharedDevServer()).address;
  });
  let llm: LlmServer | undefined;
  afterEach(async () => {
    await Promise.all(started.splice(0).map((w) => w.stop()));
    await llm?.close();
    llm = undefined;
  });

  const pollers = async (w: TestWorker, queue: string, kind: 'workflow' | 'activity') => {
    const res = await w.client.workflowService.describeTaskQueue({
      namespace: w.config.TEMPORAL_NAMESPACE,
      taskQueue: { name: queue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      taskQueueType:
        kind === 'workflow'
          ? temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW
          : temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    });
    return res.pollers?.length ?? 0;
  };

  it('an io-only and a media-only worker, each under a memory budget, together run a workflow through both queues', async () => {
    const prefix = `wq-${randomUUID().slice(0, 8)}`;
    const queues = taskQueues(prefix);
    const env = { TASK_QUEUE_PREFIX: prefix, WORKER_MAX_MEMORY_MB: '4096', DATA_DIR: tempDir() };
    const media = await startTestWorker(address, { ...env, WORKER_QUEUES: 'media' });
    started.push(media);
    expect(media.workers.io).to.equal(undefined);
    expect(media.workers.media).not.to.equal(undefined);
    await waitFor(
      async () => ((await pollers(media, queues.media, 'activity')) > 0 ? true : undefined),
      'media pollers',
    );
    expect(await pollers(media, queues.io, 'workflow')).to.equal(0);
    expect(await pollers(media, queues.io, 'activity')).to.equal(0);

    const io = await startTestWorker(address, { ...env, WORKER_QUEUES: 'io' });
    started.push(io);
    expect(io.workers.media).to.equal(undefined);
    const result = await io.client.workflow.execute(pingWorkflow, {
      taskQueue: queues.io,
      workflowId: `ping-${randomUUID()}`,
      args: [{ ioQueue: queues.io, mediaQueue: queues.media }],
      workflowExecutionTimeout: '60s',
    });
    expect(result).to.deep.equal({ io: queues.io, media: queues.media });
  });

  it('a model job runs its model step on the llm queue, served by an llm-only worker while the io worker polls no llm queue', async () => {
    llm = await startLlmServer({ apiKey: LLM_KEY });
    const prefix = `wq-${randomUUID().slice(0, 8)}`;
    const queues = taskQueues(prefix);
    const env = { TASK_QUEUE_PREFIX: prefix, DATA_DIR: tempDir(), ...llmEnv(llm) };
    const model = await startTestWorker(address, { ...env, WORKER_QUEUES: 'llm', WORKER_LLM_SLOTS: '3' });
    started.push(model);
    expect(model.workers.io).to.equal(undefined);
    expect(model.workers.media).to.equal(undefined);
    expect(model.workers.llm).not.to.equal(undefined);
    await waitFor(async () => ((await pollers(model, queues.llm, 'activity')) > 0 ? true : undefined), 'llm pollers');
    expect(await pollers(model, queues.io, 'workflow')).to.equal(0);
    expect(await pollers(model, queues.io, 'activity')).to.equal(0);
    const io = await startTestWorker(address, { ...env, WORKER_QUEUES: 'io' }, model.store);
    started.push(io);
    expect(io.workers.llm).to.equal(undefined);

    const text = 'The committee met on Thursday. It agreed to extend the library opening hours from March.';
    const jobId = newJobId();
    const parameters = { operation: 'summarize' as const, text, max_length: 300, use_cache: false };
    const handle = await io.client.workflow.start(jobWorkflow, {
      workflowId: jobId,
      taskQueue: queues.io,
      args: [{ jobId, jobType: 'transformer', parameters, createdAt: new Date().toISOString(), run: 1 }],
    });
    expect(await handle.result()).to.deep.equal({ status: 'completed' });
    expect(llm.chatRequests().length).to.be.at.least(1);

    const { events } = await handle.fetchHistory();
    const step = events!.filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runTransformerStep',
    );
    expect(step).to.have.length(1);
    expect(step[0].activityTaskScheduledEventAttributes!.taskQueue?.name).to.equal(queues.llm);
    expect(step[0].activityTaskScheduledEventAttributes!.priority?.fairnessKey).to.equal(jobId);
    // Bookkeeping stays on io: the webhook-free job's remote activities, if any, are on the io queue.
    const others = events!.filter(
      (e) =>
        e.activityTaskScheduledEventAttributes &&
        e.activityTaskScheduledEventAttributes.activityType?.name !== 'runTransformerStep',
    );
    for (const e of others) expect(e.activityTaskScheduledEventAttributes!.taskQueue?.name).to.equal(queues.io);
  });

  it("downloads run on slots of their own: with every io slot's worth of downloads trickling, another job's io step runs at once", async () => {
    // A loopback server whose image never finishes: a byte every 200 ms, so each download holds its slot (heartbeating)
    // until the test ends it.
    const open = new Set<http.ServerResponse>();
    const server = http.createServer((_req, res) => {
      open.add(res);
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': 1_000_000 });
      const timer = setInterval(() => res.write('x'), 200);
      res.on('close', () => {
        clearInterval(timer);
        open.delete(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow.png`;
    const prefix = `wq-${randomUUID().slice(0, 8)}`;
    const queues = taskQueues(prefix);
    const w = await startTestWorker(address, {
      TASK_QUEUE_PREFIX: prefix,
      DATA_DIR: tempDir(),
      IO_CONCURRENCY: '2',
      WORKER_DOWNLOAD_SLOTS: '2',
      ALLOW_PRIVATE_URLS: 'true',
    });
    started.push(w);
    expect(w.workers.download).not.to.equal(undefined);
    const start = (jobType: 'imageocr' | 'transformer', parameters: Record<string, unknown>) => {
      const jobId = newJobId();
      return w.client.workflow.start(jobWorkflow, {
        workflowId: jobId,
        taskQueue: queues.io,
        args: [{ jobId, jobType, parameters, createdAt: new Date().toISOString(), run: 1 }] as never,
      });
    };
    try {
      const downloads = await Promise.all([0, 1].map(() => start('imageocr', { url })));
      await waitFor(async () => (open.size === 2 ? true : undefined), 'two downloads under way', 60_000);
      // A page above the in-task size: its conversion is a regular activity on the io queue.
      const html = `<h1>Queues</h1>${'<p>Bookkeeping never waits behind a download.</p>'.repeat(500)}`;
      const other = await start('transformer', { operation: 'html-to-markdown', html });
      const outcome = await Promise.race([
        other.result(),
        new Promise((resolve) => setTimeout(() => resolve('still waiting after 45 s'), 45_000)),
      ]);
      expect(outcome).to.deep.equal({ status: 'completed' });
      expect(open.size, 'the downloads still run').to.equal(2);
      const { events } = await downloads[0].fetchHistory();
      const fetch = events!.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fetchImage');
      expect(fetch?.activityTaskScheduledEventAttributes?.taskQueue?.name).to.equal(queues.download);
      await Promise.all(downloads.map((h) => h.terminate('test over')));
    } finally {
      for (const res of open) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
