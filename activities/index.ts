import { createAudioActivities } from './audio.activities';
import { createBatchActivities } from './batch.activities';
import { createJobActivities } from './jobs.activities';
import { createExternalOcrActivities } from './external-ocr.activities';
import { createImageActivities } from './image.activities';
import { createPdfActivities } from './pdf.activities';
import { createPingActivities } from './ping.activities';
import { createSessionReadActivities } from './sessions-read.activities';
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
    ...createImageActivities(deps),
    ...createExternalOcrActivities(deps),
    ...createVideoActivities(deps),
    ...createAudioActivities(deps),
    ...createSessionReadActivities(deps),
    ...createSessionActivities(deps),
  };
}

/** The activities' type: the one declaration workflows proxy. */
export type Activities = ReturnType<typeof createActivities>;

/**
 * The activities the `media` queue runs: CPU-bound engine work (poppler, tesseract, ffmpeg, the speech engine) with about one slot per core.
 * Every other activity runs on the `io` queue; the ping runs on both (the health probe crosses both queues).
 */
export const MEDIA_ACTIVITIES = [
  'pingActivity',
  'preparePdf',
  'readPdfText',
  'extractPdfPages',
  'renderPdfImages',
  'ocrImageBlob',
  'prepareAudio',
  'transcribeChunk',
  'extractVideoFrames',
  'renderSessionPages',
] as const;

/**
 * The activities the `llm` queue runs: the steps that may ask the language model, scheduled there by the workflows
 * when they will (a template given, a translation, a summary call). The io queue registers them too: the same step
 * without a model call (no template) stays there, and runs recorded before the llm queue replay onto io.
 */
export const LLM_ACTIVITIES = [
  'pingActivity',
  'finishPdf',
  'finishAudio',
  'finishVideo',
  'finishImageOcr',
  'fillSessionTemplate',
  'summaryCall',
  'runTransformerStep',
] as const;

/** The activities one queue's worker registers, so a worker never runs another queue's work. */
export function activitiesFor(queue: 'io' | 'media' | 'llm', all: Activities): Partial<Activities> {
  const media = new Set<string>(MEDIA_ACTIVITIES);
  const llm = new Set<string>(LLM_ACTIVITIES);
  const keep = (name: string) =>
    queue === 'media' ? media.has(name) : queue === 'llm' ? llm.has(name) : !media.has(name) || name === 'pingActivity';
  return Object.fromEntries(Object.entries(all).filter(([name]) => keep(name)));
}
