import { readBlobJson } from '../core/blob-store';
import { resultData } from '../core/job-results';
import { jobResultsKey } from '../core/records';
import { countWebhookAttempt } from '../core/metrics';
import { completedBody, failedBody, progressBody } from '../core/webhooks';
import { deliverWebhook } from '../providers/webhook/deliver';
import type { JobEvent, WebhookConfig } from '../workflows/definitions';
import type { ActivityDeps } from './deps';

export function createWebhookActivities(deps: ActivityDeps) {
  const { store, config } = deps;
  const policy = { allowPrivate: config.loopbackOnly || config.ALLOW_PRIVATE_URLS };
  return {
    /**
     * One delivery attempt of one event (the job workflow schedules retries, so each attempt is a log line).
     * The signed timestamp is taken in the provider, fresh at each attempt; a `timestamp` in the input (sent by
     * workflows started before that change) is ignored. Never throws for a failed delivery: the outcome says whether
     * to retry.
     */
    async deliverWebhook(input: { jobId: string; webhook: WebhookConfig; event: JobEvent; webhookId: string; timestamp?: unknown }) {
      const { jobId, webhook, event } = input;
      const clientJobId = webhook.jobId;
      let body: unknown;
      if (event.phase === 'processing') body = progressBody(jobId, clientJobId, event.progress, event.message);
      else if (event.phase === 'completed') {
        // The synchronous endpoint's `data`: the results without the job fields (spec §6).
        const data = (await store.stat(jobResultsKey(jobId))) ? resultData(await readBlobJson(store, jobResultsKey(jobId))) : {};
        body = completedBody(jobId, clientJobId, event.message, data);
      } else body = failedBody(jobId, clientJobId, event.message, event.error);
      const result = await deliverWebhook({
        url: webhook.url,
        body,
        id: input.webhookId,
        token: webhook.token,
        signingSecret: config.WEBHOOK_SIGNING_SECRET,
        policy,
      });
      countWebhookAttempt(event.phase, result.outcome);
      return result;
    },
  };
}
