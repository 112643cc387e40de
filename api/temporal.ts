import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';

const { temporal } = proto;
import type { Config } from '../core/config';
import { taskQueues, type TaskQueues } from '../core/ids';
import { temporalConnectionOptions } from '../core/temporal-connection';

export interface TemporalGateway {
  readonly client: Client;
  readonly connection: Connection;
  readonly namespace: string;
  readonly queues: TaskQueues;
  close(): Promise<void>;
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
  return {
    client,
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    queues: taskQueues(config.TASK_QUEUE_PREFIX),
    close: () => connection.close(),
  };
}

export interface PollerInfo {
  taskQueue: string;
  kind: 'workflow' | 'activity';
  pollers: number;
}

/** Counts the pollers that Temporal saw on a task queue in the last minute or so. */
export async function describePollers(gw: TemporalGateway, taskQueue: string, kind: 'workflow' | 'activity'): Promise<PollerInfo> {
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
