import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { toActivityFailure } from '../support/workflows/boundary';
import { DEFAULT_ENGINE_STALL_TIMEOUT_MS, loadConfig } from '../../core/config/config';
import { createLogger } from '../../core/runtime/logger';
import { decodeToWav, runFfmpeg } from '../../providers/media/audio';
import { configureEngineWatchdog, EngineStallError, runTool } from '../../providers/process/run-tool';

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// The engine watchdog of runTool (providers/process/run-tool.ts) on real processes: a tiny ENGINE_STALL_TIMEOUT_MS,
// read through the configuration as the worker reads it, and the kill log captured from a real pino logger.
describe('engine watchdog (runTool)', function () {
  this.timeout(60_000);
  let dir: string;
  let logLines: string[] = [];
  /** Sets the process-wide stall timeout as the worker does, from ENGINE_STALL_TIMEOUT_MS. */
  const watchFor = (ms: number) =>
    configureEngineWatchdog({
      stallTimeoutMs: loadConfig({ ENGINE_STALL_TIMEOUT_MS: String(ms) }).ENGINE_STALL_TIMEOUT_MS,
      logger: createLogger('test', 'info', { write: (line: string) => void logLines.push(line) }),
    });

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'watchdog-'));
  });
  beforeEach(() => {
    logLines = [];
  });
  after(async () => {
    configureEngineWatchdog({ stallTimeoutMs: DEFAULT_ENGINE_STALL_TIMEOUT_MS });
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('kills a process that printed once and then went silent, failing with a retryable EngineStallError and a log line', async () => {
    watchFor(300);
    let pid = 0;
    const err = await runTool('sh', ['-c', 'echo started; exec sleep 600'], {
      timeoutMs: 60_000,
      onSpawn: (p) => (pid = p),
    }).then(
      () => expect.fail('a silent process must not finish'),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(EngineStallError);
    const stall = err as EngineStallError;
    expect(stall.engine).to.equal('sh');
    expect(stall.stallTimeoutMs).to.equal(300);
    expect(stall.message).to.match(/^sh made no progress for 300 ms/);
    expect(stall.retryable).to.equal(true);
    // The error boundary leaves it as it is: Temporal retries the attempt (an AppError would become non-retryable).
    expect(toActivityFailure(err)).to.equal(err);
    // runTool settles once the killed process is reaped.
    expect(pid).to.be.above(0);
    expect(isAlive(pid), `process ${pid} still exists`).to.equal(false);
    const logged = logLines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged).to.have.length(1);
    expect(logged[0]).to.include({
      level: 'warn',
      engine: 'sh',
      pid,
      stallTimeoutMs: 300,
      msg: 'engine process made no progress: killed',
    });
    // The engine's name and pid, never its arguments (paths, URLs) or environment.
    expect(logLines[0]).to.not.include('sleep 600');
  });

  it('kills a stopped process (SIGSTOP) whose timeout is far away', async () => {
    watchFor(300);
    const err = await runTool('sh', ['-c', 'while :; do echo tick; sleep 0.05; done'], {
      timeoutMs: 60_000,
      onSpawn: (p) => setTimeout(() => process.kill(p, 'SIGSTOP'), 200),
    }).then(
      () => expect.fail('a stopped process must not finish'),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(EngineStallError);
    expect(logLines).to.have.length(1);
  });

  it('kills an ffmpeg blocked on its input (a FIFO nobody writes): the stall error, not UNPROCESSABLE_INPUT', async () => {
    watchFor(500);
    const fifo = path.join(dir, 'input.fifo');
    execFileSync('mkfifo', [fifo]);
    const err = await decodeToWav(fifo, path.join(dir, 'out.wav')).then(
      () => expect.fail('ffmpeg cannot read a FIFO nobody writes'),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(EngineStallError);
    expect((err as EngineStallError).engine).to.equal('ffmpeg');
    expect(toActivityFailure(err)).to.equal(err);
    expect(JSON.parse(logLines[0]!)).to.include({ engine: 'ffmpeg' });
  });

  it('lets a process run longer than the window while it keeps reporting progress (ffmpeg -progress)', async () => {
    watchFor(2000);
    const started = Date.now();
    // `-re` reads the input at its own pace: 4 s of audio take 4 s, with a progress report about twice a second.
    await runFfmpeg(['-re', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=4', '-f', 'null', '-'], {
      timeoutMs: 60_000,
    });
    expect(Date.now() - started).to.be.above(2000);
    expect(logLines).to.deep.equal([]);
  });

  it('lets a chatty process run longer than the window, and an engine without a watchdog (stallTimeoutMs 0) stay silent', async () => {
    watchFor(2000);
    const started = Date.now();
    const r = await runTool('sh', ['-c', 'for i in $(seq 1 30); do echo $i; sleep 0.1; done'], { timeoutMs: 60_000 });
    expect(r.stdout.toString().trim().split('\n')).to.have.length(30);
    expect(Date.now() - started).to.be.above(2000);
    const quiet = await runTool('sh', ['-c', 'sleep 2.5; echo done'], { timeoutMs: 60_000, stallTimeoutMs: 0 });
    expect(quiet.stdout.toString()).to.equal('done\n');
    expect(logLines).to.deep.equal([]);
  });
});
