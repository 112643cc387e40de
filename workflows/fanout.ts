/**
 * Bounded fan-out in workflow code. Deterministic: waiters are served first in, first out, so the commands (which
 * activity is scheduled when) follow only from the order of completions in history. Only leaf steps (one activity or
 * child each) may take a slot: a step holding a slot while it waits for other slotted steps could deadlock.
 */
export interface Limiter {
  /** Runs `step` once fewer than the limit of this limiter's steps are in flight. */
  run<R>(step: () => Promise<R>): Promise<R>;
  /** Steps in flight now (for tests and logs). */
  readonly active: number;
}

export function limiter(limit: number): Limiter {
  const max = Math.max(1, Math.floor(limit));
  const waiting: (() => void)[] = [];
  let active = 0;
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else active -= 1;
  };
  return {
    get active() {
      return active;
    },
    async run<R>(step: () => Promise<R>): Promise<R> {
      // A freed slot passes straight to the first waiter (active stays), so a later caller cannot jump the queue.
      if (active < max) active += 1;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await step();
      } finally {
        release();
      }
    },
  };
}

/**
 * `fn` over `items` with at most `limit` in flight at once (through `gate` when given: one limiter shared by
 * several maps of a job bounds them together), started in item order; results in item order. The first failure
 * rejects the whole, as `Promise.all` does; items not yet started then never start.
 */
export async function boundedMap<T, R>(
  items: readonly T[],
  limit: number | Limiter,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const gate = typeof limit === 'number' ? limiter(limit) : limit;
  let failed = false;
  return Promise.all(
    items.map((item, i) =>
      gate.run(async () => {
        if (failed) throw new Error('an earlier item failed');
        try {
          return await fn(item, i);
        } catch (err) {
          failed = true;
          throw err;
        }
      }),
    ),
  );
}
