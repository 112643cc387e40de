import { expect } from 'chai';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createApp } from '../../api/app';
import { Drain } from '../../api/drain';
import { createTemporalGateway } from '../../api/temporal';
import { loadConfig } from '../../core/config/config';
import { LocalBlobStore } from '../../providers/storage';
import { apiEngines } from '../support/servers/api';
import { noLlmUnlessAsked } from '../support/servers/llm-default';
import { healthOk, spawnService, type Proc } from '../support/servers/processes';
import { waitFor } from '../support/wait';
import { sharedDevServer, tempDir } from '../support/servers/engines';
import { freePort } from '../../scripts/services.mjs';
import { startTestWorker, type TestWorker } from '../support/workflows/worker';

/**
 * Sends a request with `Expect: 100-continue`; `onContinue` runs once the server dispatched it (past the drain check).
 */
function continueRequest(
  url: string,
  body: string,
  onContinue: () => Promise<void>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        expect: '100-continue',
      },
    });
    req.on('continue', () => {
      onContinue().then(() => req.end(body), reject);
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

describe('API graceful shutdown', function () {
  this.timeout(120_000);
  let address: string;
  before(async () => {
    address = (await sharedDevServer()).address;
  });

  it('after SIGTERM an in-flight request completes, new connections are refused, then the process exits 0', async () => {
    const dataDir = tempDir('docproc-drain-');
    const prefix = `drain${Math.random().toString(36).slice(2, 8)}`;
    const env = { DATA_DIR: dataDir, TASK_QUEUE_PREFIX: prefix, TEMPORAL_ADDRESS: address };
    let worker: TestWorker | undefined;
    let api: Proc | undefined;
    try {
      worker = await startTestWorker(address, env);
      const port = await freePort();
      api = spawnService('api', { ...env, PORT: String(port), API_SHUTDOWN_TIMEOUT_MS: '60000' });
      const url = `http://127.0.0.1:${port}`;
      await waitFor(() => healthOk(url), 'the API to be ready');
      const proc = api;
      let exitedBeforeAnswer = false;
      const reply = await continueRequest(
        `${url}/api/transformer/html-to-markdown`,
        JSON.stringify({ html: '<h1>Drained</h1><p>after SIGTERM</p>' }),
        async () => {
          proc.child.kill('SIGTERM');
          await waitFor(
            async () => (proc.output().includes('api draining') ? true : undefined),
            'the drain to start',
            10_000,
            20,
          );
          const refused = await fetch(`${url}/api/health/live`).then(
            () => 'answered',
            (err: Error & { cause?: { code?: string } }) => err.cause?.code ?? err.message,
          );
          expect(refused).to.equal('ECONNREFUSED');
          void proc.ended.then(() => (exitedBeforeAnswer = true));
        },
      );
      expect(exitedBeforeAnswer).to.equal(false);
      expect(reply.status, reply.body).to.equal(200);
      expect(JSON.parse(reply.body).data.markdown).to.match(/^# Drained/);
      expect(reply.headers.connection).to.equal('close');
      expect(await api.ended).to.equal(0);
      expect(api.output()).to.include('api stopped');
    } finally {
      if (api && api.child.exitCode === null && api.child.signalCode === null) api.child.kill('SIGKILL');
      await worker?.stop();
    }
  });

  it('while draining: requests on open connections get 503 UNAVAILABLE, readiness 503, liveness 200', async () => {
    const dataDir = tempDir('docproc-drain-');
    const config = loadConfig(noLlmUnlessAsked({ LOG_LEVEL: 'silent', DATA_DIR: dataDir, TEMPORAL_ADDRESS: address }));
    const store = await new LocalBlobStore(path.join(config.dataDir, 'blobs')).init();
    const temporal = createTemporalGateway(config);
    const drain = new Drain();
    const app = createApp({
      config,
      logger: pino({ level: 'silent' }),
      store,
      temporal,
      drain,
      engines: apiEngines(config),
    });
    const server = http.createServer(app.listener);
    // The app under test serves from its own socket; `draining` is the drain of another server (its connections are not
    // ours).
    const other = http.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const ready = await fetch(`${url}/api/health`);
      expect(ready.status).to.equal(200);
      const stopped = drain.start(other, 60_000);
      const refused = await fetch(`${url}/api/jobs/job-00000000-0000-4000-8000-000000000000`);
      expect(refused.status).to.equal(503);
      expect(refused.headers.get('retry-after')).to.equal('1');
      expect(refused.headers.get('connection')).to.equal('close');
      expect(await refused.json()).to.deep.include({ status: 'error' });
      const body = await fetch(`${url}/api/transformer/html-to-markdown`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"html":"<p>x</p>"}',
      });
      expect((await body.json()).error).to.deep.equal({
        code: 'UNAVAILABLE',
        message: 'The server is shutting down; retry the request',
        details: { reason: 'shutting_down' },
      });
      const readiness = await fetch(`${url}/api/health`);
      expect(readiness.status).to.equal(503);
      expect((await readiness.json()).status).to.equal('unavailable');
      expect((await fetch(`${url}/api/health/live`)).status).to.equal(200);
      expect(await stopped).to.equal(true);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await temporal.close().catch(() => undefined);
    }
  });
});
