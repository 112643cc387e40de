import { createBatchActivities } from './batch.activities';
import { createJobActivities } from './jobs.activities';
import { createExternalOcrActivities } from './external-ocr.activities';
import { createImageActivities } from './image.activities';
import { createPdfActivities } from './pdf.activities';
import { createPingActivities } from './ping.activities';
import { createTransformerActivities } from './transformer.activities';
import type { ActivityDeps } from './deps';
import { createWebhookActivities } from './webhook.activities';

export type { ActivityDeps } from './deps';

/** Every activity, built from injected dependencies. Workflows import only its type, `Activities`. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createPingActivities(),
    ...createJobActivities(deps),
    ...createBatchActivities(deps),
    ...createTransformerActivities(deps),
    ...createWebhookActivities(deps),
    ...createPdfActivities(deps),
    ...createImageActivities(deps),
    ...createExternalOcrActivities(deps),
  };
}

/** The activities' type: the one declaration workflows proxy. */
export type Activities = ReturnType<typeof createActivities>;
