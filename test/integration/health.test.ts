import { expect } from 'chai';
import { freePort } from '../../scripts/services.mjs';
import { startTestApi, type TestApi } from '../support/servers/api';
import { waitFor } from '../support/wait';
import { startDevServer, tempDir, type DevServer } from '../support/servers/engines';
import { startTestWorker, type TestWorker } from '../support/workflows/worker';

describe('health', function () {
  this.timeout(120_000);
  let port: number;
  let dbFile: string;
  let temporal: DevServer | null = null;
  let api: TestApi;
  let worker: TestWorker | null = null;

  before(async () => {
    port = await freePort();
    dbFile = `${tempDir()}/temporal.db`;
    api = await startTestApi({ TEMPORAL_ADDRESS: `127.0.0.1:${port}`, TASK_QUEUE_PREFIX: `health-${port}` });
  });

  after(async () => {
    await worker?.stop();
    await api.close();
    await temporal?.stop();
  });

  const health = async (q = '') => {
    const res = await fetch(`${api.url}/api/health${q}`);
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  it('answers 503 unavailable while Temporal is not running', async () => {
    const { status, body } = await health();
    expect(status).to.equal(503);
    expect(body.status).to.equal('unavailable');
    expect(body.checks.temporal.status).to.equal('unavailable');
    expect(body.checks.storage.status).to.equal('ok');
    expect(body).to.include.keys('service', 'version', 'timestamp');
    // The OCR languages an ocr_language may ask for (the provisioned OCR_LANGUAGES).
    expect(body.checks.providers.ocr).to.deep.include({ status: 'ok', engine: 'tesseract' });
    expect(body.checks.providers.ocr.languages).to.include.members([
      'deu',
      'eng',
      'fra',
      'spa',
      'ita',
      'nld',
      'por',
      'pol',
    ]);
  });

  it('liveness stays 200 while Temporal is down', async () => {
    const res = await fetch(`${api.url}/api/health/live`);
    expect(res.status).to.equal(200);
  });

  it('answers 200 degraded when Temporal runs but no worker polls', async () => {
    temporal = await startDevServer({ dbFile, port });
    const { status, body } = await waitFor(async () => {
      const r = await health();
      return r.status === 200 ? r : undefined;
    }, 'health to answer 200 once Temporal runs');
    expect(status).to.equal(200);
    expect(body.checks.temporal.status).to.equal('ok');
    expect(body.checks.worker.status).to.equal('degraded');
    expect(body.status).to.equal('degraded');
  });

  it('answers 200 ok with a polling worker, and the workflow probe runs through both queues', async () => {
    worker = await startTestWorker(temporal!.address, { TASK_QUEUE_PREFIX: `health-${port}`, DATA_DIR: tempDir() });
    const { body } = await waitFor(async () => {
      const r = await health();
      return r.body.status === 'ok' ? r : undefined;
    }, 'health to see the worker polling');
    expect(body.status).to.equal('ok');
    expect(body.checks.worker.status).to.equal('ok');
    const probed = await health('?probe=workflow');
    expect(probed.status).to.equal(200);
    expect(probed.body.checks.workflow.status).to.equal('ok');
  });

  it('returns to 503 when Temporal stops, and to 200 when it comes back on the same file', async () => {
    await worker!.stop();
    worker = null;
    await temporal!.stop();
    temporal = null;
    expect((await health()).status).to.equal(503);
    temporal = await startDevServer({ dbFile, port });
    const { status } = await waitFor(async () => {
      const r = await health();
      return r.status === 200 ? r : undefined;
    }, 'health to answer 200 once Temporal is back');
    expect(status).to.equal(200);
  });

  it('rejects an unknown probe value with a 400 envelope', async () => {
    const { status, body } = await health('?probe=everything');
    expect(status).to.equal(400);
    expect(body.error.code).to.equal('VALIDATION_ERROR');
  });
});
