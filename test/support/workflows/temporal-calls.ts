import { Connection } from '@temporalio/client';

/** A client connection whose calls in flight are counted, closed only once none is. */
export interface TrackedConnection {
  connection: Connection;
  /** Calls in flight now (a retry waiting for its backoff counts: its call has not ended). */
  inFlight(): number;
  /** Resolves once no call is in flight, or false after `maxMs`. */
  idle(maxMs: number): Promise<boolean>;
  /**
   * Closes the connection once no call is in flight: at once when idle, otherwise when the last call ends (it does
   * not wait for that). Never closes it under a call.
   */
  closeWhenIdle(): Promise<void>;
}

/**
 * Why: closing a client connection does not end the calls in flight on it (a `handle.result()` long poll of a test
 * that timed out, a sync request's wait in the API). When the server then goes away, such a call fails with
 * UNAVAILABLE and the SDK's retry interceptor starts a new call from a timer, on the closed channel: grpc-js throws
 * "Channel has been shut down" there, an uncaught exception outside any test. Every client call goes through
 * `connection.workflowService`, so counting the promises of its methods tells when the connection is idle.
 */
export function trackCalls(connection: Connection): TrackedConnection {
  const pending = new Set<Promise<unknown>>();
  let onIdle: (() => void)[] = [];
  const settled = (p: Promise<unknown>) => {
    pending.delete(p);
    if (pending.size > 0) return;
    const waiting = onIdle;
    onIdle = [];
    for (const f of waiting) f();
  };
  const service = connection.workflowService;
  const tracked = new Proxy(service, {
    get(target, prop) {
      const v: unknown = Reflect.get(target, prop, target);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        const r: unknown = v.apply(target, args);
        if (r instanceof Promise) {
          pending.add(r);
          r.then(
            () => settled(r),
            () => settled(r),
          );
        }
        return r;
      };
    },
  });
  Object.defineProperty(connection, 'workflowService', { value: tracked, configurable: true, writable: true });
  const whenIdle = () => (pending.size === 0 ? Promise.resolve() : new Promise<void>((r) => onIdle.push(r)));
  return {
    connection,
    inFlight: () => pending.size,
    async idle(maxMs) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), maxMs)));
      const result = await Promise.race([whenIdle().then(() => true), late]);
      clearTimeout(timer);
      return result;
    },
    async closeWhenIdle() {
      if (pending.size === 0) return connection.close();
      void whenIdle().then(() => connection.close());
    },
  };
}

/** A client connection of a test's own, tracked (see `trackCalls`). */
export async function connectTracked(address: string): Promise<TrackedConnection> {
  return trackCalls(await Connection.connect({ address }));
}

/** Calls made on a connection, by method name, from now on (`countCalls`). */
export interface CallCounts {
  /** How many calls of `method` (all methods when omitted) were made since counting began. */
  of(method?: string): number;
  /** Stops counting (the connection's service is the one it had before). */
  stop(): void;
}

/**
 * Counts the calls an API process makes on its Temporal connection by method (`getSystemInfo`,
 * `describeTaskQueue`, `startWorkflowExecution`, ...): every client call goes through `connection.workflowService`.
 */
export function countCalls(connection: Connection): CallCounts {
  const counts = new Map<string, number>();
  const service = connection.workflowService;
  const counted = new Proxy(service, {
    get(target, prop) {
      const v: unknown = Reflect.get(target, prop, target);
      if (typeof v !== 'function' || typeof prop !== 'string') return v;
      return (...args: unknown[]) => {
        counts.set(prop, (counts.get(prop) ?? 0) + 1);
        return v.apply(target, args);
      };
    },
  });
  Object.defineProperty(connection, 'workflowService', { value: counted, configurable: true, writable: true });
  return {
    of: (method) => (method ? (counts.get(method) ?? 0) : [...counts.values()].reduce((a, b) => a + b, 0)),
    stop: () =>
      Object.defineProperty(connection, 'workflowService', { value: service, configurable: true, writable: true }),
  };
}
