import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { freePort } from '../../scripts/services.mjs';
import { pdfPageTexts } from '../../providers/pdf/poppler';
import { ToolLauncher, runLaunchedTool, toolLauncher } from '../../providers/process/launcher';
import { EngineStallError, ToolExitError, ToolTimeoutError } from '../../providers/process/run-tool';
import { buildPdf } from '../support/documents/pdf-factory';
import { ROOT, spawnService } from '../support/servers/processes';
import { waitFor } from '../support/wait';
import { childPids, launcherPids, popplerPids } from '../support/servers/proc-tree';
import { sharedDevServer, tempDir } from '../support/servers/engines';

// Issue 24: the poppler tools are started by a long-lived python3 launcher (providers/process/tool_launcher.py), not
// forked from the big API or worker process. Real processes throughout: the launcher, poppler, `sleep`, the API.

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    // A zombie (exited, not reaped yet) is not running.
    return !/^\S+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

const gone = (pid: number, what: string) =>
  waitFor(async () => (alive(pid) ? undefined : true), `${what} (pid ${pid}) to end`, 10_000, 20);

function docPdf(pages: number, tag: string): Buffer {
  return buildPdf({
    pages: Array.from({ length: pages }, (_, p) => ({
      kind: 'lines' as const,
      lines: Array.from({ length: 40 }, (_, i) => `${tag} page ${p + 1} line ${i} lorem ipsum dolor sit amet`),
      size: 9,
    })),
  });
}

describe('tool launcher (poppler tools started off the API and worker processes)', function () {
  this.timeout(120_000);
  const dir = tempDir('docproc-launcher-');
  const launchers: ToolLauncher[] = [];
  const fresh = () => {
    const l = new ToolLauncher();
    launchers.push(l);
    return l;
  };
  // `stop()` ends a launcher: checked for each one a test started.
  afterEach(async () => {
    for (const l of launchers.splice(0)) {
      const pid = l.pid;
      l.stop();
      if (pid) await gone(pid, 'a stopped launcher');
    }
  });

  it('runs a tool as its child and passes its output, exit status and stderr on', async () => {
    const l = fresh();
    let toolPid = 0;
    const ok = await l.run('sh', ['-c', 'printf "a\\0b"; echo warn >&2'], {
      timeoutMs: 10_000,
      onSpawn: (pid) => (toolPid = pid),
    });
    expect([...ok.stdout]).to.deep.equal([0x61, 0, 0x62]);
    expect(ok.stderr).to.equal('warn\n');
    expect(l.pid).to.be.a('number');
    expect(launcherPids(process.pid)).to.include(l.pid);
    expect(toolPid).to.be.above(0).and.not.equal(l.pid);
    const failed = await l.run('sh', ['-c', 'echo bad >&2; exit 3'], { timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(failed).to.be.instanceOf(ToolExitError);
    expect((failed as ToolExitError).exitCode).to.equal(3);
    expect((failed as ToolExitError).stderr).to.equal('bad\n');
    const missing = await l.run('no-such-tool-here', [], { timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect((missing as { code?: string }).code).to.equal('ENOENT');
  });

  it('kills the tool on abort, on timeout and when it stalls (ENGINE_STALL_TIMEOUT_MS)', async () => {
    const l = fresh();
    const cases: [string, (pid: (p: number) => void) => Promise<unknown>, (e: unknown) => boolean][] = [
      [
        'abort',
        (onSpawn) => {
          const ac = new AbortController();
          return l.run('sleep', ['30'], {
            timeoutMs: 60_000,
            signal: ac.signal,
            onSpawn: (pid) => {
              onSpawn(pid);
              ac.abort();
            },
          });
        },
        (e) => (e as Error).name === 'AbortError',
      ],
      [
        'timeout',
        (onSpawn) => l.run('sleep', ['30'], { timeoutMs: 300, onSpawn }),
        (e) => e instanceof ToolTimeoutError,
      ],
      [
        'stall',
        (onSpawn) => l.run('sleep', ['30'], { timeoutMs: 60_000, stallTimeoutMs: 300, onSpawn }),
        (e) => e instanceof EngineStallError,
      ],
    ];
    for (const [name, start, expected] of cases) {
      let pid = 0;
      const err = await start((p) => (pid = p)).then(
        () => new Error('resolved'),
        (e: unknown) => e,
      );
      expect(expected(err), `${name}: ${String(err)}`).to.equal(true);
      if (pid) await gone(pid, `the ${name} tool`);
      expect(childPids(l.pid, /sleep/), name).to.deep.equal([]);
    }
  });

  it('a launcher killed while its tool runs: the run is answered (started directly), the next starts a new one', async () => {
    const file = path.join(dir, 'doc.pdf');
    fs.writeFileSync(file, docPdf(3, 'Killed'));
    const first = toolLauncher().pid ?? (await pdfPageTexts(file, 1, 3), toolLauncher().pid!);
    let tool = 0;
    // The tool writes one line, then waits: the launcher is killed as it starts, so the run is cut and started again
    // by this process (without the hook then: a direct run reports its pid too, but must not kill anything).
    const done = await runLaunchedTool('sh', ['-c', 'echo started; sleep 1; echo done'], {
      timeoutMs: 30_000,
      onSpawn: (pid) => {
        if (tool) return;
        tool = pid;
        process.kill(first, 'SIGKILL');
      },
    });
    expect(done.stdout.toString()).to.equal('started\ndone\n');
    await gone(first, 'the killed launcher');
    await gone(tool, "the killed launcher's tool");
    expect((await pdfPageTexts(file, 1, 3))[2]).to.match(/^Killed page 3 line 0/);
    const second = toolLauncher().pid!;
    expect(second).to.be.a('number').and.not.equal(first);
    expect(launcherPids(process.pid)).to.include(second).and.not.include(first);
    expect(popplerPids(process.pid)).to.deep.equal([]);
  });

  it('ends with its parent, killed without a word (SIGKILL), and takes its running tools along', async () => {
    const script = path.join(dir, 'parent.mts');
    fs.writeFileSync(
      script,
      `import { toolLauncher } from ${JSON.stringify(path.join(ROOT, 'providers/process/launcher.ts'))};
const l = toolLauncher();
void l.run('sleep', ['30'], { timeoutMs: 60_000, onSpawn: (pid) => console.log(JSON.stringify({ launcher: l.pid, tool: pid })) });
setInterval(() => {}, 1000);
`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const pids = await waitFor(
      async () =>
        out.includes('\n') ? (JSON.parse(out.split('\n')[0]) as { launcher: number; tool: number }) : undefined,
      'the parent to start a tool',
      30_000,
      20,
    );
    expect(alive(pids.launcher) && alive(pids.tool)).to.equal(true);
    child.kill('SIGKILL');
    await gone(pids.launcher, 'the launcher');
    await gone(pids.tool, "the launcher's tool");
  });

  it('the API: a killed launcher is replaced and the next native PDF is answered; none survives the API stop', async () => {
    const { address } = await sharedDevServer();
    const port = await freePort();
    const api = spawnService('api', {
      DATA_DIR: tempDir('docproc-launcher-api-'),
      TASK_QUEUE_PREFIX: `launch${Math.random().toString(36).slice(2, 8)}`,
      TEMPORAL_ADDRESS: address,
      PORT: String(port),
    });
    try {
      const url = `http://127.0.0.1:${port}`;
      await waitFor(
        async () => ((await fetch(`${url}/api/health/live`)).ok ? true : undefined),
        'the API to be live',
        60_000,
      );
      const ask = async (tag: string) => {
        const form = new FormData();
        form.append('file', new Blob([new Uint8Array(docPdf(3, tag))], { type: 'application/pdf' }), 'doc.pdf');
        form.append('extraction_method', 'native');
        const res = await fetch(`${url}/api/pdf/process`, { method: 'POST', body: form });
        const body = (await res.json()) as { data: { extracted_text: string } };
        expect(res.status, JSON.stringify(body).slice(0, 300)).to.equal(200);
        expect(body.data.extracted_text).to.include(`${tag} page 3 line 39`);
      };
      await ask('First');
      const [first] = launcherPids(api.child.pid!);
      expect(first, 'the API started a launcher').to.be.a('number');
      process.kill(first, 'SIGKILL');
      await gone(first, 'the killed launcher');
      await ask('Second');
      const [second] = launcherPids(api.child.pid!);
      expect(second, 'a new launcher').to.be.a('number').and.not.equal(first);
      api.child.kill('SIGTERM');
      await api.ended;
      await gone(second, "the stopped API's launcher");
    } finally {
      if (api.child.exitCode === null && api.child.signalCode === null) api.child.kill('SIGKILL');
      await api.ended;
    }
  });
});
