/**
 * Workflows of bench/fastpath-temporal.bench.ts (bundled by it): the answer of one small request as a workflow whose
 * only step is a local activity, started once per request (eager start) or hosted by one long-lived workflow that
 * takes each request as an update (update-with-start). Benchmarks only: nothing here is product code.
 */
import { condition, defineSignal, defineUpdate, proxyLocalActivities, setHandler } from '@temporalio/workflow';

/** One request of the bench: a cache hit (`key`) or a 1 KB HTML-to-Markdown transform (`html`). */
export interface AnswerRequest {
  kind: 'hit' | 'transform';
  key?: string;
  html?: string;
}

export interface AnswerActivities {
  answer(req: AnswerRequest): Promise<Record<string, unknown>>;
}

const { answer } = proxyLocalActivities<AnswerActivities>({ startToCloseTimeout: '10 seconds' });

/** One request, one workflow: the local activity's answer is the workflow's result. */
export async function answerWorkflow(req: AnswerRequest): Promise<Record<string, unknown>> {
  return answer(req);
}

export const answerUpdate = defineUpdate<Record<string, unknown>, [AnswerRequest]>('answer');
export const stopSignal = defineSignal('stop');

/** A long-lived workflow on the API's own worker: each request is an update answered by the local activity. */
export async function hostWorkflow(): Promise<void> {
  let stopped = false;
  setHandler(answerUpdate, (req) => answer(req));
  setHandler(stopSignal, () => void (stopped = true));
  await condition(() => stopped);
}
