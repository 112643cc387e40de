import { BlobNotFoundError, readBlobJson, writeBlobJson } from '../core/stores/blob-store';
import { resultData } from '../core/results/job-results';
import { jobResultsKey, jobWebhookLogKey } from '../core/stores/records';
import { countWebhookAttempt } from '../core/runtime/metrics';
import { completedBody, failedBody, notifierWorkflowId, progressBody } from '../core/jobs/webhooks';
import { webhookToken } from '../core/stores/webhook-secret';
import { deliverWebhook } from '../providers/webhook/deliver';
import {
  NOTIFIER_WORKFLOW_TYPE,
  notifyEventsSignal,
  type JobEvent,
  type JobLog,
  type NotifierInput,
  type WebhookConfig,
} from '../workflows/definitions';
import type { ActivityDeps } from './deps';
import { outboundPolicy } from '../providers/http/ssrf';

/** The longest webhook log kept per job (oldest lines dropped first). */
const MAX_WEBHOOK_LOG = 500;

export function createWebhookActivities(deps: Pick<ActivityDeps, 'store' | 'config' | 'queues' | 'temporalClient'>) {
  const { store, config } = deps;
  const policy = outboundPolicy(config);
  return {
    /**
     * Hands events to the job's notifier, starting it when it is not running (signal-with-start: the events are
     * never lost between a notifier that just ended and a new one). Used by a job run when its direct signal to the
     * notifier found none.
     */
    async startNotifier({ events, ...input }: NotifierInput & { events: JobEvent[] }): Promise<void> {
      const client = deps.temporalClient;
      if (!client) throw new Error('startNotifier needs a Temporal client');
      await client.workflow.signalWithStart(NOTIFIER_WORKFLOW_TYPE, {
        workflowId: notifierWorkflowId(input.jobId),
        taskQueue: deps.queues.io,
        args: [input],
        signal: notifyEventsSignal,
        signalArgs: [{ events }],
        memo: { summary: `webhook notifier of ${input.jobId}` },
      });
    },

    /** Appends delivery log lines to the job's webhook log (its notifier is the only writer). */
    async appendWebhookLog({ jobId, lines }: { jobId: string; lines: JobLog[] }): Promise<void> {
      const key = jobWebhookLogKey(jobId);
      const before = await readBlobJson<JobLog[]>(store, key).catch((e: unknown) => {
        if (e instanceof BlobNotFoundError) return [];
        throw e;
      });
      // A local activity can run twice for one call (its workflow task retried): lines already there are skipped
      // (a workflow's timestamps are the same on every replay).
      const seen = new Set(before.map((l) => `${l.timestamp}\0${l.message}`));
      const fresh = lines.filter((l) => !seen.has(`${l.timestamp}\0${l.message}`));
      if (fresh.length) await writeBlobJson(store, key, [...before, ...fresh].slice(-MAX_WEBHOOK_LOG));
    },

    /**
     * One delivery attempt of one event (the job workflow schedules retries, so each attempt is a log line).
     * The signed timestamp is taken in the provider, fresh at each attempt; a `timestamp` in the input (sent by
     * workflows started before that change) is ignored. Never throws for a failed delivery: the outcome says whether
     * to retry.
     */
    async deliverWebhook(input: {
      jobId: string;
      webhook: WebhookConfig;
      event: JobEvent;
      webhookId: string;
      timestamp?: unknown;
    }) {
      const { jobId, webhook, event } = input;
      const clientJobId = webhook.jobId;
      let body: unknown;
      if (event.phase === 'processing') body = progressBody(jobId, clientJobId, event.progress, event.message);
      else if (event.phase === 'completed') {
        // The synchronous endpoint's `data`: the results without the job fields (spec §6).
        const data = (await store.stat(jobResultsKey(jobId)))
          ? resultData(await readBlobJson(store, jobResultsKey(jobId)))
          : {};
        body = completedBody(jobId, clientJobId, event.message, data);
      } else body = failedBody(jobId, clientJobId, event.message, event.error);
      const result = await deliverWebhook({
        url: webhook.url,
        body,
        id: input.webhookId,
        token: await webhookToken(store, jobId, webhook),
        signingSecret: config.WEBHOOK_SIGNING_SECRET,
        policy,
      });
      countWebhookAttempt(event.phase, result.outcome);
      return result;
    },
  };
}
