import { createHash } from 'node:crypto';
import type { BlobStore } from './blob-store';

/**
 * The job and batch index (contract §15, `GET /api/jobs` and `GET /api/jobs/batches`): one empty blob per job whose
 * key holds everything a listing filters on, so a page is read from key names alone (one listing per day of jobs)
 * and only the jobs on the page are read in full. It lives beside the records, outlives Temporal's retention as they
 * do, and is written by the records' writers: the API when it creates a job or a batch, the job's record writes
 * (activities/jobs.activities.ts, batch.activities.ts) when its status settles.
 *
 * Layout (keys built here only):
 * - `records/job-index/<day>/<inv>.<job_id>.<job_type>.<state>.<batch_id|->.<user|->`: `inv` is 9999999999999 minus
 *   the job's creation time in ms (13 digits), `day` 99999 minus its day since the epoch (5 digits), so key order is
 *   newest first; `state` is `a` (pending or processing: the live state says which), `c` or `f`; `user` is a hash
 *   of the user id (ids are free text; the reader compares the job's own user id too).
 * - `records/job-index-days/<day>`: one marker per day that has jobs, so a listing knows which days to read.
 * - `records/batch-index/<day>/<inv>.<batch_id>.<user|->` (its body: name, creation time and user id) and
 *   `records/batch-index-days/<day>`, likewise for batches.
 *
 * A job's position (`<inv>.<job_id>`) never changes: a cursor is a position, so paging is stable while jobs are
 * created (they come before it) and while their status changes (only `state` does).
 */

const MAX_MS = 9_999_999_999_999;
const MAX_DAY = 99_999;
const DAY_MS = 86_400_000;

const JOBS = 'records/job-index/';
const JOB_DAYS = 'records/job-index-days/';
const BATCHES = 'records/batch-index/';
const BATCH_DAYS = 'records/batch-index-days/';

export type IndexState = 'a' | 'c' | 'f';

/** What the index keeps of a job (the fields of its state it is written from). */
export interface IndexedJob {
  job_id: string;
  job_type: string;
  status: string;
  created_at: string;
  batch_id?: string;
  user_id?: string;
}

export interface JobIndexEntry {
  key: string;
  /** `<inv>.<job_id>`: the order of the listing (ascending = newest first) and what a cursor holds. */
  position: string;
  createdMs: number;
  jobId: string;
  jobType: string;
  state: IndexState;
  batchId: string | null;
  userHash: string | null;
}

export interface BatchIndexEntry {
  key: string;
  position: string;
  createdMs: number;
  batchId: string;
  userHash: string | null;
}

/** The body of a batch's index entry (a batch's name, time and user never change). */
export interface IndexedBatch {
  batch_id: string;
  batch_name: string;
  created_at: string;
  user_id?: string;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const invOf = (ms: number) => pad(MAX_MS - ms, 13);
/** The day bucket of a time (ms since the epoch): newer days sort first. */
export const dayOf = (ms: number): string => pad(MAX_DAY - Math.floor(ms / DAY_MS), 5);

/** The user field of a key: a hash of the id, so any text fits a key. */
export const userHash = (userId: string): string =>
  createHash('sha256').update(`user\0${userId}`).digest('hex').slice(0, 16);

export const indexState = (status: string): IndexState =>
  status === 'completed' ? 'c' : status === 'failed' ? 'f' : 'a';

const JOB_ID = /^job-[0-9a-f-]{36}$/;
const BATCH_ID = /^batch-[0-9a-f-]{36}$/;
const JOB_TYPE = /^[a-z_]{1,40}$/;

/** The time of an ISO string in ms, or null when it is none the index can hold. */
function msOf(iso: string): number | null {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) && ms >= 0 && ms <= MAX_MS ? ms : null;
}

/**
 * The key of the job's entry in `state`, or null for a job the index cannot hold (an id not made by core/jobs/ids.ts,
 * as tests that start workflows themselves use): such a job is left out of listings, and its record writes go on.
 */
function jobKey(j: Omit<IndexedJob, 'status'>, state: IndexState): string | null {
  const ms = msOf(j.created_at);
  if (ms === null || !JOB_ID.test(j.job_id) || !JOB_TYPE.test(j.job_type)) return null;
  if (j.batch_id !== undefined && !BATCH_ID.test(j.batch_id)) return null;
  const user = j.user_id ? userHash(j.user_id) : '-';
  return `${JOBS}${dayOf(ms)}/${invOf(ms)}.${j.job_id}.${j.job_type}.${state}.${j.batch_id ?? '-'}.${user}`;
}

/** Days already marked in a store by this process (markers are never removed, so once is enough). */
const marked = new WeakMap<BlobStore, Set<string>>();

async function markDay(store: BlobStore, prefix: string, day: string): Promise<void> {
  let days = marked.get(store);
  if (!days) marked.set(store, (days = new Set()));
  const k = `${prefix}${day}`;
  if (days.has(k)) return;
  await store.put(k, '', { mime: 'application/octet-stream' });
  days.add(k);
}

/**
 * Writes the job's entry for its status; the entries of its other states are left for {@link dropStaleJobEntries}.
 * Written before the record that holds the status, so a record a reader sees is never newer than the index.
 */
export async function putJobEntry(store: BlobStore, j: IndexedJob): Promise<void> {
  const key = jobKey(j, indexState(j.status));
  if (!key) return;
  await markDay(store, JOB_DAYS, key.slice(JOBS.length, JOBS.length + 5));
  await store.put(key, '', { mime: 'application/octet-stream' });
}

/** Deletes the job's entries of the states other than its status (readers skip a job's second entry meanwhile). */
export async function dropStaleJobEntries(store: BlobStore, j: IndexedJob): Promise<void> {
  const keep = indexState(j.status);
  await deleteKeys(
    store,
    (['a', 'c', 'f'] as const).filter((s) => s !== keep).map((s) => jobKey(j, s)),
  );
}

const deleteKeys = async (store: BlobStore, keys: (string | null)[]) => {
  await Promise.all(keys.filter((k) => k !== null).map((k) => store.delete(k)));
};

/** The job's entry for its status, and no other. */
export async function indexJob(store: BlobStore, j: IndexedJob): Promise<void> {
  await putJobEntry(store, j);
  await dropStaleJobEntries(store, j);
}

/** Deletes every entry of the job (DELETE of the job, a start that failed). */
export async function unindexJob(store: BlobStore, j: Omit<IndexedJob, 'status'>): Promise<void> {
  await deleteKeys(
    store,
    (['a', 'c', 'f'] as const).map((s) => jobKey(j, s)),
  );
}

/** Deletes one entry by its key (the reader's clean-up of an entry whose job no longer exists). */
export const deleteIndexKey = (store: BlobStore, key: string): Promise<void> => store.delete(key);

const JOB_NAME = /^(\d{13})\.(job-[0-9a-f-]{36})\.([a-z_]+)\.([acf])\.(batch-[0-9a-f-]{36}|-)\.([0-9a-f]{16}|-)$/;
const BATCH_NAME = /^(\d{13})\.(batch-[0-9a-f-]{36})\.([0-9a-f]{16}|-)$/;

export function parseJobKey(key: string): JobIndexEntry | null {
  const m = JOB_NAME.exec(key.slice(key.lastIndexOf('/') + 1));
  if (!key.startsWith(JOBS) || !m) return null;
  return {
    key,
    position: `${m[1]}.${m[2]}`,
    createdMs: MAX_MS - Number(m[1]),
    jobId: m[2],
    jobType: m[3],
    state: m[4] as IndexState,
    batchId: m[5] === '-' ? null : m[5],
    userHash: m[6] === '-' ? null : m[6],
  };
}

export function parseBatchKey(key: string): BatchIndexEntry | null {
  const m = BATCH_NAME.exec(key.slice(key.lastIndexOf('/') + 1));
  if (!key.startsWith(BATCHES) || !m) return null;
  return {
    key,
    position: `${m[1]}.${m[2]}`,
    createdMs: MAX_MS - Number(m[1]),
    batchId: m[2],
    userHash: m[3] === '-' ? null : m[3],
  };
}

/** A position's day (cursors start their listing there). */
export const dayOfPosition = (position: string): string => dayOf(MAX_MS - Number(position.slice(0, 13)));

/** The days that have jobs (or batches), newest first. */
export async function indexDays(store: BlobStore, kind: 'jobs' | 'batches'): Promise<string[]> {
  const prefix = kind === 'jobs' ? JOB_DAYS : BATCH_DAYS;
  return (await store.listKeys(prefix)).map((k) => k.slice(prefix.length)).filter((d) => /^\d{5}$/.test(d));
}

/** The job entries of one day, in listing order (newest first). */
export async function jobEntriesOfDay(store: BlobStore, day: string): Promise<JobIndexEntry[]> {
  return (await store.listKeys(`${JOBS}${day}/`)).map(parseJobKey).filter((e): e is JobIndexEntry => e !== null);
}

export async function batchEntriesOfDay(store: BlobStore, day: string): Promise<BatchIndexEntry[]> {
  return (await store.listKeys(`${BATCHES}${day}/`)).map(parseBatchKey).filter((e): e is BatchIndexEntry => e !== null);
}

/** Every job id the index holds (the backfill of stores written before the index). */
export async function indexedJobIds(store: BlobStore): Promise<Set<string>> {
  return new Set((await store.listKeys(JOBS)).map((k) => parseJobKey(k)?.jobId).filter((id) => id !== undefined));
}

export async function indexedBatchIds(store: BlobStore): Promise<Set<string>> {
  return new Set(
    (await store.listKeys(BATCHES)).map((k) => parseBatchKey(k)?.batchId).filter((id) => id !== undefined),
  );
}

function batchKey(b: IndexedBatch): string | null {
  const ms = msOf(b.created_at);
  if (ms === null || !BATCH_ID.test(b.batch_id)) return null;
  return `${BATCHES}${dayOf(ms)}/${invOf(ms)}.${b.batch_id}.${b.user_id ? userHash(b.user_id) : '-'}`;
}

/** Writes a batch's entry (once, when it is created: nothing of it that a listing filters on changes). */
export async function indexBatch(store: BlobStore, b: IndexedBatch): Promise<void> {
  const key = batchKey(b);
  if (!key) return;
  await markDay(store, BATCH_DAYS, key.slice(BATCHES.length, BATCHES.length + 5));
  const body: IndexedBatch = {
    batch_id: b.batch_id,
    batch_name: b.batch_name,
    created_at: b.created_at,
    ...(b.user_id ? { user_id: b.user_id } : {}),
  };
  await store.put(key, JSON.stringify(body), { mime: 'application/json' });
}

export const unindexBatch = (store: BlobStore, b: IndexedBatch): Promise<void> => deleteKeys(store, [batchKey(b)]);

/** Written once the index holds every job and batch stored before it existed (see the API's backfill). */
export const INDEX_BACKFILLED_KEY = 'records/job-index-backfilled.json';
