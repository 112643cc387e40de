import { BlobNotFoundError, readBlobJson, writeBlobJson, type BlobStore } from './blob-store';
import { jobCacheRefPrefix } from './records';
import type { ResultPreview } from '../results/job-results';
import { countCacheLookup } from '../runtime/metrics';

/**
 * The result cache (architecture.md "State"): entries at `cache/<operation>/<key>.json`, keys built by
 * core/stores/cache-keys.ts. `use_cache=false` skips the read, never the write of a fresh success; errors are never written.
 */

const OP = /^[a-z0-9][a-z0-9-]{0,63}$/;
function cacheBlobKey(operation: string, key: string): string {
  if (!OP.test(operation) || !/^[0-9a-f]{64}$/.test(key)) throw new Error('invalid cache key');
  return `cache/${operation}/${key}.json`;
}

/**
 * A result-cache entry that points at the results a finished job stored (`job-results.ts`) instead of holding a copy
 * of them, so the text is stored once. It lives no longer than that job: when the job is swept (retention), the
 * entry answers as a miss.
 */
export interface CacheRef {
  /**
   * The job whose results these are; absent when the API computed the result itself (a direct answer, issue 24):
   * its files then live under {@link cacheFileKey} and are swept by age with the entries.
   */
  job_id?: string;
  /** The job's results blob (the endpoint's `data`) and its job fields. */
  data: string;
  fields: string;
  /** Output files a hit copies into its own job, by name (`result.md` → its key). */
  files: Record<string, string>;
  /** What the workflow keeps of the results (`resultPreview`), for a hit to answer without reading the data. */
  preview: Pick<ResultPreview, 'structured_data'>;
}

/**
 * Where the API keeps the files of a result it computed itself (no job holds them), for an entry that points at them:
 * `cache/files/<operation>/<key>/<name>`, under `cache/` so retention sweeps them by age as it sweeps the entries.
 */
export function cacheFileKey(operation: string, key: string, name: string): string {
  if (!/^[a-z0-9][a-z0-9.-]{0,63}$/.test(name)) throw new Error('invalid cache file name');
  return `cache/files/${cacheBlobKey(operation, key).slice('cache/'.length, -'.json'.length)}/${name}`;
}

interface CacheEntry<T> {
  operation: string;
  cached_at: string;
  value?: T;
  ref?: CacheRef;
}

async function readEntry<T>(store: BlobStore, operation: string, key: string): Promise<CacheEntry<T> | null> {
  try {
    return await readBlobJson<CacheEntry<T>>(store, cacheBlobKey(operation, key));
  } catch (e) {
    if (e instanceof BlobNotFoundError || e instanceof SyntaxError) return null;
    throw e;
  }
}

/**
 * The cached value of an entry that holds one. Counted as a hit or a miss of `operation` in
 * `docproc_cache_lookups_total`.
 */
export async function readCache<T>(store: BlobStore, operation: string, key: string): Promise<T | null> {
  const value = await peekCache<T>(store, operation, key);
  countCacheLookup(operation, value !== null);
  return value;
}

/**
 * The cached value, not counted: for a reader that counts only what it answers itself (the API counts its hits and
 * the misses it computes; a miss it hands to a job is counted by the job's activity, once).
 */
export async function peekCache<T>(store: BlobStore, operation: string, key: string): Promise<T | null> {
  return (await readEntry<T>(store, operation, key))?.value ?? null;
}

/**
 * The entry's reference, or null when there is none (a miss, or an entry that holds its value). Not counted: the caller
 * counts.
 */
export async function readCacheRef(store: BlobStore, operation: string, key: string): Promise<CacheRef | null> {
  return (await readEntry(store, operation, key))?.ref ?? null;
}

export async function writeCache(store: BlobStore, operation: string, key: string, value: unknown): Promise<void> {
  await writeBlobJson(store, cacheBlobKey(operation, key), { operation, cached_at: new Date().toISOString(), value });
}

export async function writeCacheRef(store: BlobStore, operation: string, key: string, ref: CacheRef): Promise<void> {
  await writeBlobJson(store, cacheBlobKey(operation, key), { operation, cached_at: new Date().toISOString(), ref });
}

/**
 * Notes under job `jobId` that the entry `operation`/`key` names it (a reference to its results, or a value that names
 * it as its source), so that deleting the job deletes the entry too ({@link dropJobCacheEntries}).
 */
export async function noteJobCacheEntry(
  store: BlobStore,
  jobId: string,
  operation: string,
  key: string,
): Promise<void> {
  cacheBlobKey(operation, key);
  await store.put(`${jobCacheRefPrefix(jobId)}${operation}.${key}`, '', { mime: 'application/octet-stream' });
}

/**
 * Deletes the result-cache entries noted for job `jobId` that still name it (a later job may have replaced one with
 * its own): a removed job's results are never answered from the cache. Readers already answer a miss for an entry
 * whose job's results are gone (`answerPdfFromCache`, `answerAudioFromCache`); this removes the entries themselves.
 * Answers how many it deleted.
 */
export async function dropJobCacheEntries(store: BlobStore, jobId: string): Promise<number> {
  const prefix = jobCacheRefPrefix(jobId);
  let dropped = 0;
  for (const marker of await store.listKeys(prefix)) {
    const [operation, key] = marker.slice(prefix.length).split('.');
    if (!operation || !key || !OP.test(operation) || !/^[0-9a-f]{64}$/.test(key)) continue;
    const entry = await readEntry<{ job_id?: unknown }>(store, operation, key);
    if (entry && (entry.ref?.job_id === jobId || entry.value?.job_id === jobId)) {
      await store.delete(cacheBlobKey(operation, key));
      dropped += 1;
    }
  }
  await dropJobCacheMarkers(store, jobId);
  return dropped;
}

/** Deletes the markers `noteJobCacheEntry` wrote for job `jobId` (after its entries: a removal, or retention). */
export async function dropJobCacheMarkers(store: BlobStore, jobId: string): Promise<void> {
  for (const marker of await store.listKeys(jobCacheRefPrefix(jobId))) await store.delete(marker);
}
