// Supervision of the processes a launcher starts (`npm start`): a child that dies is restarted with backoff, each
// exit logged with its code or signal; a child that keeps dying (a crash loop) stops the stack with a message naming
// it and its last log lines. Plain Node, no dependency.
import { pipePrefixed } from './logfmt.mjs';
import { sleep, stopChild } from './services.mjs';

/** What a process says when a port it was given is taken (Node, Go's net package, MinIO). */
export const PORT_TAKEN = /EADDRINUSE|address already in use|port is already in use/i;

/** Restart backoff (doubling from `baseMs` to `maxMs`) and the crash loop: `loopRestarts` within `loopWindowMs`. */
export const RESTART_POLICY = { baseMs: 1000, maxMs: 30_000, loopRestarts: 5, loopWindowMs: 120_000, tailLines: 20 };

/**
 * @typedef {import('node:child_process').ChildProcess} ChildProcess
 * @typedef {{ name: string, child: ChildProcess | null, restarts: number[], tail: string[], raw: boolean, ready:
 * boolean, scheduled?: boolean, portTaken?: boolean, drained?: Promise<unknown>, launch: (attach: (c: ChildProcess)
 * => void) => Promise<unknown> }} Entry
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

  /**
   * Starts `name` on ports chosen at each attempt by `choose(attempt)` (a check that a port is free is only a hint:
   * another process may bind it before the child does). A first start whose process says a port is taken (any of
   * its lines, or the start's error, matches `PORT_TAKEN`) is stopped and tried again on the ports of the next attempt, up to `attempts` times,
   * before anything else is told the ports; later restarts keep the ports it came up on. Resolves with the ports
   * and what `launch` resolved with.
   * @template P, V
   * @param {string} name
   * @param {{ choose: (attempt: number) => Promise<P>, launch: (ports: P, attach: (c: ChildProcess) => void) => Promise<V>, attempts?: number, raw?: boolean }} opts
   * @returns {Promise<{ ports: P, value: V }>}
   */
  async startOnPorts(name, { choose, launch, attempts = 3, raw }) {
    let lastError;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const ports = await choose(attempt);
      try {
        return { ports, value: await this.start(name, (attach) => launch(ports, attach), { raw }) };
      } catch (err) {
        lastError = err;
        const entry = this.entries.get(name);
        await stopChild(this.child(name), 5000);
        // Its last words are read to the end before they are judged (a process's exit can come before its output).
        await Promise.race([entry?.drained, sleep(5000)]);
        // This attempt's process said a port was taken (each start has an entry of its own), or the start found so.
        if (!entry?.portTaken && !PORT_TAKEN.test(String(err?.message))) throw err;
        this.log(name, `a port was taken before it could bind it${attempt < attempts ? '; trying other ports' : ''}`);
      }
    }
    throw lastError;
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
    entry.drained = new Promise((resolve) => child.once('close', resolve));
    const keep = (line) => {
      // Remembered for the whole start: a Go panic's stack pushes the line out of the tail.
      if (PORT_TAKEN.test(line)) entry.portTaken = true;
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
