import { readBlobJson, BlobNotFoundError, type BlobStore } from '../../core/stores/blob-store';
import { closeoutWorkflowId } from '../../core/jobs/ids';
import { jobWebhookLogKey } from '../../core/stores/records';
import { jobStateQuery, type JobLog, type JobState } from '../../workflows/definitions';
import type { TemporalGateway } from '../temporal';

// The reading and restart helpers of JobService (api/services/job-reads.ts, jobs.ts): reads shared by a job's waiters,
// the webhook log merged into a job's logs, and the waits around a restart.

/** How long a query of a job's workflow may take (a query needs a worker; without one it would wait). */
export const QUERY_DEADLINE_MS = 5000;
/** How long a restart waits for the new run to show in its record before it answers `pending` on its own. */
const RESTART_VISIBLE_MS = 5000;
/** How long a cancel waits for the job's failed record before it answers the state it saw. */
const CANCEL_VISIBLE_MS = 10_000;

/**
 * One read shared by every waiter of a job in this process: concurrent long-polls and event streams of the same job
 * share a record read and a workflow query instead of each sending its own (a hundred SSE readers of a job cost one
 * query every 500 ms, not a hundred). A read is reused while it is in flight, or for `ttlMs` after it answered.
 */
export class SharedReads {
  private readonly entries = new Map<string, { at: number; value: Promise<unknown>; pending: boolean }>();

  get<T>(key: string, ttlMs: number, read: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && (hit.pending || now - hit.at < ttlMs)) return hit.value as Promise<T>;
    const entry: { at: number; value: Promise<unknown>; pending: boolean } = { at: now, value: read(), pending: true };
    this.entries.set(key, entry);
    // A failed read is not kept; old entries go once the map grows.
    entry.value.then(
      () => (entry.pending = false),
      () => this.entries.get(key) === entry && this.entries.delete(key),
    );
    if (this.entries.size > 1000) for (const [k, v] of this.entries) if (now - v.at > 5000) this.entries.delete(k);
    return entry.value as Promise<T>;
  }
}

/**
 * The job with its webhook delivery lines merged into its logs, in time order: the job's notifier keeps them in a
 * log of its own (it is their only writer), so they are read beside the record or the live state.
 */
export async function withWebhookLog<T extends JobState>(store: BlobStore, s: T): Promise<T> {
  if (!s.input?.webhook) return s;
  const lines = await readBlobJson<JobLog[]>(store, jobWebhookLogKey(s.job_id)).catch((e: unknown) => {
    if (e instanceof BlobNotFoundError) return [];
    throw e;
  });
  if (!lines.length) return s;
  const logs = [...s.logs, ...lines].map((l, i) => ({ l, i }));
  logs.sort((a, b) => (a.l.timestamp < b.l.timestamp ? -1 : a.l.timestamp > b.l.timestamp ? 1 : a.i - b.i));
  return { ...s, logs: logs.map((x) => x.l) };
}

/**
 * Waits (up to 60 s) for the workflow of a failed job's run `run` to close (it closes right after its failed record;
 * a run closed out by the sweeper, once its closeout has handed the failure over). A newer run, or no workflow at
 * all, returns at once.
 */
export async function awaitRunClosed(
  temporal: TemporalGateway,
  jobId: string,
  run: number,
  closedOutRun?: string,
): Promise<void> {
  const waitFor = async (handle: ReturnType<typeof temporal.client.workflow.getHandle>) => {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([handle.result().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, 60_000)))]);
    clearTimeout(timer);
  };
  if (closedOutRun) await waitFor(temporal.client.workflow.getHandle(closeoutWorkflowId(jobId, closedOutRun)));
  const handle = temporal.client.workflow.getHandle(jobId);
  const d = await handle.describe().catch(() => null);
  if (!d || d.status.name !== 'RUNNING') return;
  const live = await temporal.connection
    .withDeadline(Date.now() + QUERY_DEADLINE_MS, () => handle.query(jobStateQuery))
    .catch(() => null);
  if (!live || (live.run ?? 1) !== run) return;
  await waitFor(handle);
}

/** Waits until run `run` has written the job's record (up to RESTART_VISIBLE_MS); false past that. */
export async function awaitRunRecord(
  readRecord: (jobId: string) => Promise<{ run?: number } | null>,
  jobId: string,
  run: number,
): Promise<boolean> {
  const deadline = Date.now() + RESTART_VISIBLE_MS;
  for (let wait = 20; ; wait = Math.min(250, wait * 2)) {
    const rec = await readRecord(jobId);
    if (rec && (rec.run ?? 1) >= run) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, wait));
  }
}

/** Waits until run `run` (or a later one) has written a finished record (up to CANCEL_VISIBLE_MS); null past that. */
export async function awaitEndedRecord<T extends { run?: number; status: string }>(
  readRecord: (jobId: string) => Promise<T | null>,
  jobId: string,
  run: number,
): Promise<T | null> {
  const deadline = Date.now() + CANCEL_VISIBLE_MS;
  for (let wait = 20; ; wait = Math.min(250, wait * 2)) {
    const rec = await readRecord(jobId);
    if (rec && (rec.run ?? 1) >= run && (rec.status === 'completed' || rec.status === 'failed')) return rec;
    if (Date.now() >= deadline) return null;
    await new Promise((r) => setTimeout(r, wait));
  }
}
