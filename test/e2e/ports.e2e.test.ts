import fs from 'node:fs';
import { expect } from 'chai';
import { freePort } from '../../scripts/services.mjs';
import { npmCluster, npmStart, untilBanner, type Launched } from '../support/servers/launcher';
import { healthOk } from '../support/servers/processes';
import { waitFor } from '../support/wait';
import { tempDir } from '../support/servers/engines';

// Issue #22 point 3: two stacks started at the same moment on one machine (different PORT and DATA_DIR, as the README
// allows) want the same internal ports — the Temporal dev server's gRPC and UI ports, the local model server's, and
// for `npm run cluster` MinIO's and the APIs'. A port found free is only a hint: the other stack may bind it first.
// Both must come up, each on ports of its own, neither stopped by the other's bind.

/** The ports a stack's dev server and model server listen on, read from their processes (/proc). */
/** What the launchers said about their ports (a move, a clash), for the test output. */
function portNotes(stacks: Launched[]): string {
  return stacks
    .map((l, i) => {
      const said =
        l.output().match(/^\[setup\] [\w-]+: (?:.*port \d+ is taken, using \d+|a port was taken.*)$/gm) ?? [];
      return `      stack ${i}: ${said.length ? said.join('; ') : 'every preferred port'}`;
    })
    .join('\n');
}

function portsOf(l: Launched): { grpc: number; ui: number; llm?: number } {
  const [dev] = l.pids('start-dev');
  const args = fs.readFileSync(`/proc/${dev}/cmdline`, 'latin1').split('\0');
  const arg = (name: string) => Number(args[args.indexOf(name) + 1]);
  const llm = l.pids('llm-server/main.ts')[0];
  const llmPort = llm
    ? fs
        .readFileSync(`/proc/${llm}/environ`, 'latin1')
        .split('\0')
        .find((v) => v.startsWith('LLM_LOCAL_PORT='))
    : undefined;
  return { grpc: arg('--port'), ui: arg('--ui-port'), ...(llmPort ? { llm: Number(llmPort.split('=')[1]) } : {}) };
}

describe('two stacks started at the same moment with the same internal ports', function () {
  this.timeout(600_000);
  const stacks: Launched[] = [];

  afterEach(async function () {
    if (this.currentTest?.state === 'failed')
      for (const l of stacks) console.log(`--- ${l.dataDir} ---\n${l.output().slice(-5000)}`);
    for (const l of stacks.splice(0)) {
      l.killAll();
      fs.rmSync(l.dataDir, { recursive: true, force: true });
    }
  });

  it('npm start: both come up (Temporal, its UI, the model server on ports of their own) and stop cleanly', async () => {
    const wanted = {
      TEMPORAL_DEV_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
      LLM_LOCAL_PORT: String(await freePort()),
    };
    for (let i = 0; i < 2; i++) stacks.push(await npmStart(await freePort(), tempDir('docproc-twin-'), wanted));
    await Promise.all(stacks.map((l) => untilBanner(l, 480_000)));
    console.log(portNotes(stacks));
    const ports = stacks.map(portsOf);
    for (const key of ['grpc', 'ui', 'llm'] as const)
      expect(ports[0][key], `${key}: ${JSON.stringify(ports)}`).to.not.equal(ports[1][key]);
    for (const [i, l] of stacks.entries()) {
      await waitFor(() => healthOk(l.url), `stack ${i} healthy`, 120_000);
      expect((await fetch(`http://127.0.0.1:${ports[i].ui}/`)).status, `stack ${i}'s Temporal UI`).to.equal(200);
      expect((await fetch(`http://127.0.0.1:${ports[i].llm}/health`)).status, `stack ${i}'s model server`).to.equal(
        200,
      );
    }
    for (const how of await Promise.all(stacks.map((l) => l.stop()))) expect([0, 'SIGTERM']).to.include(how);
  });

  it('npm run cluster: both come up (Temporal, its UI, MinIO, the APIs on ports of their own) and stop cleanly', async () => {
    const port = await freePort();
    const wanted = {
      TEMPORAL_DEV_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
      LLM_PROVIDER: 'none',
    };
    for (let i = 0; i < 2; i++)
      stacks.push(
        await npmCluster(
          port,
          tempDir('docproc-twin-cluster-'),
          ['--apis', '1', '--io-workers', '1', '--media-workers', '1'],
          wanted,
        ),
      );
    await Promise.all(stacks.map((l) => untilBanner(l, 480_000)));
    console.log(portNotes(stacks));
    const ports = stacks.map(portsOf);
    for (const key of ['grpc', 'ui'] as const)
      expect(ports[0][key], `${key}: ${JSON.stringify(ports)}`).to.not.equal(ports[1][key]);
    const minio = stacks.map((l) => /MinIO \(S3\): +(http:\/\/\S+)/.exec(l.output())![1]);
    expect(minio[0]).to.not.equal(minio[1]);
    expect(stacks[0].url).to.not.equal(stacks[1].url);
    for (const [i, l] of stacks.entries()) {
      await waitFor(() => healthOk(l.url), `cluster ${i} healthy`, 120_000);
      expect((await fetch(`http://127.0.0.1:${ports[i].ui}/`)).status, `cluster ${i}'s Temporal UI`).to.equal(200);
      expect((await fetch(`${minio[i]}/minio/health/live`)).status, `cluster ${i}'s MinIO`).to.equal(200);
    }
    for (const how of await Promise.all(stacks.map((l) => l.stop()))) expect([0, 'SIGTERM']).to.include(how);
  });
});
