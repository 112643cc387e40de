import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import type { BlobStore } from '../../../core/stores/blob-store';
import { LocalBlobStore } from '../../../providers/storage';
import { S3BlobStore } from '../../../providers/storage/s3.store';
import { sharedMinioServer, tempDir } from '../servers/engines';

/** A blob store under test, with what the contract inspects beyond the interface. */
export interface Backend {
  store: BlobStore;
  /** Local only: the store's root directory. */
  root?: string;
  /** Incomplete writes the backend still holds for a key (temp files, multipart uploads). */
  leftovers(key: string): Promise<string[]>;
  /** Removes everything the store holds (its directory, or its bucket with every object and upload in it). */
  dispose(): Promise<void>;
}

/** A store in a temp directory of its own. */
export async function localBackend(): Promise<Backend> {
  const dir = tempDir('docproc-blobs-');
  const root = path.join(dir, 'blobs');
  const store = await new LocalBlobStore(root).init();
  return {
    store,
    root,
    leftovers: async () => fs.readdirSync(path.join(root, 'tmp')),
    dispose: () => fs.promises.rm(dir, { recursive: true, force: true }),
  };
}

/** A bucket of its own on the shared MinIO. */
export async function s3Backend(): Promise<Backend> {
  const minio = await sharedMinioServer();
  const bucket = `docproc-test-${randomBytes(6).toString('hex')}`;
  const store = await new S3BlobStore({
    endpoint: minio.endpoint,
    accessKey: minio.accessKey,
    secretKey: minio.secretKey,
    bucket,
  }).init();
  expect(await store.client.bucketExists(bucket)).to.equal(true);
  return {
    store,
    leftovers: async (key: string) => {
      const found: string[] = [];
      const s = store.client.listIncompleteUploads(bucket, key, true);
      for await (const u of s as AsyncIterable<{ key: string; uploadId: string }>) {
        if (u.key === key) found.push(`multipart upload ${u.uploadId} of ${u.key}`);
      }
      return found;
    },
    dispose: async () => {
      const uploads = store.client.listIncompleteUploads(bucket, '', true) as AsyncIterable<{ key: string }>;
      for await (const u of uploads) await store.client.removeIncompleteUpload(bucket, u.key);
      const names: string[] = [];
      for await (const o of store.client.listObjectsV2(bucket, '', true) as AsyncIterable<{ name?: string }>)
        if (o.name) names.push(o.name);
      if (names.length) await store.client.removeObjects(bucket, names);
      await store.client.removeBucket(bucket);
    },
  };
}
