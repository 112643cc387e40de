import { allHandlersFinished, condition, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import { notifyEventsSignal, type JobLog, type LogLevel, type NotifierInput } from './definitions';
import { activitiesFor } from './routing';
import { WebhookSender } from './webhook-sender';

const steps = activitiesFor();

/** A notifier whose job neither ends nor sends anything for this long stops (a new event starts it again). */
const IDLE_LIMIT = '24 hours';
const HISTORY_LIMIT = 5000;

/**
 * The webhook notifier of one job (workflow id `notify-<job id>`): delivers the events its job's runs hand over
 * (`notifyEvents`), one at a time and in order, progress coalesced and throttled, each final event retried for
 * about an hour (contract §4), every attempt a line of the job's webhook log. It outlives the run that sent the
 * event, so delivery never holds a job: a failed job can be restarted at once, and its new run's events queue
 * behind the old failure's retries. It ends once it has delivered (or given up) a final event and nothing else is
 * queued; the next event starts it again with signal-with-start.
 */
export async function jobNotifierWorkflow(input: NotifierInput): Promise<void> {
  const lines: JobLog[] = [];
  const log = (level: LogLevel, message: string) => lines.push({ timestamp: new Date().toISOString(), level, message });
  const sender = new WebhookSender(input, log);
  let lastPhase: string | undefined;
  const push = (events: { phase: string }[] & Parameters<WebhookSender['push']>[0][]) => {
    for (const ev of events) {
      sender.push(ev);
      lastPhase = ev?.phase;
    }
  };
  push(input.queued ?? []);
  setHandler(notifyEventsSignal, ({ events }) => push(events));

  const finalSent = () => sender.idle && (lastPhase === 'completed' || lastPhase === 'failed');
  const tooLong = () => sender.idle && workflowInfo().historyLength > HISTORY_LIMIT;
  for (;;) {
    const woke = await condition(() => lines.length > 0 || finalSent() || tooLong(), IDLE_LIMIT);
    if (lines.length) await steps.appendWebhookLog({ jobId: input.jobId, lines: lines.splice(0) });
    // An event that arrived meanwhile (a restarted run's) keeps it going.
    if ((!woke && sender.idle) || finalSent()) {
      await condition(allHandlersFinished);
      if (lines.length === 0 && (finalSent() || (!woke && sender.idle))) return;
      continue;
    }
    if (tooLong()) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof jobNotifierWorkflow>({ ...input, queued: sender.queued() });
    }
  }
}
