import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { toolEnvironment } from '../../core/config/config';
import {
  StallWatchdog,
  ToolExitError,
  ToolTimeoutError,
  engineStallTimeoutMs,
  runTool,
  type RunToolOptions,
  type ToolResult,
} from './run-tool';

/** The launcher's script (standard library only), started with `python3`. */
export const LAUNCHER_SCRIPT = fileURLToPath(new URL('./tool_launcher.py', import.meta.url));

/** The launcher died while the tool ran: the caller runs the tool again as its own child (`runLaunchedTool`). */
export class LauncherGoneError extends Error {
  readonly retryable = true;
  constructor(readonly command: string) {
    super(`the tool launcher stopped while ${command} ran`);
    this.name = 'LauncherGoneError';
  }
}

interface Pending {
  command: string;
  pid?: number;
  onPid(pid: number): void;
  onOut(chunk: Buffer): void;
  onErr(chunk: Buffer): void;
  onExit(code: number): void;
  onFailed(err: Error): void;
  onGone(): void;
}

/**
 * A long-lived `python3` process (providers/process/tool_launcher.py) that starts tools for this process: a fork of
 * a 280 MB Node process blocks its event loop ~10 ms (page tables copied); the launcher's vfork costs ~0.2 ms of its
 * own. Started on first use; when it dies (killed, crashed) its running tools are killed by pid, their runs reject
 * with `LauncherGoneError`, and the next run starts a new one. Its stdin is its lifeline: when this process exits, on
 * any signal, the pipe closes and the launcher kills its tools and exits, so neither outlives us.
 */
export class ToolLauncher {
  private child: ChildProcess | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private buf: Buffer = Buffer.alloc(0);
  /** Set when the launcher could not be started at all (no python3): callers run their tools directly. */
  unavailable = false;

  constructor(private readonly python = 'python3') {}

  /** The launcher's pid while it runs (tests kill it). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  private start(): ChildProcess {
    // Its tools inherit its environment: the allow-list of run-tool's, none of the service's keys.
    const child = spawn(this.python, ['-u', LAUNCHER_SCRIPT], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: toolEnvironment(),
    });
    this.child = child;
    this.buf = Buffer.alloc(0);
    child.on('error', () => {
      // python3 missing: every run starts its tool directly from now on.
      if (child.pid === undefined) this.unavailable = true;
      this.gone(child);
    });
    // 'close', not 'exit': the frames the launcher wrote before it ended are read first.
    child.on('close', () => this.gone(child));
    child.stdin!.on('error', () => this.gone(child));
    (child.stdout as Readable).on('data', (d: Buffer) => this.onData(d));
    this.idle(child);
    return child;
  }

  /** While no tool runs, the launcher keeps no event loop alive (a script that is done may exit). */
  private idle(child: ChildProcess): void {
    const busy = this.pending.size > 0;
    for (const h of [child, child.stdin, child.stdout] as (
      { ref?: () => void; unref?: () => void } | null | undefined
    )[]) {
      if (busy) h?.ref?.();
      else h?.unref?.();
    }
  }

  private gone(child: ChildProcess): void {
    if (this.child !== child) return;
    this.child = undefined;
    const runs = [...this.pending.values()];
    this.pending.clear();
    for (const p of runs) {
      // Re-parented to init with the launcher gone: killed here, so no tool outlives its run.
      if (p.pid) {
        try {
          process.kill(p.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
      p.onGone();
    }
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    let at = 0;
    while (this.buf.length - at >= 4) {
      const len = this.buf.readUInt32BE(at);
      if (this.buf.length - at - 4 < len) break;
      const kind = this.buf[at + 4];
      const id = this.buf.readUInt32BE(at + 5);
      const payload = this.buf.subarray(at + 9, at + 4 + len);
      at += 4 + len;
      const p = this.pending.get(id);
      if (!p) continue;
      if (kind === 0x4f /* O */) p.onOut(payload);
      else if (kind === 0x45 /* E */) p.onErr(payload);
      else if (kind === 0x50 /* P */) {
        p.pid = Number(payload.toString('latin1'));
        p.onPid(p.pid);
      } else if (kind === 0x58 /* X */) {
        this.pending.delete(id);
        p.onExit(Number(payload.toString('latin1')));
      } else if (kind === 0x46 /* F */) {
        this.pending.delete(id);
        const [code, ...rest] = payload.toString('utf8').split(' ');
        p.onFailed(Object.assign(new Error(`spawn ${p.command} ${code}: ${rest.join(' ')}`), { code }));
      }
    }
    // The rest (an incomplete frame) is copied, so the chunks handed out above stay the callers' own.
    this.buf = at === 0 ? this.buf : Buffer.from(this.buf.subarray(at));
    if (this.child) this.idle(this.child);
  }

  private send(msg: object): void {
    this.child?.stdin?.write(`${JSON.stringify(msg)}\n`);
  }

  /**
   * Runs a tool through the launcher with `runTool`'s contract (timeout, abort, stall watchdog, stdout limit; a
   * `ToolExitError` for a non-zero exit, code null when killed by a signal). Rejects with `LauncherGoneError` when
   * the launcher dies during the run.
   */
  run(command: string, args: string[], opts: RunToolOptions): Promise<ToolResult> {
    const { signal, timeoutMs, maxStdoutBytes = 256 * 1024 * 1024 } = opts;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(
          signal.reason instanceof Error ? signal.reason : new DOMException('The operation was aborted', 'AbortError'),
        );
        return;
      }
      const child = this.child ?? this.start();
      const id = this.nextId++;
      const out: Buffer[] = [];
      let outBytes = 0;
      let stderr = '';
      let failure: Error | undefined;
      const kill = (err: Error) => {
        failure ??= err;
        this.send({ kill: id });
      };
      const onAbort = () =>
        kill(
          signal!.reason instanceof Error
            ? signal!.reason
            : new DOMException('The operation was aborted', 'AbortError'),
        );
      const timer = setTimeout(() => kill(new ToolTimeoutError(command, timeoutMs)), timeoutMs);
      const watchdog = new StallWatchdog(path.basename(command), opts.stallTimeoutMs ?? engineStallTimeoutMs(), kill);
      signal?.addEventListener('abort', onAbort, { once: true });
      watchdog.start();
      const settle = () => {
        clearTimeout(timer);
        watchdog.stop();
        signal?.removeEventListener('abort', onAbort);
      };
      this.pending.set(id, {
        command,
        onPid: (pid) => opts.onSpawn?.(pid),
        onOut: (d) => {
          watchdog.touch();
          outBytes += d.length;
          if (outBytes > maxStdoutBytes) kill(new Error(`${command} wrote more than ${maxStdoutBytes} bytes`));
          else if (!failure) out.push(d);
        },
        onErr: (d) => {
          watchdog.touch();
          if (stderr.length < 64 * 1024) stderr += d.toString('utf8');
        },
        onExit: (status) => {
          settle();
          if (failure) reject(failure);
          else if (status !== 0) reject(new ToolExitError(command, status < 0 ? null : status, stderr));
          else resolve({ stdout: Buffer.concat(out), stderr });
        },
        onFailed: (err) => {
          settle();
          reject(err);
        },
        onGone: () => {
          settle();
          reject(failure ?? new LauncherGoneError(command));
        },
      });
      this.idle(child);
      this.send({ id, cmd: command, args });
    });
  }

  /** Stops the launcher (its tools are killed); the next run starts a new one. */
  stop(): void {
    const child = this.child;
    if (!child) return;
    child.stdin?.end();
    child.kill('SIGTERM');
  }
}

let shared: ToolLauncher | undefined;

/** The process's launcher (created on first use). */
export function toolLauncher(): ToolLauncher {
  return (shared ??= new ToolLauncher());
}

/**
 * `runTool` through the process's launcher (`ToolLauncher`), for tools started often by a big process (poppler in
 * the API and the worker). Options the launcher does not carry (`env`, `progressPipe`) run the tool directly; so does
 * a run whose launcher died under it (started again as our own child: the tools it runs read files and write nothing,
 * so a second run is the same), and a launcher that cannot start (no python3) falls back the same way.
 */
export async function runLaunchedTool(command: string, args: string[], opts: RunToolOptions): Promise<ToolResult> {
  if (opts.env || opts.progressPipe || toolLauncher().unavailable) return runTool(command, args, opts);
  try {
    return await toolLauncher().run(command, args, opts);
  } catch (err) {
    if (err instanceof LauncherGoneError) return runTool(command, args, opts);
    throw err;
  }
}
