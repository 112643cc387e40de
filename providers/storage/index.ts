import path from 'node:path';
import type { BlobStore } from '../../core/stores/blob-store';
import type { Config } from '../../core/config/config';
import { LocalBlobStore } from './local.store';

export { LocalBlobStore };

/**
 * Builds the blob store the configuration names. The S3 store (and its client library, ~15 MB of a process's memory)
 * is loaded only when the configuration names it: a process on the local store never loads it.
 */
export async function createBlobStore(config: Config): Promise<BlobStore> {
  if (config.STORAGE === 's3') {
    const { S3BlobStore } = await import('./s3.store');
    return new S3BlobStore({
      endpoint: config.S3_ENDPOINT!,
      accessKey: config.S3_ACCESS_KEY!,
      secretKey: config.S3_SECRET_KEY!,
      bucket: config.S3_BUCKET,
      region: config.S3_REGION,
    }).init();
  }
  return new LocalBlobStore(path.join(config.dataDir, 'blobs')).init();
}
