import { cancellationSignal, heartbeat } from '@temporalio/activity';
import { readBlobJson, writeBlobJson, type BlobStore } from '../core/stores/blob-store';
import { jobParametersKey, jobStepKey } from '../core/stores/records';

/**
 * Runs a job step once: its output is kept in the blob store under the job, so a retry, a crashed worker's
 * successor or a `restart` reuses it instead of doing the work again.
 */
export async function runStep<T>(
  store: BlobStore,
  jobId: string,
  step: string,
  work: () => Promise<T>,
): Promise<{ value: T; reused: boolean }> {
  const key = jobStepKey(jobId, step);
  if (await store.stat(key)) {
    try {
      return { value: await readBlobJson<T>(store, key), reused: true };
    } catch {
      /* unreadable: do the work again */
    }
  }
  const value = await work();
  await writeBlobJson(store, key, value);
  return { value, reused: false };
}

/** A job's full parameters: the copy in the blob store when they were too large for workflow history. */
export async function fullParameters<P extends object>(store: BlobStore, jobId: string, inline: P): Promise<P> {
  if (!(await store.stat(jobParametersKey(jobId)))) return inline;
  return readBlobJson<P>(store, jobParametersKey(jobId));
}

/**
 * Heartbeats every second while `work` runs off the event loop (an engine process, a thread, blob store I/O, a remote
 * service's answer): a dead worker's attempt is retried within the heartbeat timeout, and a cancel reaches the
 * activity's signal, which stops the work. Wrap the whole of a step that can outlast its heartbeat timeout, from its
 * first copy on (a heartbeat timeout runs from the attempt's start, not from its first heartbeat).
 */
export async function heartbeating<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const beat = setInterval(() => heartbeat(), 1000);
  try {
    return await work(cancellationSignal());
  } finally {
    clearInterval(beat);
  }
}
