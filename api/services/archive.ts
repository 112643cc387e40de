import type { BlobStore } from '../../core/stores/blob-store';
import type { ArchiveEntry } from '../../core/stores/zip';
import { jobOutputPrefix } from '../../core/stores/records';

export { zipStream, type ArchiveEntry } from '../../core/stores/zip';

/** Entries of a job's produced files, named relative to its output folder. */
export async function jobArchiveEntries(store: BlobStore, jobId: string, folder = ''): Promise<ArchiveEntry[]> {
  const prefix = jobOutputPrefix(jobId);
  const blobs = await store.list(prefix);
  return blobs.map((b) => ({ name: `${folder}${b.key.slice(prefix.length)}`, blob: b }));
}

/** `Content-Disposition` for a download, with an ASCII fallback and the RFC 5987 form. */
export function attachment(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}
