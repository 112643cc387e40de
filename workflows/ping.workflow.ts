import type { PingInput, PingResult } from './definitions';
import { activitiesFor } from './routing';

/**
 * Round trip through both task queues. The health endpoint's `?probe=workflow` runs it to prove that a worker
 * executes workflow tasks and activities on the io and media queues, not merely that it polls.
 */
export async function pingWorkflow(input: PingInput): Promise<PingResult> {
  const io = activitiesFor({ taskQueue: input.ioQueue });
  const media = activitiesFor({ taskQueue: input.mediaQueue });
  const [a, b] = await Promise.all([io.pingActivity(), media.pingActivity()]);
  return { io: a, media: b };
}
