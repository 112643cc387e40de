import fs from 'node:fs';
import { expect } from 'chai';
import { freePort } from '../../scripts/services.mjs';
import { llmEnv, LLM_KEY } from '../support/servers/llm-env';
import { startLlmServer, type LlmServer } from '../support/servers/llm-server';
import { healthOk, spawnService, waitForJobEnd, type Proc } from '../support/servers/processes';
import { waitFor } from '../support/wait';
import { startDevServer, tempDir, type DevServer } from '../support/servers/engines';

// A worker killed with SIGKILL while its model call is computing: the step's next attempt runs on another worker
// after the heartbeat timeout and sends the call again. It carries the call's Idempotency-Key (the journal recorded
// the call before it was sent), so an endpoint that honours keys answers it from the computation the dead worker
// started: one computation for the answer. Before, the successor's request had no key and was computed again.
// The worker and API processes as `npm start` runs them, a Temporal dev server, the OpenAI-compatible test server.

function workerReady(p: Proc): Promise<true> {
  return waitFor(
    async () => (p.output().includes('"msg":"worker ready"') ? true : undefined),
    'the worker to be ready',
    90_000,
    100,
  );
}

async function stop(p: Proc): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGKILL');
  await p.ended;
}

describe('a model call whose worker dies mid-call (slow)', function () {
  this.timeout(300_000);
  let temporal: DevServer | undefined;
  let llm: LlmServer | undefined;
  let dataDir = '';
  const procs: Proc[] = [];

  afterEach(async function () {
    if (this.currentTest?.state === 'failed')
      for (const p of procs) console.log(`--- ${p.child.spawnargs.at(-1)} ---\n${p.output().slice(-3000)}`);
    await Promise.all(procs.splice(0).map(stop));
    await llm?.close();
    await temporal?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('is paid once: the successor gets the answer of the computation the dead worker started', async () => {
    temporal = await startDevServer();
    llm = await startLlmServer({ apiKey: LLM_KEY, idempotencyKeys: true });
    // The model takes 12 s; the worker dies a moment after the request arrived.
    llm.respond(() => ({ delayMs: 12_000 }));
    dataDir = tempDir('docproc-paid-once-');
    const port = await freePort();
    const env = {
      TEMPORAL_ADDRESS: temporal.address,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      ...llmEnv(llm, { LLM_TIMEOUT_MS: '120000', LLM_IDEMPOTENCY_KEYS: 'true' }),
    };
    const worker1 = spawnService('worker', env);
    const api = spawnService('api', env);
    procs.push(worker1, api);
    const url = `http://127.0.0.1:${port}`;
    await workerReady(worker1);
    await waitFor(() => healthOk(url), 'a healthy service', 90_000);

    const created = (await fetch(`${url}/api/jobs/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        job_type: 'transformer',
        parameters: {
          operation: 'template',
          text: 'Grace Hopper schreibt aus Arlington.',
          template_content: 'Person: {{person|the person named}}',
          use_cache: false,
        },
      }),
    }).then((r) => r.json())) as { data: { job_id: string } };
    await waitFor(async () => (llm!.chatRequests().length >= 1 ? true : undefined), 'the model call', 60_000, 20);
    worker1.child.kill('SIGKILL');
    await worker1.ended;
    const worker2 = spawnService('worker', env);
    procs.push(worker2);
    await workerReady(worker2);

    const job = await waitForJobEnd(url, created.data.job_id, 180_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    expect(job.results.template_fields).to.deep.equal({ person: 'person value' });
    const sent = llm.chatRequests();
    expect(sent, 'the dead worker’s request and its successor’s').to.have.length(2);
    expect(sent[1].headers['idempotency-key']).to.equal(sent[0].headers['idempotency-key']);
    expect(llm.paidRequests(), 'computed once').to.have.length(1);
    const sentRecords = fs.readdirSync(
      `${dataDir}/blobs/objects/jobs/${created.data.job_id}/internal/model-calls-sent`,
    );
    expect(sentRecords, 'the call recorded before it was sent').to.have.length(1);
  });
});
