import fs from 'node:fs';
import { expect } from 'chai';
import pino from 'pino';
import { createWebhookActivities } from '../../activities/webhook.activities';
import { loadConfig } from '../../core/config/config';
import { taskQueues } from '../../core/jobs/ids';
import { LocalBlobStore } from '../../providers/storage';
import { verifyWebhookSignature } from '../../providers/webhook/signature';
import type { JobEvent } from '../../workflows/definitions';
import { tempDir } from '../support/servers/engines';
import { startWebhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver';

// The deliverWebhook activity itself, called directly (no workflow) against a real receiver on 127.0.0.1 and a real
// local blob store: the signed timestamp is its own, taken at the attempt.

const SECRET = 'whsec-activity-test';

describe('deliverWebhook activity', () => {
  let receiver: WebhookReceiver;
  let dataDir: string;
  let deliver: ReturnType<typeof createWebhookActivities>['deliverWebhook'];

  beforeEach(async () => {
    receiver = await startWebhookReceiver();
    dataDir = tempDir('docproc-webhook-activity-');
    // The receiver is on loopback: private targets allowed explicitly (no process infers it from HOST).
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      DATA_DIR: dataDir,
      WEBHOOK_SIGNING_SECRET: SECRET,
      ALLOW_PRIVATE_URLS: 'true',
    });
    const store = await new LocalBlobStore(`${dataDir}/blobs`).init();
    const deps = { config, store, logger: pino({ level: 'silent' }), queues: taskQueues('t-webhook-activity') };
    deliver = createWebhookActivities(deps).deliverWebhook;
  });
  afterEach(async () => {
    await receiver.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const event: JobEvent = {
    id: 2,
    phase: 'processing',
    progress: 40,
    message: 'OCR page 4 of 10',
    timestamp: '2025-01-01T00:00:00.000Z',
  };

  it('ignores a timestamp in the input (workflows from before the change) and signs one taken at the attempt', async () => {
    const stale = 1_000_000_000;
    const before = Math.floor(Date.now() / 1000);
    const r = await deliver({
      jobId: 'job-1',
      webhook: { url: receiver.url },
      event,
      webhookId: 'evt_job-1_2',
      timestamp: stale,
    });
    const after = Math.floor(Date.now() / 1000);
    expect(r).to.include({ outcome: 'delivered', status: 200 });
    const req = receiver.requests[0];
    const ts = Number(req.headers['x-webhook-timestamp']);
    expect(ts).to.not.equal(stale);
    expect(ts).to.be.within(before, after);
    const sig = req.headers['x-webhook-signature'] as string;
    expect(verifyWebhookSignature(SECRET, 'evt_job-1_2', ts, req.body, sig), 'keyed by the signing secret').to.equal(
      true,
    );
    expect(verifyWebhookSignature(SECRET, 'evt_job-1_2', stale, req.body, sig)).to.equal(false);
    expect(req.json).to.deep.include({
      phase: 'processing',
      progress: 40,
      process: { id: 'job-1' },
      job: { id: null },
    });
  });
});
