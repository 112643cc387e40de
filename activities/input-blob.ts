import fs from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import type { BlobStore } from '../core/stores/blob-store';
import type { Config } from '../core/config/config';
import { isInsideInputRoots } from '../core/jobs/input-roots';
import { jobInternalKey } from '../core/stores/records';
import { scratchAt } from '../core/stores/scratch';
import { downloadToFile } from '../providers/http/download';
import { outboundPolicy, type OutboundPolicy } from '../providers/http/ssrf';

/**
 * A job's input file: an upload's blob (`file_key`), or a file inside the allowed roots (`filename`, contract §6),
 * copied into the job under `name` once (a retry or restart reuses the copy).
 */
export async function jobInputBlob(
  store: BlobStore,
  inputRoots: string[],
  jobId: string,
  p: Record<string, unknown>,
  copy: { name: string; mime: string; download?: UrlDownload },
): Promise<{ key: string; sha256: string }> {
  if (typeof p.file_key === 'string') {
    const st = await store.stat(p.file_key);
    if (!st) throw ApplicationFailure.nonRetryable('The uploaded file is gone.', 'FILE_NOT_FOUND', {});
    return { key: p.file_key, sha256: st.sha256 };
  }
  const key = jobInternalKey(jobId, copy.name);
  const existing = await store.stat(key);
  if (existing) return { key, sha256: existing.sha256 };
  if (typeof p.url === 'string') {
    if (!copy.download) throw ApplicationFailure.nonRetryable('This job type takes no URL.', 'VALIDATION_ERROR', {});
    return downloadInto(store, key, p.url, copy.mime, copy.download);
  }
  if (!path.isAbsolute(String(p.filename))) {
    throw ApplicationFailure.nonRetryable('The file must be named by an absolute path.', 'FORBIDDEN', {
      filename: p.filename,
    });
  }
  const wanted = path.resolve(String(p.filename));
  const real = await fs.realpath(wanted).catch(() => null);
  if (!real)
    throw ApplicationFailure.nonRetryable('The file does not exist.', 'FILE_NOT_FOUND', { filename: p.filename });
  if (!(await isInsideInputRoots(real, inputRoots))) {
    throw ApplicationFailure.nonRetryable('The file lies outside the directories this server may read.', 'FORBIDDEN', {
      filename: p.filename,
    });
  }
  const st = await fs.stat(real);
  if (!st.isFile())
    throw ApplicationFailure.nonRetryable('The path is not a file.', 'FILE_NOT_FOUND', { filename: p.filename });
  const ref = await store.putFile(key, real, { mime: copy.mime });
  return { key, sha256: ref.sha256 };
}

/**
 * A job's `url` input as the worker fetches it: the outbound address policy (private targets only with
 * ALLOW_PRIVATE_URLS), at most MAX_UPLOAD_MB, the media types `accept`ed, through scratch.
 */
export function urlDownload(
  config: Pick<Config, 'ALLOW_PRIVATE_URLS' | 'MAX_UPLOAD_MB' | 'scratchDir'>,
  accept: string[],
): UrlDownload {
  return {
    policy: outboundPolicy(config),
    maxBytes: config.MAX_UPLOAD_MB * 1024 * 1024,
    accept,
    scratchDir: config.scratchDir,
  };
}

/** How a job's `url` input is fetched: the address policy, the size limit and the media types expected. */
export interface UrlDownload {
  policy: OutboundPolicy;
  maxBytes: number;
  accept: string[];
  scratchDir: string;
  /** The activity's cancellation: stops the download, its partial file removed. */
  signal?: AbortSignal;
}

/**
 * How long a download may wait for an answer's headers, or for the next bytes of its body: a stalled server ends the
 * step, a slow steady one does not (the activity's heartbeats and timeout bound the whole).
 */
export const DOWNLOAD_WAIT_MS = 120_000;

/**
 * Downloads `url` (SSRF-guarded, redirects re-checked, at most `maxBytes`, streamed: never in memory) into the job
 * under `key`, through a scratch file removed afterwards; a retry finds the copy and downloads nothing again.
 */
async function downloadInto(
  store: BlobStore,
  key: string,
  url: string,
  mime: string,
  d: UrlDownload,
): Promise<{ key: string; sha256: string }> {
  // In this process's private scratch (core/stores/scratch.ts), removed when the step ends or the process dies.
  return scratchAt(d.scratchDir).withDir('url-', async (dir) => {
    const got = await downloadToFile(url, path.join(dir, 'input'), {
      policy: d.policy,
      maxBytes: d.maxBytes,
      timeoutMs: DOWNLOAD_WAIT_MS,
      signal: d.signal,
      accept: d.accept,
    });
    const ref = await store.putFile(key, got.path, { mime, sha256: got.sha256 });
    return { key, sha256: ref.sha256 };
  });
}
