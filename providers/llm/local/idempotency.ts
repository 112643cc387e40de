/** How the local model server keeps keyed requests (`Idempotency-Key`). */
export interface KeyedOptions {
  /** How long a keyed request whose clients all went away goes on, waiting for one to come back, before it stops. */
  orphanMs: number;
  /** How long an answer is kept for a repeated key. */
  keepMs: number;
  /** Answers kept at most (the oldest go first). */
  maxKept: number;
}

/**
 * Longer than a dead worker's heartbeat timeout (30 s) and the retry after it, and than the provider's backoff after
 * a timeout; an answer outlives the outage window (`PROVIDER_OUTAGE_MAX_MS`, 15 min) twice over.
 */
export const DEFAULT_KEYED: KeyedOptions = { orphanMs: 120_000, keepMs: 1_800_000, maxKept: 1024 };

/** The same key came with a different request: 422, as the IETF Idempotency-Key draft says. */
export class KeyReuseError extends Error {
  constructor() {
    super('This Idempotency-Key was used with a different request.');
    this.name = 'KeyReuseError';
  }
}

interface Entry<T> {
  fingerprint: string;
  clients: number;
  controller: AbortController;
  result: Promise<T>;
  /** The answer and when it came, once it has. */
  done?: { value: T; at: number };
  /** The computation ended (answered or failed). */
  settled?: boolean;
  orphan?: NodeJS.Timeout;
}

/** What `KeyedRuns.run` did for a request. */
export type KeyedOutcome = 'computed' | 'joined' | 'replayed';

/**
 * Requests by idempotency key: the first request with a key computes; one with the same key while it computes waits
 * for that computation (`joined`), one after it answered gets the same answer (`replayed`), so a client's retry after
 * a timeout, or a dead worker's successor, never pays for the call again. A keyed computation whose clients all went
 * away goes on for `orphanMs` (a retry is on its way), then stops. Failures are not kept: the next request computes.
 */
export class KeyedRuns<T> {
  private readonly entries = new Map<string, Entry<T>>();
  readonly counts: Record<KeyedOutcome, number> = { computed: 0, joined: 0, replayed: 0 };

  constructor(private readonly options: KeyedOptions = DEFAULT_KEYED) {}

  /** Answers kept and computations running. */
  get size(): number {
    return this.entries.size;
  }

  async run(
    key: string,
    fingerprint: string,
    clientSignal: AbortSignal,
    compute: (signal: AbortSignal) => Promise<T>,
  ): Promise<{ value: T; outcome: KeyedOutcome }> {
    this.expire();
    const found = this.entries.get(key);
    if (found && found.fingerprint !== fingerprint) throw new KeyReuseError();
    if (found?.done) {
      this.counts.replayed++;
      return { value: found.done.value, outcome: 'replayed' };
    }
    let entry = found;
    if (!entry) {
      const controller = new AbortController();
      const created: Entry<T> = { fingerprint, clients: 0, controller, result: compute(controller.signal) };
      created.result.then(
        (value) => {
          clearTimeout(created.orphan);
          created.settled = true;
          created.done = { value, at: Date.now() };
          this.trim();
        },
        () => {
          clearTimeout(created.orphan);
          created.settled = true;
          if (this.entries.get(key) === created) this.entries.delete(key);
        },
      );
      this.entries.set(key, created);
      entry = created;
    }
    const outcome: KeyedOutcome = found ? 'joined' : 'computed';
    this.counts[outcome]++;
    return { value: await this.attach(entry, clientSignal), outcome };
  }

  /** Waits for the entry's answer for one client; the last client to go starts the orphan clock. */
  private attach(entry: Entry<T>, signal: AbortSignal): Promise<T> {
    entry.clients++;
    clearTimeout(entry.orphan);
    entry.orphan = undefined;
    return new Promise<T>((resolve, reject) => {
      let attached = true;
      const leave = () => {
        if (!attached) return;
        attached = false;
        entry.clients--;
        signal.removeEventListener('abort', onAbort);
        if (entry.clients === 0 && !entry.settled) {
          entry.orphan = setTimeout(() => {
            if (entry.clients === 0) entry.controller.abort(new Error('no client came back for the keyed request'));
          }, this.options.orphanMs);
          entry.orphan.unref();
        }
      };
      const onAbort = () => {
        leave();
        reject(signal.reason);
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      entry.result.then(
        (v) => {
          leave();
          resolve(v);
        },
        (err: unknown) => {
          leave();
          reject(err);
        },
      );
    });
  }

  private expire(now = Date.now()): void {
    for (const [key, e] of this.entries) if (e.done && now - e.done.at > this.options.keepMs) this.entries.delete(key);
  }

  /** Drops the oldest answers beyond `maxKept` (running computations stay). */
  private trim(): void {
    let answered = [...this.entries.values()].filter((e) => e.done).length;
    for (const [key, e] of this.entries) {
      if (answered <= this.options.maxKept) break;
      if (e.done) {
        this.entries.delete(key);
        answered--;
      }
    }
  }

  /** Stops every computation and forgets every answer (the server closes). */
  close(): void {
    for (const e of this.entries.values()) {
      clearTimeout(e.orphan);
      if (!e.done) e.controller.abort(new Error('the server is closing'));
    }
    this.entries.clear();
  }
}
