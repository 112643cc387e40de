import { createAudioActivities } from './audio.activities';
import { createBatchActivities } from './batch.activities';
import { createDocumentActivities } from './document.activities';
import { createJobActivities } from './jobs.activities';
import { createExternalOcrActivities } from './external-ocr.activities';
import { createImageActivities } from './image.activities';
import { createPdfActivities } from './pdf.activities';
import { createPingActivities } from './ping.activities';
import { createSummaryActivities } from './summary.activities';
import { createSessionActivities } from './session.activities';
import { createTransformerActivities } from './transformer.activities';
import { createVideoActivities } from './video.activities';
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
    ...createDocumentActivities(deps),
    ...createImageActivities(deps),
    ...createExternalOcrActivities(deps),
    ...createVideoActivities(deps),
    ...createAudioActivities(deps),
    ...createSummaryActivities(deps),
    ...createSessionActivities(deps),
  };
}

/**
 * The activities' type: the one declaration workflows proxy. Which queue's worker registers each one, and with which
 * options workflows schedule it: workflows/activity-table.ts.
 */
export type Activities = ReturnType<typeof createActivities>;
