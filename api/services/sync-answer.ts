import { Readable } from 'node:stream';
import type { Context } from 'koa';
import type { AsyncPreference } from './async-preference';
import { readBlobJson, type BlobStore } from '../../core/blob-store';
import { fromCache, resultData, type StoredJobFields } from '../../core/job-results';
import type { CreateJob, JobRecord, JobService } from './jobs';

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
  const data = await store.get(ref.data);
  ctx.set('X-Cache', fields.job.from_cache ? 'hit' : 'miss');
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
 * A synchronous endpoint's job: within the heavy-request bound (429 when it is full), run and waited for
 * (`JobService.runSync`: 504 past `timeoutMs`), then answered with its results, streamed.
 */
export async function answerSync(ctx: Context, jobs: JobService, req: CreateJob, timeoutMs: number): Promise<void> {
  const prefer = ctx.state.prefer as AsyncPreference | undefined;
  // A client that does not wait holds no heavy-request slot.
  if (!prefer?.respondAsync && prefer?.waitMs !== 0) jobs.heavy.enter(ctx);
  await answerWithResults(ctx, jobs.store, await jobs.runSync(req, timeoutMs, { results: false, prefer }));
}
