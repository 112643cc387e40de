import { Worker, type ResourceLimits } from 'node:worker_threads';

export interface ThreadPoolOptions {
  /** Threads at most; more requests wait for one to come free. */
  maxThreads: number;
  /** A thread idle this long is ended (its memory freed); undefined keeps idle threads. */
  idleMs?: number;
  /**
   * Heap limits per thread: a request that needs more ends its thread (the pool starts a fresh one) and rejects
   * with Node's `ERR_WORKER_OUT_OF_MEMORY` error, instead of growing the whole process.
   */
  resourceLimits?: ResourceLimits;
}

/** The error a request rejects with when its thread ran out of its heap limit. */
export const isThreadOutOfMemory = (e: unknown): boolean =>
  (e as { code?: string } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY';

type PoolWorker = Worker & { discarded?: boolean; idleTimer?: NodeJS.Timeout };

/**
 * A small pool of long-lived worker threads running one entry module: each thread loads its engine once, so a
 * request pays only for its own work. The entry answers each message `{ id, ...request }` with
 * `{ id, result }` or `{ id, error: message, code?, details? }`, one request at a time. An aborted request terminates its thread
 * (the only way to stop synchronous work); the pool starts a fresh one when needed. Threads do not keep the
 * process alive.
 */
export class ThreadPool {
  private idle: PoolWorker[] = [];
  private size = 0;
  private waiting: ((w: PoolWorker) => void)[] = [];
  private seq = 0;
  private answered = 0;

  constructor(
    private readonly entry: URL,
    private readonly opts: ThreadPoolOptions,
  ) {}

  /** Requests a thread has answered (a result or an error), since the pool was made. */
  get runs(): number {
    return this.answered;
  }

  /** Threads working on a request now (started and not idle). */
  get busy(): number {
    return this.size - this.idle.length;
  }

  private spawn(): PoolWorker {
    this.size++;
    const w: PoolWorker = new Worker(
      this.entry,
      this.opts.resourceLimits ? { resourceLimits: this.opts.resourceLimits } : {},
    );
    w.unref();
    w.once('exit', () => this.discard(w));
    return w;
  }

  private discard(w: PoolWorker): void {
    if (w.discarded) return;
    w.discarded = true;
    clearTimeout(w.idleTimer);
    this.size--;
    this.idle = this.idle.filter((x) => x !== w);
    void w.terminate();
    const next = this.waiting.shift();
    if (next) next(this.spawn());
  }

  private acquire(): Promise<PoolWorker> {
    const w = this.idle.pop();
    if (w) {
      clearTimeout(w.idleTimer);
      return Promise.resolve(w);
    }
    if (this.size < this.opts.maxThreads) return Promise.resolve(this.spawn());
    return new Promise((r) => this.waiting.push(r));
  }

  private release(w: PoolWorker): void {
    const next = this.waiting.shift();
    if (next) {
      next(w);
      return;
    }
    this.idle.push(w);
    if (this.opts.idleMs !== undefined) {
      w.idleTimer = setTimeout(() => this.discard(w), this.opts.idleMs);
      w.idleTimer.unref();
    }
  }

  /** Runs one request on a thread; `signal` aborting terminates the thread and rejects with its reason. */
  async run<T>(request: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    const w = await this.acquire();
    const id = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      const cleanup = () => {
        w.off('message', onMessage);
        w.off('error', onError);
        w.off('exit', onExit);
        signal?.removeEventListener('abort', onAbort);
      };
      const onMessage = (m: { id?: number; result?: T; error?: string; code?: string; details?: unknown }) => {
        if (m.id !== id) return;
        cleanup();
        this.release(w);
        this.answered++;
        // An entry may name its error (`code`, `details`) so the caller can map it back to its own error type.
        if (m.error !== undefined) reject(Object.assign(new Error(m.error), { code: m.code, details: m.details }));
        else resolve(m.result as T);
      };
      const onError = (e: Error) => {
        cleanup();
        this.discard(w);
        reject(e);
      };
      const onExit = (code: number) => {
        cleanup();
        reject(signal?.aborted ? signal.reason : new Error(`Worker thread exited with ${code} without an answer`));
      };
      const onAbort = () => {
        cleanup();
        this.discard(w);
        reject(signal!.reason);
      };
      w.on('message', onMessage);
      w.once('error', onError);
      w.once('exit', onExit);
      signal?.addEventListener('abort', onAbort, { once: true });
      w.postMessage({ id, ...request });
    });
  }
}
