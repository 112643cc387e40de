import { Client } from 'minio';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import {
  assertValidKey,
  assertValidPrefix,
  BlobNotFoundError,
  type BlobRef,
  type BlobStat,
  type BlobStore,
  type PutOptions,
} from '../../core/stores/blob-store';
import { mapPool } from '../../core/runtime/pool';
import { toReadable } from './hashing';

export interface S3Options {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  bucket: string;
  region?: string;
}

const META_PREFIX = '_meta/';
/** Size of a multipart part (S3's minimum is 5 MiB); bounds the memory a put holds. */
const PART_SIZE = 8 * 1024 * 1024;
const MAX_PARTS = 10_000;
/** Parts double in size every 1000 parts (up to S3's 5 GiB), so objects of several TB still fit in 10 000 parts. */
const partSizeAfter = (parts: number): number => Math.min(PART_SIZE * 2 ** Math.floor(parts / 1000), 5 * 1024 ** 3);

/**
 * S3-compatible blob store on the `minio` client. Uploads stream through a hashing pass in bounded parts; S3 makes
 * a PUT and a multipart completion atomic, so readers never see a partial object. The sha256 lives in a sidecar
 * object under `_meta/`.
 */
export class S3BlobStore implements BlobStore {
  readonly kind = 's3' as const;
  readonly client: Client;
  readonly bucket: string;

  constructor(opts: S3Options) {
    const url = new URL(opts.endpoint);
    this.client = new Client({
      endPoint: url.hostname,
      port: url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80,
      useSSL: url.protocol === 'https:',
      accessKey: opts.accessKey,
      secretKey: opts.secretKey,
      region: opts.region ?? 'us-east-1',
      pathStyle: true,
    });
    this.bucket = opts.bucket;
  }

  async init(): Promise<this> {
    if (!(await this.client.bucketExists(this.bucket))) {
      await this.client.makeBucket(this.bucket).catch(async (e: { code?: string }) => {
        if (e.code !== 'BucketAlreadyOwnedByYou' && !(await this.client.bucketExists(this.bucket))) throw e;
      });
    }
    return this;
  }

  async put(key: string, body: Readable | Buffer | string, opts: PutOptions = {}): Promise<BlobRef> {
    assertValidKey(key);
    if (key.startsWith(META_PREFIX)) throw new Error(`invalid blob key: ${key}`);
    const mime = opts.mime ?? 'application/octet-stream';
    // The client's own putObject buffers a stream of unknown length in parts of ~550 MB, fails on an empty
    // stream and leaves its multipart upload behind when the source fails. So parts are cut here: a body smaller
    // than one part is a single PUT, a larger one a multipart upload completed only once the source has ended
    // (S3 makes either atomic) and aborted on any failure. At most one part is held in memory.
    // The hash is the caller's when it has computed it over the same bytes (PutOptions.sha256).
    const hasher = opts.sha256 === undefined ? createHash('sha256') : undefined;
    let size = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let uploadId: string | undefined;
    const parts: { part: number; etag: string }[] = [];
    const uploadPending = async (): Promise<void> => {
      const payload = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      uploadId ??= await this.client.initiateNewMultipartUpload(this.bucket, key, { 'Content-Type': mime });
      const part = parts.length + 1;
      if (part > MAX_PARTS) throw new Error(`blob too large for ${MAX_PARTS} parts: ${key}`);
      const { etag } = await this.client.uploadPart(
        { bucketName: this.bucket, objectName: key, uploadID: uploadId, partNumber: part, headers: {} },
        payload,
      );
      parts.push({ part, etag });
    };
    try {
      for await (const c of toReadable(body)) {
        const chunk = Buffer.isBuffer(c) ? c : Buffer.from(c as Uint8Array);
        hasher?.update(chunk);
        size += chunk.length;
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes >= partSizeAfter(parts.length)) await uploadPending();
      }
      if (uploadId === undefined) {
        const whole = Buffer.concat(pending, pendingBytes);
        pending = [];
        await this.client.putObject(this.bucket, key, whole, whole.length, { 'Content-Type': mime });
      } else {
        if (pendingBytes > 0) await uploadPending();
        await this.client.completeMultipartUpload(this.bucket, key, uploadId, parts);
      }
    } catch (err) {
      if (uploadId !== undefined)
        await this.client.abortMultipartUpload(this.bucket, key, uploadId).catch(() => undefined);
      throw err;
    }
    const ref: BlobRef = { key, sha256: opts.sha256 ?? hasher!.digest('hex'), size, mime };
    const meta = Buffer.from(JSON.stringify({ sha256: ref.sha256, size: ref.size, mime }));
    await this.client.putObject(this.bucket, META_PREFIX + key + '.json', meta, meta.length, {
      'Content-Type': 'application/json',
    });
    return ref;
  }

  /** The file streamed through `put`'s parts (S3 has no copy from a local file). */
  putFile(key: string, file: string, opts: PutOptions = {}): Promise<BlobRef> {
    return this.put(key, createReadStream(file), opts);
  }

  async get(key: string): Promise<Readable> {
    assertValidKey(key);
    try {
      return await this.client.getObject(this.bucket, key);
    } catch (e) {
      if (isNotFound(e)) throw new BlobNotFoundError(key);
      throw e;
    }
  }

  async stat(key: string): Promise<BlobStat | null> {
    assertValidKey(key);
    try {
      const st = await this.client.statObject(this.bucket, key);
      const meta = st.metaData as Record<string, string>;
      return {
        key,
        size: st.size,
        sha256: await this.readSha(key, st.size),
        mime: meta['content-type'] ?? 'application/octet-stream',
        modifiedAt: new Date(st.lastModified).toISOString(),
      };
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  private async readSha(key: string, size: number): Promise<string> {
    try {
      const chunks: Buffer[] = [];
      for await (const c of await this.client.getObject(this.bucket, META_PREFIX + key + '.json'))
        chunks.push(c as Buffer);
      const meta = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { sha256: string; size: number };
      return meta.size === size ? meta.sha256 : '';
    } catch {
      return '';
    }
  }

  async list(prefix: string): Promise<BlobStat[]> {
    const keys = await this.listKeys(prefix);
    // Two requests per key, at most 32 keys at a time: unbounded, 10,000 keys made MinIO answer 429 SlowDown.
    const stats = await mapPool(keys, 32, (key) => this.stat(key));
    return stats.filter((s): s is BlobStat => s !== null);
  }

  async listKeys(prefix: string): Promise<string[]> {
    assertValidPrefix(prefix);
    const keys: string[] = [];
    const stream = this.client.listObjectsV2(this.bucket, prefix, true);
    for await (const item of stream as AsyncIterable<{ name?: string }>) {
      if (item.name && !item.name.startsWith(META_PREFIX)) keys.push(item.name);
    }
    return keys.sort();
  }

  async delete(key: string): Promise<void> {
    assertValidKey(key);
    await this.client.removeObject(this.bucket, key);
    await this.client.removeObject(this.bucket, META_PREFIX + key + '.json').catch(() => undefined);
  }

  async presign(key: string, expirySeconds: number): Promise<string | null> {
    assertValidKey(key);
    return this.client.presignedGetObject(this.bucket, key, expirySeconds);
  }

  async check(): Promise<void> {
    if (!(await this.client.bucketExists(this.bucket))) throw new Error(`bucket ${this.bucket} does not exist`);
  }
}

function isNotFound(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return code === 'NoSuchKey' || code === 'NotFound' || code === 'NoSuchObject';
}
