import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import type { BlobStore } from '../core/blob-store';
import { isInsideInputRoots } from '../core/input-roots';
import { jobInternalKey } from '../core/records';

/**
 * A job's input file: an upload's blob (`file_key`), or a file inside the allowed roots (`filename`, contract §6),
 * copied into the job under `name` once (a retry or restart reuses the copy).
 */
export async function jobInputBlob(
  store: BlobStore,
  inputRoots: string[],
  jobId: string,
  p: Record<string, unknown>,
  copy: { name: string; mime: string },
): Promise<{ key: string; sha256: string }> {
  if (typeof p.file_key === 'string') {
    const st = await store.stat(p.file_key);
    if (!st) throw ApplicationFailure.nonRetryable('The uploaded file is gone.', 'FILE_NOT_FOUND', {});
    return { key: p.file_key, sha256: st.sha256 };
  }
  const key = jobInternalKey(jobId, copy.name);
  const existing = await store.stat(key);
  if (existing) return { key, sha256: existing.sha256 };
  if (!path.isAbsolute(String(p.filename))) {
    throw ApplicationFailure.nonRetryable('The file must be named by an absolute path.', 'FORBIDDEN', { filename: p.filename });
  }
  const wanted = path.resolve(String(p.filename));
  const real = await fs.realpath(wanted).catch(() => null);
  if (!real) throw ApplicationFailure.nonRetryable('The file does not exist.', 'FILE_NOT_FOUND', { filename: p.filename });
  if (!(await isInsideInputRoots(real, inputRoots))) {
    throw ApplicationFailure.nonRetryable('The file lies outside the directories this server may read.', 'FORBIDDEN', { filename: p.filename });
  }
  const st = await fs.stat(real);
  if (!st.isFile()) throw ApplicationFailure.nonRetryable('The path is not a file.', 'FILE_NOT_FOUND', { filename: p.filename });
  const ref = await store.put(key, createReadStream(real), { mime: copy.mime });
  return { key, sha256: ref.sha256 };
}
