import { createHash } from 'node:crypto';
import { AppError } from '../../core/errors';
import { readBlobJson, type BlobStore } from '../../core/stores/blob-store';
import {
  batchEntriesOfDay,
  dayOf,
  dayOfPosition,
  deleteIndexKey,
  indexDays,
  indexJob,
  indexState,
  jobEntriesOfDay,
  userHash,
  type BatchIndexEntry,
  type IndexedBatch,
  type JobIndexEntry,
} from '../../core/stores/job-index';
import { mapPool } from '../../core/runtime/pool';
import type { BatchState, JobState } from '../../workflows/definitions';
import { isTerminal } from '../../workflows/job-state';
import type { BatchService } from './batches';
import { backfillIndex } from './job-index-backfill';
import type { JobService } from './jobs';

/** The filters of `GET /api/jobs` as validated (api/schemas/jobs.schemas.ts `jobListQuery`). */
export interface JobListQuery {
  status?: JobState['status'];
  job_type?: string;
  batch_id?: string;
  user_id?: string;
  created_after?: string;
  created_before?: string;
  limit: number;
  cursor?: string;
}

export type BatchListQuery = Omit<JobListQuery, 'job_type' | 'batch_id' | 'status'> & {
  status?: BatchState['status'];
};

/** One job of a listing (contract §15). */
export interface JobSummary {
  job_id: string;
  job_type: string;
  status: JobState['status'];
  progress: JobState['progress'];
  created_at: string;
  updated_at: string;
  batch_id: string | null;
  user_id: string | null;
  error_code: string | null;
}

export interface BatchSummary {
  batch_id: string;
  batch_name: string;
  status: BatchState['status'];
  active: boolean;
  created_at: string;
  updated_at: string;
  user_id: string | null;
  job_count: number;
  pending_count: number;
  processing_count: number;
  completed_count: number;
  failed_count: number;
}

/** How long an entry whose job cannot be found is taken for a job still starting before the listing removes it. */
const ORPHAN_GRACE_MS = 10 * 60_000;
/** Jobs read at once while a page is assembled. */
const READS = 16;

const invalid = (field: string, message: string) =>
  new AppError('VALIDATION_ERROR', `${field}: ${message}`, { issues: [{ path: field, message }] });

type Kind = 'jobs' | 'batches';

/** The listing and filters a cursor belongs to (a cursor of one listing is refused by another). */
const fingerprint = (kind: Kind, q: object) =>
  createHash('sha256')
    .update(kind)
    .update(JSON.stringify(Object.entries(q).filter(([k, v]) => k !== 'limit' && k !== 'cursor' && v !== undefined)))
    .digest('base64url')
    .slice(0, 12);

const POSITION = { jobs: /^\d{13}\.job-[0-9a-f-]{36}$/, batches: /^\d{13}\.batch-[0-9a-f-]{36}$/ };

function encodeCursor(kind: Kind, position: string, q: object): string {
  return Buffer.from(JSON.stringify({ p: position, f: fingerprint(kind, q) })).toString('base64url');
}

/** The position a cursor holds; 400 naming `cursor` for anything this listing did not hand out. */
function decodeCursor(kind: Kind, cursor: string | undefined, q: object): string | undefined {
  if (cursor === undefined) return undefined;
  let parsed: { p?: unknown; f?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as typeof parsed;
  } catch {
    throw invalid('cursor', 'not a cursor this listing handed out');
  }
  if (typeof parsed?.p !== 'string' || !POSITION[kind].test(parsed.p))
    throw invalid('cursor', 'not a cursor this listing handed out');
  if (parsed.f !== fingerprint(kind, q)) throw invalid('cursor', 'the cursor belongs to a listing with other filters');
  return parsed.p;
}

/** Creation-time bounds in ms: `created_after` inclusive, `created_before` exclusive. */
function timeRange(q: { created_after?: string; created_before?: string }): { from: number; to: number } {
  const from = q.created_after === undefined ? 0 : Date.parse(q.created_after);
  const to = q.created_before === undefined ? Number.MAX_SAFE_INTEGER : Date.parse(q.created_before);
  return { from, to };
}

/**
 * The days to read, newest first: those with entries, from the cursor's day on, within the creation-time bounds.
 */
function daysToRead(days: string[], after: string | undefined, range: { from: number; to: number }): string[] {
  const first = after ? dayOfPosition(after) : '00000';
  const newest = range.to === Number.MAX_SAFE_INTEGER ? '00000' : dayOf(Math.max(0, range.to - 1));
  const oldest = dayOf(range.from);
  const start = first > newest ? first : newest;
  return days.filter((d) => d >= start && d <= oldest);
}

/**
 * Pages of jobs and batches, newest first (contract §15), from the job index (core/stores/job-index.ts): the entries
 * of a day are listed by key name and filtered there (type, batch, user, time, settled state); the jobs on the page
 * are then read as `GET /api/jobs/{job_id}` reads them (a finished job's record; a live one's workflow, so status and
 * progress are the job's own), and checked against the filters again. A cursor is the position of the page's last
 * job: the next page starts after it, so no job is listed twice and none is skipped while jobs are created or change
 * status. Past Temporal's retention a job is its record, which the index lists as any other.
 */
export class JobList {
  private backfilled: Promise<void> | undefined;

  constructor(
    private readonly jobs: JobService,
    private readonly batches: BatchService,
  ) {}

  private get store(): BlobStore {
    return this.jobs.store;
  }

  /** Once per process: what a store held before the index existed is indexed (job-index-backfill.ts). */
  private ready(): Promise<void> {
    this.backfilled ??= backfillIndex(this.store).catch((e: unknown) => {
      this.backfilled = undefined;
      throw e;
    });
    return this.backfilled;
  }

  async listJobs(q: JobListQuery): Promise<{ jobs: JobSummary[]; next_cursor: string | null }> {
    const after = decodeCursor('jobs', q.cursor, q);
    const range = timeRange(q);
    await this.ready();
    const wantUser = q.user_id === undefined ? undefined : userHash(q.user_id);
    const wantState = q.status === undefined ? undefined : indexState(q.status);
    const keyMatches = (e: JobIndexEntry) =>
      (after === undefined || e.position > after) &&
      e.createdMs >= range.from &&
      e.createdMs < range.to &&
      (q.job_type === undefined || e.jobType === q.job_type) &&
      (q.batch_id === undefined || e.batchId === q.batch_id) &&
      (wantUser === undefined || e.userHash === wantUser) &&
      (wantState === undefined || e.state === wantState);
    const matches = (s: JobState) =>
      (q.status === undefined || s.status === q.status) &&
      (q.job_type === undefined || s.job_type === q.job_type) &&
      (q.batch_id === undefined || s.batch_id === q.batch_id) &&
      (q.user_id === undefined || s.user_id === q.user_id);
    const page = await this.page(
      await indexDays(this.store, 'jobs'),
      after,
      range,
      q.limit,
      async (day) => dedupe((await jobEntriesOfDay(this.store, day)).filter(keyMatches)),
      (e) => this.resolveJob(e),
      matches,
    );
    return {
      jobs: page.items.map(({ value: s }) => jobSummary(s)),
      next_cursor: page.more ? encodeCursor('jobs', page.items[page.items.length - 1]!.position, q) : null,
    };
  }

  async listBatches(q: BatchListQuery): Promise<{ batches: BatchSummary[]; next_cursor: string | null }> {
    const after = decodeCursor('batches', q.cursor, q);
    const range = timeRange(q);
    await this.ready();
    const wantUser = q.user_id === undefined ? undefined : userHash(q.user_id);
    const keyMatches = (e: BatchIndexEntry) =>
      (after === undefined || e.position > after) &&
      e.createdMs >= range.from &&
      e.createdMs < range.to &&
      (wantUser === undefined || e.userHash === wantUser);
    const matches = (b: BatchSummary) =>
      (q.status === undefined || b.status === q.status) && (q.user_id === undefined || b.user_id === q.user_id);
    const page = await this.page(
      await indexDays(this.store, 'batches'),
      after,
      range,
      q.limit,
      async (day) => (await batchEntriesOfDay(this.store, day)).filter(keyMatches),
      (e) => this.resolveBatch(e),
      matches,
    );
    return {
      batches: page.items.map((i) => i.value),
      next_cursor: page.more ? encodeCursor('batches', page.items[page.items.length - 1]!.position, q) : null,
    };
  }

  /**
   * Up to `limit` items after `after`, day by day: the candidates of a day (filtered by key) are read a few at a time,
   * in order, until the page is full and one more match shows there is a next page.
   */
  private async page<E extends { position: string }, V>(
    days: string[],
    after: string | undefined,
    range: { from: number; to: number },
    limit: number,
    candidates: (day: string) => Promise<E[]>,
    resolve: (e: E) => Promise<V | null>,
    matches: (v: V) => boolean,
  ): Promise<{ items: { position: string; value: V }[]; more: boolean }> {
    const items: { position: string; value: V }[] = [];
    for (const day of daysToRead(days, after, range)) {
      const entries = await candidates(day);
      for (let i = 0; i < entries.length;) {
        const chunk = entries.slice(i, i + Math.max(4, Math.min(READS * 2, limit + 1 - items.length)));
        i += chunk.length;
        const values = await mapPool(chunk, READS, resolve);
        for (const [k, v] of values.entries()) {
          if (v === null || !matches(v)) continue;
          if (items.length === limit) return { items, more: true };
          items.push({ position: chunk[k]!.position, value: v });
        }
      }
    }
    return { items, more: false };
  }

  /**
   * The job of an entry as `GET /api/jobs/{job_id}` reads it, or null when it is gone. An entry whose settled state
   * disagrees with its finished record is written again; one whose job no longer exists (deleted, or swept by
   * retention) is removed once it is past the time a job takes to start.
   */
  private async resolveJob(e: JobIndexEntry): Promise<JobState | null> {
    const s = await this.jobs.summaryState(e.jobId);
    if (!s) {
      if (Date.now() - e.createdMs > ORPHAN_GRACE_MS) await deleteIndexKey(this.store, e.key);
      return null;
    }
    if (isTerminal(s) && indexState(s.status) !== e.state) await indexJob(this.store, s);
    return s;
  }

  /** The batch of an entry as `GET /api/jobs/batch/{batch_id}` reads it, with what its entry holds; null when gone. */
  private async resolveBatch(e: BatchIndexEntry): Promise<BatchSummary | null> {
    const [s, body] = await Promise.all([
      this.batches.current(e.batchId),
      readBlobJson<IndexedBatch>(this.store, e.key).catch(() => null),
    ]);
    if (!s) {
      if (Date.now() - e.createdMs > ORPHAN_GRACE_MS) await deleteIndexKey(this.store, e.key);
      return null;
    }
    return {
      batch_id: s.batch_id,
      batch_name: s.batch_name,
      status: s.status,
      active: s.active,
      created_at: s.created_at,
      updated_at: s.updated_at,
      user_id: body?.user_id ?? null,
      job_count: s.job_count,
      pending_count: s.pending_count,
      processing_count: s.processing_count,
      completed_count: s.completed_count,
      failed_count: s.failed_count,
    };
  }
}

/** One entry per job: while its state changes a job may have two for a moment (the same position, side by side). */
function dedupe(entries: JobIndexEntry[]): JobIndexEntry[] {
  return entries.filter((e, i) => i === 0 || entries[i - 1]!.jobId !== e.jobId);
}

export function jobSummary(s: JobState): JobSummary {
  return {
    job_id: s.job_id,
    job_type: s.job_type,
    status: s.status,
    progress: s.progress,
    created_at: s.created_at,
    updated_at: s.updated_at,
    batch_id: s.batch_id ?? null,
    user_id: s.user_id ?? null,
    error_code: s.status === 'failed' ? (s.error?.code ?? null) : null,
  };
}
