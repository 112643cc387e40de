// Supervision of the processes a launcher starts (`npm start`): a child that dies is restarted with backoff, each
// exit logged with its code or signal; a child that keeps dying (a crash loop) stops the stack with a message naming
// it and its last log lines. Plain Node, no dependency.
import { pipePrefixed } from './logfmt.mjs';

/** Restart backoff (doubling from `baseMs` to `maxMs`) and the crash loop: `loopRestarts` within `loopWindowMs`. */
export const RESTART_POLICY = { baseMs: 1000, maxMs: 30_000, loopRestarts: 5, loopWindowMs: 120_000, tailLines: 20 };

/**
 * @typedef {import('node:child_process').ChildProcess} ChildProcess
 * @typedef {{ name: string, child: ChildProcess | null, restarts: number[], tail: string[], raw: boolean, ready:
 * boolean, scheduled?: boolean, launch: (attach: (c: ChildProcess) => void) => Promise<unknown> }} Entry
 */

export class Supervisor {
  /**
   * @param {{ log: (name: string, message: string) => void, onCrashLoop: (name: string) => void, policy?: typeof
   * RESTART_POLICY, raw?: boolean }} opts
   */
  constructor({ log, onCrashLoop, policy = RESTART_POLICY, raw = false }) {
    this.log = log;
    this.onCrashLoop = onCrashLoop;
    this.policy = policy;
    this.raw = raw;
    this.stopping = false;
    /** @type {Map<string, Entry>} */
    this.entries = new Map();
  }

  /**
   * Starts `name` with `launch(attach)`, which spawns the process, hands it to `attach` at once (so its output and
   * its exit are watched from the first moment) and resolves once it is ready. Resolves with what `launch` resolves
   * with; a first start that fails is retried like any later exit (the caller sees the error).
   * @param {string} name
   * @param {(attach: (c: ChildProcess) => void) => Promise<any>} launch
   * @param {{ raw?: boolean }} [opts] raw: the child's lines are printed as they are (not formatted as JSON logs)
   */
  async start(name, launch, opts = {}) {
    /** @type {Entry} */
    const entry = {
      name,
      child: null,
      restarts: [],
      tail: this.entries.get(name)?.tail ?? [],
      raw: opts.raw ?? this.raw,
      launch,
      ready: false,
    };
    this.entries.set(name, entry);
    // Until the first start succeeds, an exit is the caller's to handle (the promise rejects): only a process that
    // was running is restarted.
    const value = await this.#launch(entry);
    entry.ready = true;
    return value;
  }

  /** The running process of `name`, if any. */
  child(name) {
    return this.entries.get(name)?.child ?? null;
  }

  /** The last log lines of `name`. */
  tail(name) {
    return [...(this.entries.get(name)?.tail ?? [])];
  }

  #launch(entry) {
    return entry.launch((child) => this.#attach(entry, child));
  }

  #attach(entry, child) {
    entry.child = child;
    const keep = (line) => {
      entry.tail.push(line);
      if (entry.tail.length > this.policy.tailLines) entry.tail.shift();
    };
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      pipePrefixed(stream, entry.name, { raw: stream === child.stderr || entry.raw });
      let buf = '';
      stream.on('data', (d) => {
        buf += d;
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          keep(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
      });
    }
    child.once('exit', (code, signal) => {
      if (this.stopping || entry.child !== child || this.entries.get(entry.name) !== entry) return;
      entry.child = null;
      if (entry.ready) this.#restart(entry, signal ?? `code ${code}`);
    });
  }

  #restart(entry, how) {
    const now = Date.now();
    entry.restarts = entry.restarts.filter((t) => now - t < this.policy.loopWindowMs);
    entry.restarts.push(now);
    if (entry.restarts.length > this.policy.loopRestarts) {
      const tail = entry.tail.map((l) => `    ${l}`).join('\n');
      this.log(
        entry.name,
        `exited (${how}): a crash loop (${this.policy.loopRestarts} restarts within ${this.policy.loopWindowMs / 1000} s); stopping everything. Its last lines:\n${tail}`,
      );
      this.onCrashLoop(entry.name);
      return;
    }
    const delay = Math.min(this.policy.maxMs, this.policy.baseMs * 2 ** (entry.restarts.length - 1));
    this.log(
      entry.name,
      `exited unexpectedly (${how}); restarting in ${(delay / 1000).toFixed(0)} s (restart ${entry.restarts.length} within ${this.policy.loopWindowMs / 1000} s)`,
    );
    entry.scheduled = true;
    const timer = setTimeout(() => {
      entry.scheduled = false;
      if (this.stopping) return;
      this.#launch(entry).then(
        () => this.log(entry.name, 'restarted'),
        (err) => {
          // A start that failed without its process exiting (a readiness timeout after which it was stopped) counts
          // as another exit; one whose process exited was counted by the exit listener.
          this.log(entry.name, `restart failed: ${err?.message ?? err}`);
          if (entry.child === null && !this.stopping && !entry.scheduled) this.#restart(entry, 'not ready');
        },
      );
    }, delay);
    timer.unref?.();
  }
}
