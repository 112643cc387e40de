import { createHash } from 'node:crypto';
import { readBlobBuffer, readBlobJson, writeBlobJson, type BlobStore } from './blob-store';
import { AppError } from '../errors';
import { mapPool } from '../runtime/pool';

/**
 * The session store (issue #15): one record per processed session, on the blob store, shared by every API replica
 * and worker with no in-process state.
 *
 * Layout (every name sanitised, then encoded into key-safe characters by `keySegment`):
 * - `sessions/<event>/<lang>/<track>/<filename>.md`, assets beside it (written by the session pipeline);
 * - `session-index/<event>/<lang>/<track>/<filename>.<stamp>.<topic>`: the record as JSON. The listing fields are
 *   the key itself, so listing by event, track, topic or language reads key names only (one LIST per 1,000 keys
 *   on S3, one readdir per track locally) and reads record bodies only for the sessions asked for;
 * - `session-cache/<event>/<hash of session and url>.json`: the cached session entries.
 *
 * No read-modify-write: a writer puts its own key (stamp = processed_at), then deletes the older keys of the same
 * session it sees. Two writers racing may both survive for a moment; readers keep the newest key per session.
 */
export interface SessionRecord {
  /** As given in the request (display names). */
  event: string;
  track: string;
  session: string;
  /** target_language of the run. */
  language: string;
  /** The sanitised file name (without .md). */
  filename: string;
  /** From the filled template's frontmatter ('' / [] if none). */
  topic: string;
  tags: string[];
  /** Blob key of the written .md (jobs/<id>/... or sessions/...). */
  markdown_key: string;
  /** day, starttime, endtime, speakers, speakers_url, ... */
  metadata: Record<string, unknown>;
  source: { url: string; video_url?: string; attachments_url?: string };
  job_id: string;
  /** ISO time. */
  processed_at: string;
}

interface CachedSessionEntry {
  event: string;
  session: string;
  url: string;
  cached_at: string;
  [k: string]: unknown;
}

/** What a listing knows from key names alone (sanitised names). */
interface SessionEntry {
  event: string;
  language: string;
  track: string;
  filename: string;
  topic: string;
  /** The record's blob key. */
  key: string;
}

export interface SessionFilter {
  event?: string;
  track?: string;
  topic?: string;
  language?: string;
}

/** Longest sanitised name, in UTF-8 bytes: five encoded names and a stamp stay within the 512-character key limit. */
export const MAX_NAME_BYTES = 80;
const INDEX = 'session-index/';
const CACHE = 'session-cache/';
const READ_CONCURRENCY = 32;

/**
 * A name made safe for a path segment, unicode kept: NFC; control, format and surrogate characters removed; path
 * separators and characters Windows refuses become '-'; whitespace collapsed; no '..', no leading or trailing dot;
 * at most MAX_NAME_BYTES UTF-8 bytes (cut at a character). A name with nothing left is a 400 naming the field.
 */
export function sanitizeName(name: string, field = 'name'): string {
  let s = String(name)
    .normalize('NFC')
    .replace(/\s+/gu, ' ')
    .replace(/[\p{Cc}\p{Cf}\p{Cs}\p{Co}]/gu, '')
    .replace(/[/\\:*?"<>|]/g, '-')
    .replace(/\.{2,}/g, '.')
    .replace(/^[\s.]+|[\s.]+$/gu, '');
  if (Buffer.byteLength(s) > MAX_NAME_BYTES) {
    let out = '';
    for (const ch of s) {
      if (Buffer.byteLength(out + ch) > MAX_NAME_BYTES) break;
      out += ch;
    }
    s = out.replace(/[\s.]+$/u, '');
  }
  if (!s)
    throw new AppError('VALIDATION_ERROR', `${field} has no usable characters`, {
      issues: [{ path: field, message: 'empty after removing unsafe characters' }],
    });
  return s;
}

/**
 * A string as key characters ([A-Za-z0-9_-], never '.'), reversibly: ASCII letters, digits and '-' kept, other
 * bytes as `_hh`; or, when shorter (mostly non-Latin names), `_z` + base64url of the UTF-8 bytes. '.' stays free
 * as a field separator.
 */
export function keySegment(s: string): string {
  const bytes = Buffer.from(s, 'utf8');
  let escaped = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    escaped += /[A-Za-z0-9-]/.test(c) ? c : `_${b.toString(16).padStart(2, '0')}`;
  }
  const b64 = `_z${bytes.toString('base64url')}`;
  return b64.length < escaped.length ? b64 : escaped;
}

/** The inverse of `keySegment`. */
export function fromKeySegment(seg: string): string {
  if (seg.startsWith('_z')) return Buffer.from(seg.slice(2), 'base64url').toString('utf8');
  const bytes: number[] = [];
  for (let i = 0; i < seg.length; i++) {
    if (seg[i] === '_') {
      bytes.push(parseInt(seg.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(seg.charCodeAt(i));
  }
  return Buffer.from(bytes).toString('utf8');
}

const seg = (name: string, field: string) => keySegment(sanitizeName(name, field));

/** `sessions/<event>/<lang>/<track>/`: where a session's Markdown and assets go. */
export function sessionDir(event: string, language: string, track: string): string {
  return `sessions/${seg(event, 'event')}/${seg(language, 'language')}/${seg(track, 'track')}/`;
}

/** `sessions/<event>/<lang>/<track>/<filename><ext>` (ext '.md' by default); the filename's own '.md' is dropped. */
export function sessionPath(event: string, language: string, track: string, filename: string, ext = '.md'): string {
  return sessionDir(event, language, track) + seg(filename.replace(/\.md$/i, ''), 'filename') + ext;
}

function stampOf(iso: string): string {
  const t = Date.parse(iso);
  return new Date(Number.isNaN(t) ? Date.now() : t).toISOString().replace(/[-:.]/g, '');
}

function identityPrefix(rec: Pick<SessionRecord, 'event' | 'language' | 'track' | 'filename'>): string {
  return `${INDEX}${seg(rec.event, 'event')}/${seg(rec.language, 'language')}/${seg(rec.track, 'track')}/${seg(rec.filename, 'filename')}.`;
}

function recordKey(rec: SessionRecord): string {
  const topic = rec.topic ? keySegment(sanitizeName(rec.topic, 'topic')) : '';
  return `${identityPrefix(rec)}${stampOf(rec.processed_at)}.${topic}`;
}

/** Parses an index key into its encoded segments; null for anything else. */
function splitKey(key: string): [ev: string, lang: string, track: string, file: string, topic: string] | null {
  if (!key.startsWith(INDEX)) return null;
  const parts = key.slice(INDEX.length).split('/');
  if (parts.length !== 4) return null;
  const fields = parts[3]!.split('.');
  if (fields.length !== 3) return null;
  return [parts[0]!, parts[1]!, parts[2]!, fields[0]!, fields[2]!];
}

/** Of the keys of one session, the newest (stamp, then topic). */
const newest = (a: string, b: string): string => (a > b ? a : b);

/** Writes (or replaces: same event, language, track and filename) a session record. */
export async function putSessionRecord(store: BlobStore, rec: SessionRecord): Promise<void> {
  const key = recordKey(rec);
  await writeBlobJson(store, key, rec);
  const siblings = await store.listKeys(identityPrefix(rec));
  const keep = siblings.reduce(newest, key);
  await Promise.all(siblings.filter((k) => k !== keep).map((k) => store.delete(k)));
  if (keep !== key) await store.delete(key);
}

/** The encoded segment a filter value must equal (sanitised names encode one way only), or null when none can. */
function wantedSegment(value: string | undefined, field: string): string | null | undefined {
  if (value === undefined) return undefined;
  if (field === 'topic' && value === '') return '';
  try {
    return seg(value, field);
  } catch {
    return null;
  }
}

/**
 * The sessions matching the filter, from key names only (one entry per session: its newest record). Filters compare
 * encoded key segments; only the matching keys are decoded (names repeat, so decodings are memoised).
 */
export async function listSessionEntries(store: BlobStore, filter: SessionFilter = {}): Promise<SessionEntry[]> {
  const want = {
    event: wantedSegment(filter.event, 'event'),
    track: wantedSegment(filter.track, 'track'),
    language: wantedSegment(filter.language, 'language'),
    topic: wantedSegment(filter.topic, 'topic'),
  };
  if (Object.values(want).some((w) => w === null)) return [];
  const newest = new Map<string, string>();
  for (const key of await store.listKeys(want.event === undefined ? INDEX : `${INDEX}${want.event}/`)) {
    const stampAt = key.lastIndexOf('.', key.lastIndexOf('.') - 1);
    if (stampAt < 0) continue;
    const id = key.slice(0, stampAt);
    const seen = newest.get(id);
    if (seen === undefined || seen < key) newest.set(id, key);
  }
  const names = new Map<string, string>();
  const decode = (segment: string) => {
    let n = names.get(segment);
    if (n === undefined) names.set(segment, (n = fromKeySegment(segment)));
    return n;
  };
  const out: SessionEntry[] = [];
  for (const key of newest.values()) {
    const p = splitKey(key);
    if (!p) continue;
    const [ev, lang, track, file, topic] = p;
    if (
      (want.track !== undefined && track !== want.track) ||
      (want.language !== undefined && lang !== want.language) ||
      (want.topic !== undefined && topic !== want.topic)
    )
      continue;
    out.push({
      event: decode(ev),
      language: decode(lang),
      track: decode(track),
      filename: fromKeySegment(file),
      topic: decode(topic),
      key,
    });
  }
  return out;
}

/** The full records of the matching sessions, sorted by event, track, session name. */
export async function listSessionRecords(store: BlobStore, filter: SessionFilter = {}): Promise<SessionRecord[]> {
  const entries = await listSessionEntries(store, filter);
  const records = await mapPool(entries, READ_CONCURRENCY, (e) =>
    // A record replaced between the listing and this read is simply skipped; its successor is listed next time.
    readBlobJson<SessionRecord>(store, e.key).catch(() => null),
  );
  return records
    .filter((r): r is SessionRecord => r !== null)
    .sort(
      (a, b) =>
        a.event.localeCompare(b.event) ||
        a.track.localeCompare(b.track) ||
        a.session.localeCompare(b.session) ||
        a.language.localeCompare(b.language),
    );
}

export async function readSessionMarkdown(store: BlobStore, rec: SessionRecord): Promise<string> {
  return (await readBlobBuffer(store, rec.markdown_key)).toString('utf8');
}

function cachedKey(entry: Pick<CachedSessionEntry, 'event' | 'session' | 'url'>): string {
  const h = createHash('sha256').update(`${entry.session}\u0000${entry.url}`).digest('hex').slice(0, 32);
  return `${CACHE}${seg(entry.event, 'event')}/${h}.json`;
}

/** Writes (or replaces: same event, session and url) a cached session entry. */
export async function putCachedSession(store: BlobStore, entry: CachedSessionEntry): Promise<void> {
  await writeBlobJson(store, cachedKey(entry), entry);
}

/** Deletes the cached session entry of this event, session and url if it names job `jobId` (a job being deleted). */
export async function deleteCachedSessionOf(
  store: BlobStore,
  entry: Pick<CachedSessionEntry, 'event' | 'session' | 'url'>,
  jobId: string,
): Promise<void> {
  let key: string;
  try {
    key = cachedKey(entry);
  } catch {
    return; // a name no entry can have
  }
  const current = await readBlobJson<CachedSessionEntry>(store, key).catch(() => null);
  if (current?.job_id === jobId) await store.delete(key);
}

export async function listCachedSessions(store: BlobStore): Promise<CachedSessionEntry[]> {
  const keys = await store.listKeys(CACHE);
  const entries = await mapPool(keys, READ_CONCURRENCY, (k) =>
    readBlobJson<CachedSessionEntry>(store, k).catch(() => null),
  );
  return entries
    .filter((e): e is CachedSessionEntry => e !== null)
    .sort((a, b) => b.cached_at.localeCompare(a.cached_at));
}

/**
 * Sessions per value of `field` (a track name, a topic): each session once, however many languages it was written
 * in; entries without a value (no topic) are left out. Sorted by name.
 */
export function countSessions(
  entries: SessionEntry[],
  field: 'track' | 'topic' | 'event',
): { name: string; session_count: number }[] {
  const sessions = new Map<string, Set<string>>();
  for (const e of entries) {
    const name = e[field];
    if (!name) continue;
    const set = sessions.get(name) ?? new Set<string>();
    set.add(`${e.event}\u0000${e.track}\u0000${e.filename}`);
    sessions.set(name, set);
  }
  return [...sessions.entries()]
    .map(([name, s]) => ({ name, session_count: s.size }))
    .sort((a, b) => a.name.localeCompare(b.name));
}
