import { sessionParams } from '../../core/jobs/job-params';
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

const sessionOutput = z.object({
  markdown_file: z.string().openapi({
    description: 'Downloads at GET /api/event-job/files/{path}',
    example: 'jobs/<job_id>/out/sessions/FOSDEM_202026/de/Geospatial/open-maps.md',
  }),
  markdown_content: z.string(),
  attachments: z
    .array(z.string())
    .openapi({ description: 'Page images of the attachments (PNG), each downloadable through the files route' }),
  video_transcript: z.string(),
  attachments_text: z.string(),
  target_dir: z.string().openapi({ description: 'The folder of the Markdown file (GET on the files route lists it)' }),
  archive_file: z
    .string()
    .nullable()
    .openapi({ description: 'ZIP of the Markdown and its assets, with create_archive' }),
  topic: z.string().openapi({ description: 'From the filled template (frontmatter `topic`); empty when it has none' }),
  tags: z.array(z.string()),
});

/** `data` of POST /api/session/process (and of the completion webhook of /process-async). */
export const sessionResult = envelope(
  z.object({
    input: z.record(z.string(), z.unknown()).openapi({ description: 'The request as processed (with defaults)' }),
    output: sessionOutput,
    markdown_file: z.string(),
    attachments: z.array(z.string()),
  }),
).openapi('SessionResult');

export const sessionAccepted = envelope(
  z.object({ job_id: z.string(), status: jobStatus, message: z.string() }),
).openapi('SessionAccepted');

export const cachedSessions = envelope(
  z.object({
    sessions: z.array(
      z
        .object({ event: z.string(), session: z.string(), url: z.string(), cached_at: z.string() })
        .passthrough()
        .openapi({ description: 'A processed session (spec §2 Cached session entry), newest first' }),
    ),
  }),
).openapi('CachedSessions');
