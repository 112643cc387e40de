/** The queue is full: the server answers 503 with `Retry-After`. */
export class QueueFullError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('The local model is busy: its request queue is full. Retry later.');
    this.name = 'QueueFullError';
  }
}

interface Waiter {
  start: () => void;
}

/**
 * `slots` tasks run at once, at most `size` more wait (first come, first served); a task beyond that is refused at
 * once with `QueueFullError`, whose Retry-After is the expected wait judged by the recent run times. A waiting task
 * whose signal aborts leaves the queue.
 */
export class RequestQueue {
  private running = 0;
  private readonly waiting: Waiter[] = [];
  /** Mean run time of recent tasks (exponential average), for Retry-After. */
  private meanMs = 10_000;

  constructor(
    readonly slots: number,
    readonly size: number,
  ) {}

  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  async run<T>(signal: AbortSignal | undefined, task: () => Promise<T>): Promise<T> {
    signal?.throwIfAborted();
    if (this.running >= this.slots) {
      if (this.waiting.length >= this.size) {
        const rounds = Math.ceil((this.waiting.length + 1) / this.slots);
        throw new QueueFullError(Math.max(1, Math.ceil((rounds * this.meanMs) / 1000)));
      }
      await this.wait(signal);
    } else {
      this.running++;
    }
    const t0 = Date.now();
    try {
      return await task();
    } finally {
      this.meanMs = 0.7 * this.meanMs + 0.3 * (Date.now() - t0);
      const next = this.waiting.shift();
      if (next) next.start();
      else this.running--;
    }
  }

  /** Resolves when a finishing task hands its slot over (the running count stays). */
  private wait(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.waiting.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
