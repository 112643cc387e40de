import { sessionPath, type SessionRecord } from '../../core/stores/session-store';

/** A record with its Markdown written where the session pipeline writes it. */
export function sessionRecord(
  over: Partial<SessionRecord> & Pick<SessionRecord, 'event' | 'track' | 'session'>,
): SessionRecord {
  const language = over.language ?? 'de';
  const filename = over.filename ?? over.session;
  return {
    language,
    filename,
    topic: '',
    tags: [],
    markdown_key: sessionPath(over.event, language, over.track, filename),
    metadata: {},
    source: { url: `https://example.org/${encodeURIComponent(over.session)}` },
    job_id: 'job-test',
    processed_at: '2025-02-01T10:00:00.000Z',
    ...over,
  };
}
