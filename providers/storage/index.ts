import path from 'node:path';
import type { BlobStore } from '../../core/stores/blob-store';
import type { Config } from '../../core/config/config';
import { LocalBlobStore } from './local.store';
import { S3BlobStore } from './s3.store';

export { LocalBlobStore, S3BlobStore };

/** Builds the blob store the configuration names. */
export async function createBlobStore(config: Config): Promise<BlobStore> {
  if (config.STORAGE === 's3') {
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
