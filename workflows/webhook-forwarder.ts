import { CancellationScope, condition, getExternalWorkflowHandle } from '@temporalio/workflow';
import { notifierWorkflowId } from '../core/jobs/webhooks';
import { notifyEventsSignal, type JobEvent, type JobInput } from './definitions';
import { activitiesFor } from './routing';

const remote = activitiesFor();

/** Progress is handed to the notifier at most this often; a final event goes at once. */
const PROGRESS_INTERVAL_MS = 1000;

/**
 * The job run's side of webhook delivery: hands events to the job's notifier (`jobNotifierWorkflow`) instead of
 * delivering them itself, so the run ends without waiting for a receiver. Progress is coalesced (the newest
 * supersedes older ones) and handed over at most once a second; a final event drops the progress queued before it.
 * One signal per hand-over (two history events) instead of an activity and a timer per delivery attempt. When the
 * notifier is not running (the first event, or it ended), an activity starts it with signal-with-start.
 */
export class WebhookForwarder {
  private readonly outbox: JobEvent[] = [];
  private closed = false;
  private readonly done: Promise<void>;

  constructor(private readonly input: Pick<JobInput, 'jobId' | 'webhook' | 'webhookRetryScale'>) {
    this.done = input.webhook ? CancellationScope.nonCancellable(() => this.run()) : Promise.resolve();
  }

  push(ev: JobEvent | null): void {
    if (ev && this.input.webhook) this.outbox.push(ev);
  }

  /** No more events: resolves once every queued event is in the notifier's hands. */
  finish(): Promise<void> {
    this.closed = true;
    return this.done;
  }

  private async run(): Promise<void> {
    let lastSentAt = Number.NEGATIVE_INFINITY;
    const hasFinal = () => this.outbox.some((e) => e.phase !== 'processing');
    for (;;) {
      await condition(() => this.outbox.length > 0 || this.closed);
      if (this.outbox.length === 0) return;
      const wait = lastSentAt + PROGRESS_INTERVAL_MS - Date.now();
      if (wait > 0 && !hasFinal() && !this.closed) await condition(() => hasFinal() || this.closed, wait);
      const events = this.outbox.splice(0);
      const finalAt = events.findIndex((e) => e.phase !== 'processing');
      const send = finalAt >= 0 ? events.slice(finalAt) : [events[events.length - 1]];
      lastSentAt = Date.now();
      await this.send(send);
    }
  }

  private async send(events: JobEvent[]): Promise<void> {
    const { jobId, webhook, webhookRetryScale } = this.input;
    try {
      await getExternalWorkflowHandle(notifierWorkflowId(jobId)).signal(notifyEventsSignal, { events });
    } catch {
      await remote.startNotifier({
        jobId,
        webhook: webhook!,
        ...(webhookRetryScale !== undefined ? { webhookRetryScale } : {}),
        events,
      });
    }
  }
}
