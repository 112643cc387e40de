import { readBlobJson, writeBlobJson, type BlobStore } from './blob-store';
import { redactParameters } from '../jobs/job-params';
import { jobInternalKey } from './records';

/** Where a job's webhook token is kept: in the blob store, never in a workflow's input or history. */
const jobWebhookSecretKey = (jobId: string): string => jobInternalKey(jobId, 'webhook-secret.json');

interface Webhook {
  url: string;
  token?: string;
  jobId?: string;
  /** The token is in the blob store under {@link jobWebhookSecretKey} (set by {@link sealWebhook}). */
  sealed?: boolean;
}

/**
 * Keeps a job's webhook token out of Temporal: written to the job's internal blob, replaced in the webhook config by
 * `sealed: true` and in the parameters by `[redacted]`, so neither the workflow's start event, its history, the
 * batch manifest slices nor the Temporal UI show it (anyone with read access to the namespace would see it there).
 */
export async function sealWebhook<W extends Webhook | undefined, P extends Record<string, unknown>>(
  store: BlobStore,
  jobId: string,
  webhook: W,
  parameters: P,
): Promise<{ webhook: W; parameters: P }> {
  const token = webhook?.token ?? ((parameters.webhook as Webhook | undefined)?.token || undefined);
  if (!webhook || !token) return { webhook, parameters: redactParameters(parameters) };
  await writeBlobJson(store, jobWebhookSecretKey(jobId), { token });
  const { token: _t, ...rest } = webhook;
  void _t;
  return { webhook: { ...rest, sealed: true } as W, parameters: redactParameters(parameters) };
}

/** The token to sign a delivery with: in the config (jobs started before sealing) or in the job's blob. */
export async function webhookToken(store: BlobStore, jobId: string, webhook: Webhook): Promise<string | undefined> {
  if (webhook.token) return webhook.token;
  if (!webhook.sealed) return undefined;
  return (await readBlobJson<{ token: string }>(store, jobWebhookSecretKey(jobId))).token;
}
