import { expect } from 'chai';
import pino from 'pino';
import { loadConfig } from '../../core/config/config';
import { startWorkerMetrics } from '../../worker/metrics-listener';

// A worker's metrics listener has no key: unless WORKER_METRICS_HOST says otherwise (docker-compose.yml sets 0.0.0.0
// inside its network), it listens on loopback only (issue 33 item 7).

describe('worker metrics listen on loopback unless configured', () => {
  it('binds 127.0.0.1 by default, and the configured host when one is set', async () => {
    for (const [env, host] of [
      [{}, '127.0.0.1'],
      [{ WORKER_METRICS_HOST: '127.0.0.2' }, '127.0.0.2'],
    ] as const) {
      const config = loadConfig({ WORKER_METRICS_PORT: '0', LOG_LEVEL: 'silent', ...env });
      const metrics = await startWorkerMetrics(config, pino({ level: 'silent' }), undefined);
      try {
        expect(new URL(metrics!.url).hostname.replace(/^\[|\]$/g, '')).to.equal(host);
        expect((await fetch(metrics!.url)).status).to.equal(200);
      } finally {
        await metrics!.close();
      }
    }
  });
});
