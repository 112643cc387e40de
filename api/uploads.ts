import path from 'node:path';
import { z } from './openapi';
import { fileSha256 } from '../core/stores/file-hash';
import type { BlobRef, BlobStore } from '../core/stores/blob-store';
import { newJobId, newUploadKey } from '../core/jobs/ids';

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
  /** The job this upload becomes the input of, if a job is started for it (its key names the job). */
  jobId: string;
}

/**
 * Streams a received upload from its temp file into the blob store under a generated key named after the job it
 * may become the input of (the client's file name is kept only as data). The temp file itself is removed by the body
 * middleware when the request ends.
 */
export async function storeUpload(store: BlobStore, file: UploadedFile): Promise<StoredUpload> {
  const original = file.originalFilename ?? 'upload';
  const jobId = newJobId();
  const key = newUploadKey(path.extname(original), jobId);
  // Already hashed for a cache lookup (`uploadSha256`): the store records that hash instead of computing it again.
  const known = uploadHashes.get(file);
  const ref = await store.putFile(key, file.filepath, {
    mime: file.mimetype ?? 'application/octet-stream',
    ...(known ? { sha256: await known } : {}),
  });
  return { ...ref, originalName: original, jobId };
}

/** The job parameters naming a request's upload as the job's input. */
export const uploadInput = (upload: StoredUpload) => ({
  file_key: upload.key,
  original_name: upload.originalName,
});

/**
 * Runs a request's work on its upload, offered to the job the work starts (`JobService.offerUpload`): a job started
 * on it takes it as its input, under the job id the upload's key names, and owns it from then on: it stays for
 * restarts until retention removes it with the job's outputs (worker/retention-sweeper.ts), whatever the request
 * answers (the result, the job's failure, a 503 or 504 while the job runs on, a 202). An upload no job took (a cache
 * hit, a refusal before the job) is removed when the work ends.
 */
export async function withUpload<T>(
  jobs: { store: BlobStore; offerUpload(upload: StoredUpload): UploadOffer },
  upload: StoredUpload,
  work: () => Promise<T>,
): Promise<T> {
  const offer = jobs.offerUpload(upload);
  try {
    return await work();
  } finally {
    offer.withdraw();
    if (!offer.taken) await jobs.store.delete(upload.key).catch(() => undefined);
  }
}

/** An upload offered to the job a request starts (`withUpload`): `taken` once a job's start was sent with it. */
export interface UploadOffer {
  readonly taken: boolean;
  withdraw(): void;
}
