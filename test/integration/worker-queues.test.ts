import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { taskQueues } from '../../core/ids';
import { pingWorkflow } from '../../workflows/ping.workflow';
import { waitFor } from '../support/processes';
import { sharedDevServer, tempDir } from '../support/servers';
import { startTestWorker, type TestWorker } from '../support/worker';

/** WORKER_QUEUES splits the io and media Workers into processes of their own (compose runs one of each). */
describe('worker queues and memory budget', function () {
  this.timeout(120_000);
  const started: TestWorker[] = [];
  let address: string;
  before(async () => {
    address = (await sharedDevServer()).address;
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((w) => w.stop()));
  });

  const pollers = async (w: TestWorker, queue: string, kind: 'workflow' | 'activity') => {
    const res = await w.client.workflowService.describeTaskQueue({
      namespace: w.config.TEMPORAL_NAMESPACE,
      taskQueue: { name: queue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      taskQueueType: kind === 'workflow' ? temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW : temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
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
    await waitFor(async () => ((await pollers(media, queues.media, 'activity')) > 0 ? true : undefined), 'media pollers');
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
});
