import { AppError } from '../../core/errors';
import { countSessions, listSessionEntries } from '../../core/stores/session-store';
import { envelope, errorResponse, jsonResponse } from '../openapi';
import type { ApiRouter } from '../api-router';
import { optionalSummaryBody, trackList, trackParam, trackSummaries, trackSummary } from '../schemas/summaries.schemas';
import { runSummary, type SummaryDeps } from '../services/summaries';
import { modelErrors } from './transformer.routes';

export const summaryErrors = {
  ...modelErrors,
  504: errorResponse('Still running past MEDIA_SYNC_WAIT_MS; poll details.job_id'),
};

/** 404 TRACK_NOT_FOUND unless the session store holds a session of the track. */
async function requireTrack(deps: SummaryDeps, track: string): Promise<void> {
  if (!(await listSessionEntries(deps.jobs.store, { track })).length) {
    throw new AppError('TRACK_NOT_FOUND', `No sessions in the track ${JSON.stringify(track)}.`, { track });
  }
}

/** Tracks (spec §4.8): read from the session store; summaries are map-reduce jobs waited for. */
export function trackRoutes(api: ApiRouter, deps: SummaryDeps): void {
  const tags = ['Tracks'];
  api.add({
    method: 'get',
    path: '/api/tracks/available',
    summary: 'The tracks of the processed sessions',
    tags,
    description:
      'Every track name in the session store with its number of sessions (a session written in several languages ' +
      'counts once).',
    responses: { 200: jsonResponse(trackList, 'Tracks') },
    handler: async (ctx) => {
      ctx.body = {
        status: 'success',
        data: { tracks: countSessions(await listSessionEntries(deps.jobs.store), 'track') },
      };
    },
  });

  const summaryDescription =
    'Every session of the track (in target_language where it was written in it) is summarised, one model call per piece of at most SUMMARY_CHUNK_CHARS, ' +
    'and the summaries merged within the same bound. Runs as a job; waits up to MEDIA_SYNC_WAIT_MS, then 504 with ' +
    '`details.job_id`.';
  api.add({
    method: 'post',
    path: '/api/tracks/{track_name}/summary',
    summary: 'Summarise a track and its sessions',
    tags,
    description: `${summaryDescription} The template (default TrackSummary) shapes the track summary.`,
    params: trackParam,
    body: optionalSummaryBody,
    responses: {
      200: { description: 'The summary', content: { 'application/json': { schema: envelope(trackSummary) } } },
      404: errorResponse('Unknown track or template'),
      ...summaryErrors,
    },
    handler: async (ctx, { params, body }) => {
      await requireTrack(deps, params.track_name);
      await runSummary(ctx, deps, 'track_summary', { track: params.track_name, mode: 'summary', ...body });
    },
  });

  api.add({
    method: 'post',
    path: '/api/tracks/{track_name}/summarize_all',
    summary: 'Summarise every session of a track',
    tags,
    description: summaryDescription,
    params: trackParam,
    body: optionalSummaryBody,
    responses: {
      200: { description: 'The summaries', content: { 'application/json': { schema: envelope(trackSummaries) } } },
      404: errorResponse('Unknown track or template'),
      ...summaryErrors,
    },
    handler: async (ctx, { params, body }) => {
      await requireTrack(deps, params.track_name);
      await runSummary(ctx, deps, 'track_summary', { track: params.track_name, mode: 'summarize_all', ...body });
    },
  });
}
