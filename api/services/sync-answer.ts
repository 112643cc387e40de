import { Readable } from 'node:stream';
import type { Context } from 'koa';
import type { AsyncPreference } from './async-preference';
import { readBlobJson, type BlobStat, type BlobStore } from '../../core/stores/blob-store';
import { fromCache, resultData, type StoredJobFields } from '../../core/results/job-results';
import type { JobRecord } from './job-reads';
import type { CreateJob } from './job-starts';
import type { JobService } from './jobs';

const PREFIX = Buffer.from('{"status":"success","data":');
const SUFFIX = Buffer.from('}');

/**
 * Answers a synchronous request with its finished job's results: the endpoint's `data` is the results without the
 * job fields (the pipeline shaped it), and `X-Cache` says whether the pipeline took it from the result cache.
 * Results stored as `data` (job-results.ts) are streamed from the blob store between the envelope's prefix and
 * suffix, never parsed: the bytes are what `JSON.stringify` of the envelope gives, and memory stays flat however
 * large the text. A state that points at no stored results (read live when the record is not there) is answered
 * from the results it carries.
 */
export async function answerWithResults(ctx: Context, store: BlobStore, done: JobRecord): Promise<void> {
  const ref = done.results_ref;
  if (!ref) {
    ctx.set('X-Cache', fromCache(done.results) ? 'hit' : 'miss');
    ctx.body = { status: 'success', data: resultData(done.results) };
    return;
  }
  const [fields, st] = await Promise.all([readBlobJson<StoredJobFields>(store, ref.fields), store.stat(ref.data)]);
  await streamData(ctx, store, ref.data, fields.job.from_cache, st);
}

/**
 * Answers `{"status":"success","data":<the stored data blob>}`, the blob streamed between the envelope's prefix and
 * suffix, never parsed; `X-Cache` says `hit` or `miss`. Rejects with `BlobNotFoundError` before anything is sent when
 * the blob is gone.
 */
export async function streamData(
  ctx: Context,
  store: BlobStore,
  dataKey: string,
  hit: boolean,
  stat?: BlobStat | null,
): Promise<void> {
  const st = stat === undefined ? await store.stat(dataKey) : stat;
  const data = await store.get(dataKey);
  ctx.set('X-Cache', hit ? 'hit' : 'miss');
  ctx.type = 'application/json; charset=utf-8';
  if (st) ctx.length = PREFIX.length + st.size + SUFFIX.length;
  ctx.body = Readable.from(
    (async function* () {
      yield PREFIX;
      for await (const chunk of data) yield chunk as Buffer;
      yield SUFFIX;
    })(),
    { objectMode: false },
  );
}

/**
 * The one way a synchronous endpoint runs its job: within the heavy-request bound, then run and waited for
 * (`JobService.runSync`: 504 past `timeoutMs`, 202 to a client that asked not to wait). A client that waits takes a
 * slot before the job exists (429 `RATE_LIMITED` when the bound is full) and holds it until its response is closed;
 * one that asked for 202 at once (`Prefer: respond-async`, `wait_ms=0`) takes none. `results: false` leaves the
 * stored results unread (`answerWithResults` streams them).
 */
export async function runSyncJob(
  ctx: Context,
  jobs: JobService,
  req: CreateJob,
  timeoutMs: number,
  opts: { results?: boolean } = {},
): Promise<JobRecord> {
  const prefer = ctx.state.prefer as AsyncPreference | undefined;
  if (!prefer?.respondAsync && prefer?.waitMs !== 0) jobs.heavy.enter(ctx);
  return jobs.runSync(req, timeoutMs, { ...opts, prefer });
}

/** A synchronous endpoint's job (`runSyncJob`), answered with its results, streamed. */
export async function answerSync(ctx: Context, jobs: JobService, req: CreateJob, timeoutMs: number): Promise<void> {
  await answerWithResults(ctx, jobs.store, await runSyncJob(ctx, jobs, req, timeoutMs, { results: false }));
}
