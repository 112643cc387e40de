import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';

const { temporal } = proto;
import type { Config } from '../core/config';
import { AppError } from '../core/errors';
import { taskQueues, type TaskQueues } from '../core/ids';
import { temporalConnectionOptions } from '../core/temporal-connection';

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
  /** Resolves when Temporal is found unreachable (a synchronous wait answers 503 with its job id then). */
  whenUnreachable(): Promise<void>;
  close(): Promise<void>;
}

/** How often the API probes Temporal, how long a probe may take, and how many failed probes mark it down. */
export const TEMPORAL_PROBE = { everyMs: 1000, timeoutMs: 1500, failuresToDown: 2 } as const;

/**
 * Watches Temporal's reachability with a cheap call (`GetSystemInfo`) under a deadline, once a second while the
 * process uses the gateway: down after two failed (or hung) probes, up again at the first one that answers.
 */
class ReachabilityWatch {
  private failures = 0;
  private down = false;
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private waiters: (() => void)[] = [];

  constructor(private readonly connection: Connection) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.probe(), TEMPORAL_PROBE.everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  get reachable(): boolean {
    return !this.down;
  }

  whenDown(): Promise<void> {
    if (this.down) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private async probe(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      await this.connection.withDeadline(Date.now() + TEMPORAL_PROBE.timeoutMs, () =>
        this.connection.workflowService.getSystemInfo({}),
      );
      this.failures = 0;
      this.down = false;
    } catch {
      this.failures += 1;
      if (this.failures >= TEMPORAL_PROBE.failuresToDown && !this.down) {
        this.down = true;
        for (const w of this.waiters.splice(0)) w();
      }
    } finally {
      this.busy = false;
    }
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
      if (!watch.reachable) {
        throw new AppError('UNAVAILABLE', 'The job engine (Temporal) is unreachable; try again shortly.', {
          reason: 'temporal_unreachable',
        });
      }
    },
    whenUnreachable() {
      watch.start();
      return watch.whenDown();
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
