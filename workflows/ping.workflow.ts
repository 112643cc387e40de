import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { PingInput, PingResult } from './definitions';

/**
 * Round trip through both task queues. The health endpoint's `?probe=workflow` runs it to prove that a worker
 * executes workflow tasks and activities on the io and media queues, not merely that it polls.
 */
export async function pingWorkflow(input: PingInput): Promise<PingResult> {
  const opts = { startToCloseTimeout: '10s', scheduleToCloseTimeout: '20s', retry: { maximumAttempts: 2 } } as const;
  const io = proxyActivities<Activities>({ ...opts, taskQueue: input.ioQueue });
  const media = proxyActivities<Activities>({ ...opts, taskQueue: input.mediaQueue });
  const [a, b] = await Promise.all([io.pingActivity(), media.pingActivity()]);
  return { io: a, media: b };
}
