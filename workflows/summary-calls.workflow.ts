import { MODEL_CALLS_PER_JOB } from '../core/jobs/fanout';
import type { SummaryParams } from '../core/jobs/job-params';
import { limiter } from './fanout';
import { activitiesFor, modelRoute } from './routing';

/** One model call of a summary job: the texts `inputs` (pieces or earlier outputs) to the text `output`. */
export interface SummaryCall {
  output: string;
  inputs: string[];
  kind: string;
}

/** A slice of a summary job's model calls, all independent of each other (`summaryCallsWorkflow`). */
export interface SummaryCallsInput {
  jobId: string;
  parameters: SummaryParams;
  calls: SummaryCall[];
}

/**
 * A slice of one summary job's model calls (workflows/pipelines/summary-slices.ts), as a child of the job's
 * workflow: the calls of a 1,000-session event would otherwise all be in the job's own history (about 4,500 events
 * and 2.4 MB for 1,000 sessions, growing with the sessions towards Temporal's 51,200 events). Each call is its own
 * activity on the llm queue, at most `MODEL_CALLS_PER_JOB` in flight, as the job ran them itself; answered calls are
 * journaled under the job (`summaryCall` reuses an output already written), so a retried or restarted slice repeats
 * no call that answered. Answers each output's length, in the order of the calls.
 */
export async function summaryCallsWorkflow(input: SummaryCallsInput): Promise<number[]> {
  const { jobId, parameters } = input;
  const gate = limiter(MODEL_CALLS_PER_JOB);
  const withModel = activitiesFor({ jobId, model: modelRoute(true) });
  return Promise.all(
    input.calls.map((c) => gate.run(async () => (await withModel.summaryCall({ jobId, parameters, ...c })).chars)),
  );
}
