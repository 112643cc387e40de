import { expect } from 'chai';
import net from 'node:net';
import { freePort, portFree } from '../../scripts/services.mjs';
import { healthOk, spawnProc, waitForJobEnd } from '../support/servers/processes';
import { waitFor } from '../support/wait';
import { tempDir } from '../support/servers/engines';
import { killAll, pidsOf } from '../support/servers/stack-procs';

// npm start supervises what it starts: a child killed with SIGKILL (the worker, the Temporal dev server) is
// restarted with backoff and the stack serves again; a child that keeps dying (an API whose port another process
// holds) is a crash loop that stops the stack with a message naming it and its last lines. No model server here
// (LLM_PROVIDER=none), to keep it short; its supervision is the same.

/** `npm start` on `port` with its own data directory and free Temporal ports, without a model server. */
async function npmStart(port: number, dataDir: string) {
  return spawnProc('npm', ['start', '--silent'], {
    PORT: String(port),
    DATA_DIR: dataDir,
    TEMPORAL_DEV_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    TEMPORAL_ADDRESS: undefined,
    LLM_PROVIDER: 'none',
    LOG_LEVEL: 'info',
  });
}

async function runsAJob(url: string): Promise<void> {
  // Anonymous health answers from the probe's last word (contract §11), which may still say ok for a second after
  // Temporal went away: a 503 with Retry-After is the service's true answer meanwhile, and a client retries it.
  const created = await waitFor(
    async () => {
      const res = await fetch(`${url}/api/jobs/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          job_type: 'transformer',
          parameters: { operation: 'html-to-markdown', html: '<h1>Still here</h1>' },
        }),
      });
      const body = (await res.json()) as any;
      if (res.status === 503 && res.headers.get('retry-after')) return undefined;
      expect(res.status, JSON.stringify(body)).to.be.oneOf([200, 201, 202]);
      return body;
    },
    'a job accepted',
    60_000,
  );
  const job = await waitForJobEnd(url, created.data.job_id, 120_000);
  expect(job.status).to.equal('completed');
}

describe('npm start supervises its children', function () {
  this.timeout(400_000);

  it('restarts a killed worker and a killed Temporal dev server, and serves again each time', async () => {
    const port = await freePort();
    const dataDir = tempDir();
    const url = `http://127.0.0.1:${port}`;
    const start = await npmStart(port, dataDir);
    try {
      await waitFor(
        async () => (start.output().includes('Ctrl-C stops everything') ? true : undefined),
        'the ready banner',
        240_000,
      );
      for (const [name, marker] of [
        ['worker', 'worker/main.ts'],
        ['temporal', 'start-dev'],
      ] as const) {
        const [pid] = pidsOf(marker, dataDir);
        expect(pid, `the ${name} process`).to.be.a('number');
        process.kill(pid, 'SIGKILL');
        await waitFor(
          async () => (start.output().includes(`[setup] ${name}: restarted`) ? true : undefined),
          `${name} restarted`,
          120_000,
        );
        expect(start.output()).to.match(
          new RegExp(`\\[setup\\] ${name}: exited unexpectedly \\(SIGKILL\\); restarting in 1 s`),
        );
        await waitFor(() => healthOk(url), `healthy again after the ${name} was killed`, 120_000);
        await runsAJob(url);
        expect(
          pidsOf(marker, dataDir).filter((p) => p !== pid),
          `a new ${name} process`,
        ).to.have.length(1);
      }
      start.child.kill('SIGTERM');
      await start.ended;
      // npm may end before the launcher has finished stopping its children: their end is waited for, not assumed.
      await waitFor(async () => ((await portFree(port)) ? true : undefined), 'the API port released', 30_000);
      await waitFor(
        async () => (pidsOf('', dataDir).length === 0 ? true : undefined),
        'every process of the stack gone',
        30_000,
      );
    } catch (err) {
      console.log(start.output().slice(-6000));
      throw err;
    } finally {
      killAll(dataDir);
    }
  });

  it('stops everything on a crash loop, naming the child and showing its last lines', async () => {
    // The API's port is held by another process: the API exits at every start.
    const blocker = net.createServer();
    const port = await freePort();
    await new Promise<void>((r) => blocker.listen(port, '127.0.0.1', r));
    const dataDir = tempDir();
    const start = await npmStart(port, dataDir);
    try {
      const ended = await start.ended;
      expect(ended, 'npm start ends by itself, failed').to.not.equal(0);
      const out = start.output();
      expect(out).to.match(
        /api: exited \(code \d+\): a crash loop \(5 restarts within 120 s\); stopping everything\. Its last lines:/,
      );
      expect(out).to.match(/EADDRINUSE/);
      // Its API was to listen on loopback only: the launcher, not each process, allowed private targets for all.
      expect(out).to.include(
        'network: the API listens on loopback only (127.0.0.1): set ALLOW_PRIVATE_URLS, ALLOW_HTTP_CALLBACKS, INPUT_ROOTS for every process',
      );
      expect(out).to.include('stopping the Temporal dev server');
      await waitFor(
        async () => (pidsOf('', dataDir).length === 0 ? true : undefined),
        'every process of the stack gone (dev server, worker)',
        30_000,
      );
    } catch (err) {
      console.log(start.output().slice(-6000));
      throw err;
    } finally {
      killAll(dataDir);
      blocker.close();
    }
  });
});
