import { sessionParams } from '../../core/jobs/job-params';
import { sessionResultData } from '../../core/results/result-schemas-text';
import { envelope, z } from '../openapi';
import { jobStatus } from './jobs.schemas';

/** Schemas of the /api/session routes (spec §4.6). The body is the `session` job's parameters (core/jobs/job-params.ts). */

/**
 * POST /api/session/process and /process-async: required event, session, url, filename, track (400 names each missing
 * one).
 */
export const sessionBody = sessionParams.openapi('SessionRequest', {
  example: {
    event: 'FOSDEM 2026',
    session: 'Open maps for everyone',
    url: 'https://example.org/2026/schedule/event/open-maps/',
    filename: 'open-maps',
    track: 'Geospatial',
    day: '2026-02-01',
    starttime: '10:00',
    endtime: '10:30',
    speakers: ['Ada Lovelace'],
    video_url: 'https://example.org/2026/video/open-maps.mp4',
    attachments_url: 'https://example.org/2026/schedule/event/open-maps/attachments/',
    source_language: 'en',
    target_language: 'de',
  },
});

/** `data` of POST /api/session/process (and of the completion webhook of /process-async): the session job's result. */
export const sessionResult = envelope(sessionResultData).openapi('SessionResult');

export const sessionAccepted = envelope(
  z.object({ job_id: z.string(), status: jobStatus, message: z.string() }),
).openapi('SessionAccepted');

export const cachedSessions = envelope(
  z.object({
    sessions: z.array(
      z
        .object({
          event: z.string(),
          session: z.string(),
          url: z.string(),
          cached_at: z.string(),
          // Beyond the spec's entry: where the session was written (activities/session-output.ts `recordSession`).
          track: z.string().optional(),
          language: z.string().optional(),
          job_id: z.string().optional(),
          markdown_file: z.string().optional(),
        })
        .openapi({ description: 'A processed session (spec §2 Cached session entry), newest first' }),
    ),
  }),
).openapi('CachedSessions');
