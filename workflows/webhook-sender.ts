import { CancellationScope, condition, sleep } from '@temporalio/workflow';
import { DEFAULT_WEBHOOK_ATTEMPTS, retryDelayMs } from '../core/jobs/webhooks';
import type { JobEvent, JobInput, LogLevel } from './definitions';
import { activitiesFor } from './routing';

const hooks = activitiesFor();

/**
 * Delivers a job's events to its webhook one at a time, in order: progress is coalesced (newer supersedes older)
 * and throttled to one a second, a final event drops any progress still queued, and every attempt is a log line.
 * It runs in a non-cancellable scope: a job cancelled from the Temporal UI still reports its end.
 */
export class WebhookSender {
  private readonly outbox: JobEvent[] = [];
  private closed = false;
  private delivering = false;
  private readonly done: Promise<void>;

  constructor(
    private readonly input: Pick<JobInput, 'jobId' | 'webhook' | 'webhookRetryScale'>,
    private readonly log: (level: LogLevel, message: string) => void,
  ) {
    this.done = input.webhook ? CancellationScope.nonCancellable(() => this.run()) : Promise.resolve();
  }

  push(ev: JobEvent | null): void {
    if (ev && this.input.webhook) this.outbox.push(ev);
  }

  /** Nothing queued and nothing being delivered. */
  get idle(): boolean {
    return this.outbox.length === 0 && !this.delivering;
  }

  /** The events still queued (carried over continue-as-new by the notifier). */
  queued(): JobEvent[] {
    return [...this.outbox];
  }

  /** No more events: resolves once the queued ones are delivered (or given up). */
  finish(): Promise<void> {
    this.closed = true;
    return this.done;
  }

  private async run(): Promise<void> {
    let lastProgressAt = 0;
    for (;;) {
      await condition(() => this.outbox.length > 0 || this.closed);
      if (this.outbox.length === 0) return;
      this.delivering = true;
      let ev = this.outbox.shift()!;
      if (ev.phase === 'processing') {
        const wait = lastProgressAt + 1000 - Date.now();
        if (wait > 0) await sleep(wait);
        while (this.outbox.length && ev.phase === 'processing') ev = this.outbox.shift()!;
      }
      if (ev.phase === 'processing') lastProgressAt = Date.now();
      await this.deliver(ev);
      this.delivering = false;
    }
  }

  private async deliver(ev: JobEvent): Promise<void> {
    const { jobId, webhook } = this.input;
    const maxAttempts = ev.phase === 'processing' ? 2 : DEFAULT_WEBHOOK_ATTEMPTS;
    // A tagged event (a closeout's, a reset run's) has an id of its own beside the job's numbered ones.
    const webhookId = `evt_${jobId}_${ev.id}${ev.tag ? `_${ev.tag}` : ''}`;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      // The activity signs with a timestamp of its own, fresh per attempt (receivers reject stale ones).
      const r = await hooks.deliverWebhook({ jobId, webhook: webhook!, event: ev, webhookId }).catch((e: unknown) => ({
        outcome: 'retry' as const,
        status: undefined,
        error: String((e as Error)?.message ?? e),
        retryAfter: null,
        durationMs: 0,
      }));
      const what = r.status ? `HTTP ${r.status}` : (r.error ?? 'no answer');
      if (r.outcome === 'delivered') {
        this.log('info', `Webhook ${ev.phase} delivered (attempt ${attempt}, ${what}, ${r.durationMs} ms)`);
        return;
      }
      if (r.outcome === 'give-up') {
        this.log('warning', `Webhook ${ev.phase} not delivered: ${what} (attempt ${attempt}, not retried)`);
        return;
      }
      const superseded = ev.phase === 'processing' && this.outbox.length > 0;
      if (attempt === maxAttempts || superseded) {
        this.log('warning', `Webhook ${ev.phase} failed: ${what} (attempt ${attempt}, giving up)`);
        return;
      }
      const delay = Math.max(
        1,
        Math.round(retryDelayMs(attempt, r.retryAfter, Date.now()) * (this.input.webhookRetryScale ?? 1)),
      );
      this.log(
        'warning',
        `Webhook ${ev.phase} failed: ${what} (attempt ${attempt}); retrying in ${Math.round(delay / 1000)} s`,
      );
      await sleep(delay);
    }
  }
}
