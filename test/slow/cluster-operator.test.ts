import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Client, Connection } from '@temporalio/client';
import { freePort } from '../../scripts/services.mjs';
import { apiClient } from '../support/chaos/chaos-checks';
import { npmCluster, untilBanner, type Launched } from '../support/servers/launcher';
import { startLlmDouble, type LlmDouble } from '../support/servers/llm-double';
import { LLM_KEY, LLM_MODEL } from '../support/servers/llm-env';
import { tempDir } from '../support/servers/engines';
import { waitFor } from '../support/wait';
import { resetToFirstTask } from '../support/workflows/operator';

// Issue #33: what an operator does in the Temporal UI (terminate, cancel, reset: the client's own calls, which the UI
// makes), once on the cluster layout with a real Temporal server on PostgreSQL (`npm run cluster -- --temporal
// server`), not only on the dev server (test/integration/operator-actions.test.ts): each ends in a record that tells
// the truth, and the jobs restart and complete. The model is the OpenAI-compatible double, each generation 8 s, so
// jobs are running when the operator acts.

const GENERATION_MS = 8000;

const summarize = (tag: string) => ({
  job_type: 'transformer',
  parameters: { operation: 'summarize', text: `Ein Text für den Betrieb (${tag}).`, use_cache: false },
});

describe('operator actions on the cluster layout with a real Temporal server (slow)', function () {
  this.timeout(1_200_000);
  let dataDir = '';
  let stack: Launched | undefined;
  let double: LlmDouble | undefined;
  let connection: Connection | undefined;

  after(async function () {
    if (this.currentTest?.state === 'failed' && stack) console.log(stack.output().slice(-12000));
    await connection?.close();
    stack?.killAll();
    await double?.stop();
    try {
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    } catch {
      // a process killed just now may still have had a file open
    }
  });

  it('a terminated job, a cancelled batch and a reset job end in true records, restart and complete', async () => {
    dataDir = tempDir('docproc-cluster-operator-');
    double = await startLlmDouble({
      port: await freePort(),
      dir: path.join(dataDir, 'llm'),
      apiKey: LLM_KEY,
      generationMs: GENERATION_MS,
    });
    stack = await npmCluster(
      await freePort(),
      dataDir,
      ['--temporal', 'server', '--apis', '1', '--io-workers', '1', '--media-workers', '1'],
      {
        LLM_BASE_URL: double.url,
        LLM_MODEL,
        LLM_API_KEY: LLM_KEY,
        LLM_TIMEOUT_MS: '120000',
        CLOSEOUT_SWEEP_MS: '500',
        BATCH_WINDOW: '2',
      },
    );
    await untilBanner(stack, 900_000);
    connection = await Connection.connect({ address: stack.temporalAddress });
    const client = new Client({ connection, namespace: 'default' });
    const api = apiClient(stack.url);
    const created = async (body: unknown, what: string) => {
      const r = await api.post('/api/jobs/', body);
      expect(r.status, `${what}: ${JSON.stringify(r.body)}`).to.equal(200);
      return r.body.data.job_id as string;
    };
    const status = (id: string, wanted: (j: any) => boolean, what: string) =>
      waitFor(
        async () => {
          const j = await api.job(id);
          return wanted(j) ? j : undefined;
        },
        what,
        180_000,
      );
    const restarted = async (id: string) => {
      const r = await api.post(`/api/event-job/${id}/restart`, undefined);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const j = await status(id, (x) => x.status === 'completed' || x.status === 'failed', `${id} to end again`);
      expect(j.status, JSON.stringify(j.error)).to.equal('completed');
    };

    // 1. A running job terminated: its record says so (TERMINATED), and a restart completes it.
    const terminated = await created(summarize('terminate'), 'a job');
    await status(terminated, (j) => j.status === 'processing', 'the job to run');
    await client.workflow.getHandle(terminated).terminate('operator test on the cluster');
    const t = await status(terminated, (j) => j.status === 'failed', 'the terminated job to read failed');
    expect(t.error.code).to.equal('TERMINATED');
    await restarted(terminated);

    // 2. A batch cancelled while its first two jobs run: the batch completes, every job failed CANCELLED; a running
    //    one and one that never started restart alone and the closed batch's counts follow.
    const b = await api.post('/api/jobs/batch', {
      batch_name: 'cancelled on the cluster',
      jobs: [0, 1, 2].map((i) => summarize(`batch ${i}`)),
    });
    expect(b.status, JSON.stringify(b.body)).to.equal(200);
    const batchId: string = b.body.data.batch_id;
    const ids: string[] = b.body.data.batch.jobs.map((j: { job_id: string }) => j.job_id);
    await status(ids[0], (j) => j.status === 'processing', 'the batch to run');
    await client.workflow.getHandle(batchId).cancel();
    const cancelled = await waitFor(
      async () => {
        const batch = await api.batch(batchId);
        return batch.status === 'completed' && batch.failed_count === 3 ? batch : undefined;
      },
      'the cancelled batch to close with every job failed',
      180_000,
    );
    expect(cancelled).to.include({ job_count: 3, completed_count: 0, failed_count: 3 });
    for (const id of ids) expect((await api.job(id)).error.code, id).to.equal('CANCELLED');
    await restarted(ids[0]);
    await restarted(ids[2]);
    const counted = await waitFor(
      async () => {
        const batch = await api.batch(batchId);
        return batch.completed_count === 2 ? batch : undefined;
      },
      'the closed batch to count its restarted jobs',
      120_000,
    );
    expect(counted).to.include({ status: 'completed', job_count: 3, completed_count: 2, failed_count: 1 });

    // 3. A running job reset to its first workflow task: it completes in its new run, never read as failed.
    const reset = await created(summarize('reset'), 'a job to reset');
    await status(reset, (j) => j.status === 'processing', 'the job to reset to run');
    const { oldRunId, newRunId } = await resetToFirstTask(client, 'default', reset);
    expect(newRunId).to.not.equal(oldRunId);
    const done = await status(reset, (j) => j.status === 'completed' || j.status === 'failed', 'the reset job to end');
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect((await client.workflow.getHandle(reset).describe()).runId).to.equal(newRunId);

    const how = await stack.stop(120_000);
    expect([0, 'SIGTERM']).to.include(how);
    stack = undefined;
  });
});
