import { expect } from 'chai';
import net from 'node:net';
import { freePort, portFree } from '../../scripts/services.mjs';
import { healthOk, spawnProc, spawnService, type Proc } from '../support/servers/processes';
import { enginePids, launcherPids } from '../support/servers/proc-tree';
import { waitFor } from '../support/wait';
import { startDevServer, tempDir, type DevServer } from '../support/servers/engines';

describe('the service started the way npm start runs it', function () {
  this.timeout(180_000);
  let temporal: DevServer;
  let api: Proc;
  let worker: Proc;
  let url: string;

  before(async () => {
    temporal = await startDevServer();
    const port = await freePort();
    const env = {
      TEMPORAL_ADDRESS: temporal.address,
      DATA_DIR: tempDir(),
      PORT: String(port),
      HOST: '127.0.0.1',
      WARM_UP: 'true',
    };
    worker = spawnService('worker', env);
    api = spawnService('api', env);
    url = `http://127.0.0.1:${port}`;
  });

  after(async () => {
    for (const p of [api, worker]) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await temporal.stop();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') {
      console.log(
        '--- api output ---\n' + api.output().slice(-3000) + '\n--- worker output ---\n' + worker.output().slice(-3000),
      );
    }
  });

  it('becomes healthy with both queues polled', async () => {
    const body = await waitFor(() => healthOk(url), 'a healthy service', 90_000);
    expect(body.checks.worker.status).to.equal('ok');
  });

  it('is warm once healthy: its speech engines loaded, its tool launchers started, its own requests answered', () => {
    // Health says ok once the worker polls, which it does after its warm-up; the API listens after its own.
    const logged = (p: Proc, msg: string) =>
      p
        .output()
        .split('\n')
        .flatMap((l) => {
          try {
            const e = JSON.parse(l) as Record<string, any>;
            return e.msg === msg ? [e] : [];
          } catch {
            return [];
          }
        })[0];
    expect(logged(worker, 'worker warm'), 'the worker warmed').to.not.equal(undefined);
    expect(enginePids(worker.child.pid).length, 'a speech engine process per media slot').to.be.at.least(1);
    expect(launcherPids(worker.child.pid!), "the worker's tool launcher").to.have.length(1);
    expect(launcherPids(api.child.pid!), "the API's tool launcher").to.have.length(1);
    const api0 = logged(api, 'api warm: threads, launcher and its own stack');
    expect(api0, 'the API warmed').to.not.equal(undefined);
    // 381 transforms and chunks, each a 200; the three health reports are 200 or 503 by the worker's state then.
    expect(api0.statuses['200']).to.be.at.least(381);
    expect(Object.keys(api0.statuses).filter((k) => k !== '200' && k !== '503')).to.deep.equal([]);
  });

  it('runs a trivial workflow end to end over HTTP', async () => {
    const res = await fetch(`${url}/api/health?probe=workflow`);
    const body = (await res.json()) as Record<string, any>;
    expect(res.status).to.equal(200);
    expect(body.checks.workflow.status).to.equal('ok');
  });

  it('writes structured JSON logs with a request id per request', async () => {
    await fetch(`${url}/api/health/live`, { headers: { 'X-Request-Id': 'smoke-test-1' } });
    await new Promise((r) => setTimeout(r, 300));
    const line = api
      .output()
      .split('\n')
      .find((l) => l.includes('smoke-test-1'));
    expect(line, 'a log line for the request').to.be.a('string');
    const entry = JSON.parse(line!);
    expect(entry).to.include({ requestId: 'smoke-test-1', path: '/api/health/live', status: 200, level: 'info' });
  });

  it('stops both processes cleanly on SIGTERM', async () => {
    api.child.kill('SIGTERM');
    worker.child.kill('SIGTERM');
    const [a, w] = await Promise.all([api.exited, worker.exited]);
    expect(a).to.equal(0);
    expect(w).to.equal(0);
  });
});

describe('npm start', function () {
  this.timeout(300_000);

  it('sets up, moves off taken ports, serves the API, docs and Temporal UI, and stops everything on SIGTERM', async () => {
    const blocker = net.createServer();
    const taken = await freePort();
    await new Promise<void>((r) => blocker.listen(taken, '127.0.0.1', r));
    const port = await freePort();
    const uiPort = await freePort();
    const start = spawnProc('npm', ['start', '--silent'], {
      PORT: String(port),
      DATA_DIR: tempDir(),
      TEMPORAL_DEV_PORT: String(taken),
      TEMPORAL_UI_PORT: String(uiPort),
      TEMPORAL_ADDRESS: undefined,
      LOG_LEVEL: 'info',
    });
    try {
      await waitFor(
        async () => (start.output().includes('Ctrl-C stops everything') ? true : undefined),
        'the ready banner',
        240_000,
      );
      const out = start.output();
      expect(out).to.match(new RegExp(`port ${taken} is taken, using \\d+`));
      expect(out).to.include(`http://127.0.0.1:${port}/api/doc`);
      // No LLM configured: the local model server was started before the worker (LLM_PROVIDER=local implied).
      expect(out).to.match(/llm: ready in [\d.]+ s on http:\/\/127\.0\.0\.1:\d+\/v1/);
      const health = await healthOk(`http://127.0.0.1:${port}`);
      expect(health, 'healthy').to.not.equal(undefined);
      const docs = await fetch(`http://127.0.0.1:${port}/api/doc`);
      expect(docs.status).to.equal(200);
      const ui = await fetch(`http://127.0.0.1:${uiPort}/`);
      expect(ui.status).to.equal(200);
      start.child.kill('SIGTERM');
      // npm re-raises the signal after its child (the launcher) has finished its own clean shutdown.
      const ended = await start.ended;
      expect([0, 'SIGTERM']).to.include(ended);
      await waitFor(
        async () => ((await portFree(port)) && (await portFree(uiPort)) ? true : undefined),
        'ports released',
        30_000,
      );
      expect(start.output())
        .to.include('stopping the Temporal dev server')
        .and.include('stopping the local model server');
    } catch (err) {
      console.log(start.output().slice(-5000));
      throw err;
    } finally {
      if (start.child.exitCode === null) start.child.kill('SIGKILL');
      blocker.close();
    }
  });
});
