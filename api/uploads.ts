import { createReadStream } from 'node:fs';
import path from 'node:path';
import { z } from './openapi';
import { fileSha256 } from '../core/file-hash';
import type { BlobRef, BlobStore } from '../core/blob-store';
import { AppError } from '../core/errors';
import { DISCARD_UPLOAD } from '../core/job-params';
import { newUploadKey } from '../core/ids';
import { JobAccepted } from './services/async-preference';

/** A file received by a multipart route (formidable's shape). */
export interface UploadedFile {
  filepath: string;
  originalFilename: string | null;
  mimetype: string | null;
  size: number;
}

/** The zod schema of a multipart file field; documented as a binary string in OpenAPI. */
export const uploadedFile = z
  .custom<UploadedFile>(
    (v) => typeof v === 'object' && v !== null && typeof (v as UploadedFile).filepath === 'string',
    { message: 'a file is required' },
  )
  .openapi({ type: 'string', format: 'binary' });

/** The hashes of received uploads, computed at most once per request (`uploadSha256`). */
const uploadHashes = new WeakMap<UploadedFile, Promise<string>>();

/**
 * The sha256 of a received upload, as the blob store records it: computed once per upload, so a route that looks its
 * result up in the cache before storing it (api/services/direct-pdf.ts, direct-answer-media.ts) does not make
 * `storeUpload` hash the bytes a second time.
 */
export function uploadSha256(file: UploadedFile): Promise<string> {
  let hash = uploadHashes.get(file);
  if (!hash) uploadHashes.set(file, (hash = fileSha256(file.filepath)));
  return hash;
}

export interface StoredUpload extends BlobRef {
  originalName: string;
}

/**
 * Streams a received upload from its temp file into the blob store under a generated key (the client's file
 * name is kept only as data). The temp file itself is removed by the body middleware when the request ends.
 */
export async function storeUpload(store: BlobStore, file: UploadedFile): Promise<StoredUpload> {
  const original = file.originalFilename ?? 'upload';
  const key = newUploadKey(path.extname(original));
  // Already hashed for a cache lookup (`uploadSha256`): the store records that hash instead of computing it again.
  const known = uploadHashes.get(file);
  const ref = await store.put(key, createReadStream(file.filepath), {
    mime: file.mimetype ?? 'application/octet-stream',
    ...(known ? { sha256: await known } : {}),
  });
  return { ...ref, originalName: original };
}

/** The job parameters naming a synchronous request's upload as the job's input, removed when the job finishes. */
export const uploadInput = (upload: StoredUpload) => ({
  file_key: upload.key,
  [DISCARD_UPLOAD]: true,
  original_name: upload.originalName,
});

/**
 * Runs a synchronous request's job on its upload and removes the upload afterwards, except when the request gave
 * up waiting (504 `TIMEOUT`): the job still needs its input then, and removes it itself when it finishes (the job's
 * parameters carry `discard_upload`).
 */
export async function withUpload<T>(store: BlobStore, upload: StoredUpload, work: () => Promise<T>): Promise<T> {
  let keep = false;
  try {
    return await work();
  } catch (e) {
    // The job goes on with the upload: a 504, or a 202 to a client that did not wait (JobAccepted).
    keep = (e instanceof AppError && e.code === 'TIMEOUT') || e instanceof JobAccepted;
    throw e;
  } finally {
    if (!keep) await store.delete(upload.key).catch(() => undefined);
  }
}
