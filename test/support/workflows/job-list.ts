/** The jobs a Temporal server knows, listed from its visibility store (a dev server of the test's own). */
import { Client, Connection } from '@temporalio/client';
import { waitFor } from '../wait';

/**
 * The ids of every job workflow on the server at `address`. Visibility catches up with the starts within a few
 * seconds: the list is read until it holds `atLeast` ids (or for up to 30 s), then once more.
 */
export async function listJobWorkflows(address: string, atLeast = 0): Promise<string[]> {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection });
    const list = async () => {
      const ids: string[] = [];
      for await (const w of client.workflow.list({ query: `WorkflowType = 'jobWorkflow'` })) ids.push(w.workflowId);
      return ids;
    };
    if (atLeast > 0)
      await waitFor(
        async () => ((await list()).length >= atLeast ? true : undefined),
        'the jobs listed',
        30_000,
        500,
      ).catch(() => undefined);
    return await list();
  } finally {
    await connection.close();
  }
}
