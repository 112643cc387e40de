import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { DEFAULT_ENGINE_STALL_TIMEOUT_MS, toolEnvironment } from '../../core/config/config';
import { createLogger, type Logger } from '../../core/runtime/logger';

/** What a finished tool run left behind. */
export interface ToolResult {
  stdout: Buffer;
  stderr: string;
}

export interface RunToolOptions {
  /** Aborting kills the process (SIGKILL) and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Kills the process and rejects with a `ToolTimeoutError` after this many milliseconds. */
  timeoutMs: number;
  /**
   * The tool's environment, whole: build it with `toolEnvironment(extra)`. Default: `toolEnvironment()` (what engines
   * need, none of the service's keys).
   */
  env?: NodeJS.ProcessEnv;
  /** Stdout beyond this many bytes kills the process (default 256 MB): a hostile input cannot fill memory. */
  maxStdoutBytes?: number;
  /** Called with the pid once the process runs (tests check that abort really ends it). */
  onSpawn?: (pid: number) => void;
  /**
   * Kills the process and rejects with an `EngineStallError` when it shows no progress (no output on stdout, stderr
   * or the progress pipe) for this long. Default: the process-wide `ENGINE_STALL_TIMEOUT_MS`
   * (`configureEngineWatchdog`);
   * 0: no watchdog (a network client that prints nothing while it downloads, bounded by its own socket timeout).
   */
  stallTimeoutMs?: number;
  /**
   * Opens fd 3 for the tool's progress reports (ffmpeg `-progress pipe:3`): progress for the watchdog, then dropped.
   */
  progressPipe?: boolean;
  /**
   * Called with each chunk of stdout as it comes (a reader that parses while the tool still writes); the chunks are
   * then not kept (`stdout` of the result is empty). The byte limit holds all the same.
   */
  onStdout?: (chunk: Buffer) => void;
}

/**
 * An engine that made no progress for the stall timeout (a hung tesseract, an ffmpeg blocked on its input, a speech
 * engine that stopped answering): it was killed. Retryable: the next attempt runs a fresh process, and the attempt
 * no longer holds its worker slot until the activity's start-to-close expires.
 */
export class EngineStallError extends Error {
  readonly retryable = true;
  constructor(
    readonly engine: string,
    readonly stallTimeoutMs: number,
  ) {
    super(`${engine} made no progress for ${stallTimeoutMs} ms (ENGINE_STALL_TIMEOUT_MS) and was killed`);
    this.name = 'EngineStallError';
  }
}

let stallTimeoutMs = DEFAULT_ENGINE_STALL_TIMEOUT_MS;
let watchdogLogger: Logger | undefined;

/**
 * Sets the stall timeout every engine process gets by default, and the logger its kills are written to (worker start).
 */
export function configureEngineWatchdog(opts: { stallTimeoutMs: number; logger?: Logger }): void {
  stallTimeoutMs = opts.stallTimeoutMs;
  if (opts.logger) watchdogLogger = opts.logger;
}

/** The process-wide stall timeout (`configureEngineWatchdog`, else the default of `ENGINE_STALL_TIMEOUT_MS`). */
export const engineStallTimeoutMs = (): number => stallTimeoutMs;

/**
 * The progress watchdog of an engine process: `touch()` on every sign of progress (output, a progress report); when
 * none came for `timeoutMs` while it is started, the engine is logged (its name and pid, never its arguments or
 * environment) and `onStall` gets the `EngineStallError` to kill it with. One timer, re-armed lazily: touching costs
 * a clock read, so chatty output is cheap.
 */
export class StallWatchdog {
  private timer: NodeJS.Timeout | undefined;
  private last = 0;

  constructor(
    private readonly engine: string,
    private readonly timeoutMs: number,
    private readonly onStall: (err: EngineStallError) => void,
  ) {}

  /** Watches from now (no-op with a timeout of 0, or when already started). */
  start(pid?: number): void {
    this.last = Date.now();
    if (this.timeoutMs > 0 && !this.timer) this.arm(this.timeoutMs, pid);
  }

  touch(): void {
    this.last = Date.now();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(delay: number, pid: number | undefined): void {
    this.timer = setTimeout(() => {
      const idle = Date.now() - this.last;
      if (idle < this.timeoutMs) return this.arm(this.timeoutMs - idle, pid);
      this.timer = undefined;
      (watchdogLogger ??= createLogger('engine-watchdog', 'warn')).warn(
        { engine: this.engine, pid, stallTimeoutMs: this.timeoutMs },
        'engine process made no progress: killed',
      );
      this.onStall(new EngineStallError(this.engine, this.timeoutMs));
    }, delay);
  }
}

/** A tool that ran out of time. */
export class ToolTimeoutError extends Error {
  constructor(
    readonly command: string,
    readonly timeoutMs: number,
  ) {
    super(`${command} did not finish within ${timeoutMs} ms`);
    this.name = 'ToolTimeoutError';
  }
}

/** A tool that exited with a non-zero status or died from a signal. */
export class ToolExitError extends Error {
  constructor(
    readonly command: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`${command} failed (${exitCode === null ? 'killed' : `exit ${exitCode}`}): ${stderr.trim().slice(0, 500)}`);
    this.name = 'ToolExitError';
  }
}

const abortReason = (signal: AbortSignal): Error =>
  signal.reason instanceof Error ? signal.reason : new DOMException('The operation was aborted', 'AbortError');

/**
 * Runs an engine's command line tool without a shell and collects its output. The process is killed on abort, on
 * timeout, when it makes no progress for the stall timeout (`StallWatchdog`) and when its output grows past the
 * limit, so no caller ever waits on a stuck engine.
 */
export function runTool(command: string, args: string[], opts: RunToolOptions): Promise<ToolResult> {
  const { signal, timeoutMs, maxStdoutBytes = 256 * 1024 * 1024 } = opts;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const child = spawn(command, args, {
      env: opts.env ?? toolEnvironment(),
      stdio: ['ignore', 'pipe', 'pipe', ...(opts.progressPipe ? (['pipe'] as const) : [])],
    });
    const out: Buffer[] = [];
    let outBytes = 0;
    let stderr = '';
    let failure: Error | undefined;
    const kill = (err: Error) => {
      failure ??= err;
      child.kill('SIGKILL');
    };
    const onAbort = () => kill(abortReason(signal!));
    const timer = setTimeout(() => kill(new ToolTimeoutError(command, timeoutMs)), timeoutMs);
    const watchdog = new StallWatchdog(path.basename(command), opts.stallTimeoutMs ?? stallTimeoutMs, kill);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (child.pid !== undefined) {
      watchdog.start(child.pid);
      opts.onSpawn?.(child.pid);
    }
    (child.stdio[3] as Readable | undefined)?.on('data', () => watchdog.touch());
    (child.stdout as Readable).on('data', (d: Buffer) => {
      watchdog.touch();
      outBytes += d.length;
      if (outBytes > maxStdoutBytes) kill(new Error(`${command} wrote more than ${maxStdoutBytes} bytes`));
      else if (opts.onStdout) {
        try {
          opts.onStdout(d);
        } catch (err) {
          kill(err instanceof Error ? err : new Error(String(err)));
        }
      } else out.push(d);
    });
    (child.stderr as Readable).on('data', (d: Buffer) => {
      watchdog.touch();
      if (stderr.length < 64 * 1024) stderr += d.toString('utf8');
    });
    let settled = false;
    const settle = () => {
      settled = true;
      clearTimeout(timer);
      watchdog.stop();
      signal?.removeEventListener('abort', onAbort);
    };
    child.on('error', (err) => {
      failure ??= err;
      // A tool that could not start (ENOENT, EACCES) may never emit 'close'.
      if (child.pid === undefined && !settled) {
        settle();
        reject(err);
      }
    });
    child.on('close', (code) => {
      if (settled) return;
      settle();
      if (failure) reject(failure);
      else if (code !== 0) reject(new ToolExitError(command, code, stderr));
      else resolve({ stdout: Buffer.concat(out), stderr });
    });
  });
}
