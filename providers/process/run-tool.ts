import { spawn } from 'node:child_process';

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
  env?: NodeJS.ProcessEnv;
  /** Stdout beyond this many bytes kills the process (default 256 MB): a hostile input cannot fill memory. */
  maxStdoutBytes?: number;
  /** Called with the pid once the process runs (tests check that abort really ends it). */
  onSpawn?: (pid: number) => void;
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
 * Runs an engine's command line tool without a shell and collects its output. The process is killed on abort,
 * on timeout and when its output grows past the limit, so no caller ever waits on a stuck engine.
 */
export function runTool(command: string, args: string[], opts: RunToolOptions): Promise<ToolResult> {
  const { signal, timeoutMs, maxStdoutBytes = 256 * 1024 * 1024 } = opts;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const child = spawn(command, args, { env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
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
    signal?.addEventListener('abort', onAbort, { once: true });
    if (child.pid !== undefined) opts.onSpawn?.(child.pid);
    child.stdout.on('data', (d: Buffer) => {
      outBytes += d.length;
      if (outBytes > maxStdoutBytes) kill(new Error(`${command} wrote more than ${maxStdoutBytes} bytes`));
      else out.push(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 64 * 1024) stderr += d.toString('utf8');
    });
    let settled = false;
    const settle = () => {
      settled = true;
      clearTimeout(timer);
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
