import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';

const { temporal } = proto;
import type { Config } from '../core/config/config';
import { AppError } from '../core/errors';
import { taskQueues, type TaskQueues } from '../core/jobs/ids';
import { temporalConnectionOptions } from '../core/runtime/temporal-connection';

export interface TemporalGateway {
  readonly client: Client;
  readonly connection: Connection;
  readonly namespace: string;
  readonly queues: TaskQueues;
  /**
   * Throws 503 `UNAVAILABLE` at once when Temporal is known to be unreachable (its last probes failed or hung), so
   * a request is answered within seconds instead of waiting on a connection that is refused or hangs (a stopped
   * server). Called by the services right before they need Temporal, after the request was validated.
   */
  ensureReachable(): void;
  /** The probe's last word (no I/O): false while Temporal is found unreachable. Starts the probe if it is not running. */
  isReachable(): boolean;
  /**
   * Runs a call on Temporal that the probe's verdict can end: when Temporal is found unreachable while it is under
   * way, the call is aborted and 503 `UNAVAILABLE` thrown at once (a start to a stopped server hangs, and would be
   * answered only by its deadline). Throws at once when Temporal is already found unreachable.
   */
  whileReachable<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Resolves when Temporal is found unreachable (a synchronous wait answers 503 with its job id then). Aborting
   * `signal` forgets the wait (it then never resolves).
   */
  whenUnreachable(signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/**
 * How often the API probes Temporal, how long one probe may take, and for how long probes must have failed or hung
 * (since the first one that did not answer) before Temporal counts as unreachable: one slow answer under a second
 * never turns requests away; a stopped server is noticed within about `everyMs + downAfterMs`.
 */
export const TEMPORAL_PROBE = { everyMs: 500, timeoutMs: 1500, downAfterMs: 1000 } as const;

/** What `whileReachable`'s race answers when Temporal was found unreachable first. */
const FOUND_DOWN = Symbol('temporal found unreachable');

const unreachable = () =>
  new AppError('UNAVAILABLE', 'The job engine (Temporal) is unreachable; try again shortly.', {
    reason: 'temporal_unreachable',
  });

/**
 * Watches Temporal's reachability with a cheap call (`GetSystemInfo`) under a deadline, every `everyMs` while the
 * process uses the gateway: down once the probes have not answered for `downAfterMs` (a probe refused, failed, or
 * still in flight that long), up again at the first one that answers.
 */
class ReachabilityWatch {
  /** When the first probe that has not answered since the last answer started. */
  private failingSince: number | undefined;
  /** When the probe in flight started. */
  private inFlightSince: number | undefined;
  private down = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly connection: Connection) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.probe(), TEMPORAL_PROBE.everyMs);
    this.timer.unref();
    void this.probe();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  get reachable(): boolean {
    return !this.down;
  }

  /** Resolves when Temporal is found unreachable; aborting `signal` forgets the waiter (no waiter is kept past it). */
  whenDown(signal?: AbortSignal): Promise<void> {
    if (this.down) return Promise.resolve();
    return new Promise((resolve) => {
      if (signal?.aborted) return;
      const waiter = () => {
        signal?.removeEventListener('abort', forget);
        resolve();
      };
      const forget = () => this.waiters.delete(waiter);
      this.waiters.add(waiter);
      signal?.addEventListener('abort', forget, { once: true });
    });
  }

  private async probe(): Promise<void> {
    if (this.inFlightSince !== undefined) return;
    const at = Date.now();
    this.inFlightSince = at;
    // A probe that hangs is judged when it has hung for downAfterMs, not only when its deadline ends it.
    const due = at + TEMPORAL_PROBE.downAfterMs + 5;
    const judge = setTimeout(() => {
      this.forgiveStall(Date.now() - due);
      this.judge();
    }, TEMPORAL_PROBE.downAfterMs + 5);
    judge.unref();
    try {
      await this.connection.withDeadline(at + TEMPORAL_PROBE.timeoutMs, () =>
        this.connection.workflowService.getSystemInfo({}),
      );
      this.failingSince = undefined;
      this.down = false;
    } catch {
      this.failingSince ??= at;
    } finally {
      clearTimeout(judge);
      this.inFlightSince = undefined;
      this.judge();
    }
  }

  /**
   * A timer that fired `lateMs` late means this process stood still (a long GC, a busy machine's scheduler): that
   * time is not Temporal's silence, so the clocks of the probe in flight and of the failures move on by it. Without
   * this, one stall of this process over `downAfterMs` turned requests away with 503 while Temporal answered.
   */
  private forgiveStall(lateMs: number): void {
    if (lateMs < 100) return;
    if (this.inFlightSince !== undefined) this.inFlightSince += lateMs;
    if (this.failingSince !== undefined) this.failingSince += lateMs;
  }

  private judge(): void {
    const since = this.failingSince ?? this.inFlightSince;
    if (this.down || since === undefined || Date.now() - since < TEMPORAL_PROBE.downAfterMs) return;
    this.down = true;
    const waiting = [...this.waiters];
    this.waiters.clear();
    for (const w of waiting) w();
  }
}

/**
 * A lazy connection: the API starts (and answers `/api/health` with 503) while Temporal is down, and connects as
 * soon as it is reachable.
 */
export function createTemporalGateway(config: Config): TemporalGateway {
  // Short reconnect backoff: after Temporal comes back, the API notices within seconds, not minutes.
  const connection = Connection.lazy({
    ...temporalConnectionOptions(config),
    connectTimeout: '3s',
    channelArgs: { 'grpc.initial_reconnect_backoff_ms': 250, 'grpc.max_reconnect_backoff_ms': 2000 },
  });
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const watch = new ReachabilityWatch(connection);
  return {
    client,
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    queues: taskQueues(config.TASK_QUEUE_PREFIX),
    ensureReachable() {
      watch.start();
      if (!watch.reachable) throw unreachable();
    },
    isReachable() {
      watch.start();
      return watch.reachable;
    },
    async whileReachable<T>(fn: () => Promise<T>): Promise<T> {
      watch.start();
      if (!watch.reachable) throw unreachable();
      const stop = new AbortController();
      try {
        const outcome = await Promise.race([
          connection.withAbortSignal(stop.signal, fn),
          watch.whenDown(stop.signal).then(() => FOUND_DOWN),
        ]);
        if (outcome === FOUND_DOWN) throw unreachable();
        return outcome as T;
      } finally {
        // Ends the call when Temporal was found down (its rejection is the race's, already settled), and the wait.
        stop.abort();
      }
    },
    whenUnreachable(signal) {
      watch.start();
      return watch.whenDown(signal);
    },
    close: async () => {
      watch.stop();
      await connection.close();
    },
  };
}

export interface PollerInfo {
  taskQueue: string;
  kind: 'workflow' | 'activity';
  pollers: number;
}

/** Counts the pollers that Temporal saw on a task queue in the last minute or so. */
export async function describePollers(
  gw: TemporalGateway,
  taskQueue: string,
  kind: 'workflow' | 'activity',
): Promise<PollerInfo> {
  const res = await gw.connection.workflowService.describeTaskQueue({
    namespace: gw.namespace,
    taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType:
      kind === 'workflow'
        ? temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW
        : temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  });
  return { taskQueue, kind, pollers: res.pollers?.length ?? 0 };
}
