import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';

/** What an operator does in the Temporal UI, through the client's own calls (the UI calls the same API). */

/** The event id of a workflow's first completed workflow task: where the UI's "reset to first task" points. */
export async function firstTask(client: Client, workflowId: string) {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return history.events!.find((x) => x.workflowTaskCompletedEventAttributes)!.eventId!;
}

/** Resets the workflow's current run to its first workflow task; answers the run ids before and after. */
export async function resetToFirstTask(
  client: Client,
  namespace: string,
  workflowId: string,
): Promise<{ oldRunId: string; newRunId: string }> {
  const { runId: oldRunId } = await client.workflow.getHandle(workflowId).describe();
  const r = await client.workflowService.resetWorkflowExecution({
    namespace,
    workflowExecution: { workflowId, runId: oldRunId },
    reason: 'operator test',
    workflowTaskFinishEventId: await firstTask(client, workflowId),
    requestId: randomUUID(),
  });
  return { oldRunId, newRunId: r.runId! };
}
