import { expect } from 'chai';
import { startTestApi } from '../support/servers/api';
import { startDevServer } from '../support/servers/engines';
import { startTestWorker } from '../support/workflows/worker';

// A test that fails or times out leaves its calls running: a `handle.result()` long poll, or the API still waiting
// for a sync job. Teardown then closes the connections and, later, stops the server. Those calls must end as
// rejections of their own promises, never as an uncaught "Channel has been shut down" thrown from the gRPC retry
// timer, which fails whatever test runs at that moment (or the run, after the last one).
describe('test teardown with calls still in flight', function () {
  this.timeout(120_000);

  it('stopping the API and the worker, then their Temporal server, throws nothing outside the calls', async () => {
    const server = await startDevServer({ dbFile: null });
    const prefix = `td${Math.random().toString(36).slice(2, 8)}`;
    const env = { TEMPORAL_ADDRESS: server.address, TASK_QUEUE_PREFIX: prefix };
    const worker = await startTestWorker(server.address, env);
    const api = await startTestApi(env, { store: worker.store });
    const uncaught: Error[] = [];
    const onUncaught = (e: Error) => uncaught.push(e);
    process.prependListener('uncaughtException', onUncaught);
    try {
      // Workflows nobody runs: waiting for their results is a long poll that only ends with the server.
      const clients = [api.temporal.client, worker.client];
      const handles = await Promise.all(
        clients.map((c, i) =>
          c.workflow.start('neverRuns', { taskQueue: `${prefix}-nobody`, workflowId: `${prefix}-${i}` }),
        ),
      );
      const ended = handles.map((h) =>
        h.result().then(
          () => 'resolved',
          (e: Error) => `rejected: ${e.message}`,
        ),
      );
      await api.close();
      await worker.stop();
      await server.stop();
      // With the server gone each call fails after its retries; none may throw from a timer meanwhile.
      const outcomes = await Promise.all(ended);
      expect(uncaught.map((e) => e.message)).to.deep.equal([]);
      for (const o of outcomes) expect(o).to.match(/^rejected/);
    } finally {
      process.removeListener('uncaughtException', onUncaught);
      await server.stop().catch(() => undefined);
    }
  });
});
