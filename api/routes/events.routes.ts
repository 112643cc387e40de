import { AppError } from '../../core/errors';
import { listSessionEntries } from '../../core/stores/session-store';
import { envelope, errorResponse } from '../openapi';
import type { ApiRouter } from '../api-router';
import { eventParam, eventSummary, optionalSummaryBody } from '../schemas/summaries.schemas';
import { runSummary, type SummaryDeps } from '../services/summaries';
import { summaryErrors } from './tracks.routes';

/** Events (spec §4.9): an event's summary over its tracks, from the session store. */
export function eventRoutes(api: ApiRouter, deps: SummaryDeps): void {
  api.add({
    method: 'post',
    path: '/api/events/{event_name}/summary',
    summary: 'Summarise an event, track by track',
    tags: ['Events'],
    description:
      'Every session of the event is summarised (one model call per piece of at most SUMMARY_CHUNK_CHARS), then each track from its sessions, then the event ' +
      'from its tracks; the template (default `EventSummary`) shapes the event summary. Runs as a job; waits up to ' +
      'MEDIA_SYNC_WAIT_MS, then 504 with `details.job_id`.',
    params: eventParam,
    body: optionalSummaryBody,
    responses: {
      200: { description: 'The summary', content: { 'application/json': { schema: envelope(eventSummary) } } },
      404: errorResponse('Unknown event or template'),
      ...summaryErrors,
    },
    handler: async (ctx, { params, body }) => {
      if (!(await listSessionEntries(deps.jobs.store, { event: params.event_name })).length) {
        throw new AppError('EVENT_NOT_FOUND', `No sessions of the event ${JSON.stringify(params.event_name)}.`, {
          event: params.event_name,
        });
      }
      await runSummary(ctx, deps, 'event_summary', { event: params.event_name, ...body });
    },
  });
}
