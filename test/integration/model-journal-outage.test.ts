import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { MockActivityEnvironment } from '@temporalio/testing';
import { JournaledModel } from '../../activities/model-journal';
import { readBlobJson } from '../../core/stores/blob-store';
import { loadConfig } from '../../core/config/config';
import { createLlmProvider } from '../../providers/llm';
import { S3BlobStore } from '../../providers/storage/s3.store';
import { choosePort, freePort, startMinio } from '../../scripts/services.mjs';
import { llmEnv, LLM_KEY } from '../support/servers/llm-env';
import { startLlmServer, type LlmServer } from '../support/servers/llm-server';
import { enginePaths, tempDir, type Minio } from '../support/servers/engines';
import { quietRuntime } from '../support/workflows/worker';

// Found by the chaos test in the S3 layout (test/slow/chaos-s3.test.ts): MinIO killed while a step waited on the
// model. The model answered, the journal write failed (the store was down), the step failed, and its retry asked the
// model again: a call paid twice. A paid answer is now kept through a storage outage: the journal write is retried
// (heartbeating) until the store answers again. Real MinIO (killed with SIGKILL and started again on its port and
// data), the wire-protocol LLM double, the journal in MockActivityEnvironment.

describe('the model-call journal through a storage outage', function () {
  this.timeout(120_000);
  let llm: LlmServer | undefined;
  let minio: Minio | undefined;
  let dir = '';

  before(() => quietRuntime());
  after(async () => {
    await llm?.close();
    await minio?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps an answer that came while the store was down, and the retried step does not ask the model again', async () => {
    dir = tempDir('docproc-journal-outage-');
    const port = await freePort();
    const { port: consolePort } = await choosePort(await freePort(), new Set([port]));
    const startStore = () => startMinio({ bin: enginePaths().minio, dir: path.join(dir, 'minio'), port, consolePort });
    minio = await startStore();
    const store = await new S3BlobStore({
      endpoint: minio.endpoint,
      accessKey: minio.accessKey,
      secretKey: minio.secretKey,
      bucket: 'journal',
    }).init();

    // The model answers only once the store is gone (killed with SIGKILL while it generates).
    let answeredAt = 0;
    llm = await startLlmServer({ apiKey: LLM_KEY, onReply: () => (answeredAt = Date.now()) });
    llm.respond(async () => {
      const child = minio!.child as ChildProcess;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
      return undefined;
    });
    const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', ...llmEnv(llm, { LLM_MAX_RETRIES: '0' }) });
    const request = { purpose: 'translation', system: 'Translate.', user: 'Guten Morgen, Köln.' };

    // The store comes back once the step, holding its paid answer, has waited for it (a heartbeat after the answer).
    const env = new MockActivityEnvironment({ activityType: 'runTransformerStep' });
    let restarted: Promise<Minio> | undefined;
    env.on('heartbeat', () => {
      if (answeredAt && !restarted) restarted = startStore();
    });
    const first: { text: string } = await env.run(() =>
      new JournaledModel(createLlmProvider(config)!, store, 'job-outage').chatText(request),
    );
    minio = await restarted!;
    expect(first.text).to.equal('Echo: Guten Morgen, Köln.');
    expect(llm.chatRequests()).to.have.length(1);

    // The step's retry (a new attempt, a new journal view) gets the kept answer; the model is not asked again.
    llm.respond(null);
    const retried = await new MockActivityEnvironment({ activityType: 'runTransformerStep' }).run(() =>
      new JournaledModel(createLlmProvider(config)!, store, 'job-outage').chatText(request),
    );
    expect(retried).to.deep.equal(first);
    expect(llm.chatRequests(), 'model calls').to.have.length(1);
    const kept = await store.list('jobs/job-outage/internal/model-calls/');
    expect(kept).to.have.length(1);
    expect(await readBlobJson(store, kept[0].key)).to.deep.equal(first);
  });
});
