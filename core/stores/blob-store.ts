import type { Readable } from 'node:stream';

/** A reference to stored bytes. Activities and workflows exchange these, never the bytes. */
export interface BlobRef {
  key: string;
  sha256: string;
  size: number;
  mime: string;
}

export interface BlobStat extends BlobRef {
  modifiedAt: string;
}

export interface PutOptions {
  mime?: string;
  /**
   * The body's sha256 (hex) when the caller has already computed it over the same bytes (an upload the API hashed
   * for its cache lookup, api/uploads.ts `uploadSha256`): recorded as the blob's hash instead of hashing again.
   */
  sha256?: string;
}

/**
 * Streams in, streams out: no implementation holds a whole file in memory. A `put` is atomic: a reader sees the
 * old object or the new one, never a partial one. Keys are `/`-separated and never contain `..` or a leading `/`.
 */
export interface BlobStore {
  readonly kind: 'local' | 's3';
  put(key: string, body: Readable | Buffer | string, opts?: PutOptions): Promise<BlobRef>;
  /**
   * `put` of a file on this host's disk (a download, an upload's temp file, a rendered page), the file left as it
   * is. The local store copies it in the kernel (`copy_file_range`, a reflink where the file system has them): no
   * byte passes through the process, so a 500 MB input costs its heap nothing (issue 33).
   */
  putFile(key: string, file: string, opts?: PutOptions): Promise<BlobRef>;
  /** Throws `BlobNotFoundError` when the key is absent. */
  get(key: string): Promise<Readable>;
  stat(key: string): Promise<BlobStat | null>;
  /** Every object whose key starts with `prefix`, in key order. */
  list(prefix: string): Promise<BlobStat[]>;
  /**
   * The keys of `list(prefix)` without their metadata: one listing, no per-object reads (indexes kept in key names).
   */
  listKeys(prefix: string): Promise<string[]>;
  /** Deleting an absent key is not an error. */
  delete(key: string): Promise<void>;
  /** A time-limited URL for a direct GET, or null when the backend has none. */
  presign(key: string, expirySeconds: number): Promise<string | null>;
  /** Throws when the store is not reachable or not writable. */
  check(): Promise<void>;
}

export class BlobNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`blob not found: ${key}`);
    this.name = 'BlobNotFoundError';
  }
}

const KEY = /^[A-Za-z0-9._\-]+(\/[A-Za-z0-9._\-]+)*$/;

/** Validates a key: relative, `/`-separated segments of safe characters, no `.` or `..` segments. */
export function assertValidKey(key: string): void {
  if (key.length === 0 || key.length > 512 || !KEY.test(key) || key.split('/').some((s) => s === '.' || s === '..')) {
    throw new Error(`invalid blob key: ${JSON.stringify(key)}`);
  }
}

export function assertValidPrefix(prefix: string): void {
  if (prefix === '') return;
  assertValidKey(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
}

/** Reads a whole blob into memory: only for JSON records and results, never for media. */
export async function readBlobBuffer(store: BlobStore, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of await store.get(key)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** A JSON blob, parsed (the same limits as `readBlobBuffer`). */
export async function readBlobJson<T>(store: BlobStore, key: string): Promise<T> {
  return JSON.parse((await readBlobBuffer(store, key)).toString('utf8')) as T;
}

export function writeBlobJson(store: BlobStore, key: string, value: unknown): Promise<BlobRef> {
  return store.put(key, JSON.stringify(value), { mime: 'application/json' });
}

/** JSON blobs read through {@link cachedJsonReader}. */
export interface CachedJsonReader<T> {
  read(key: string): Promise<T>;
  /** Keeps a value just written, so its first read costs nothing. */
  remember(key: string, value: T): void;
}

/**
 * Reads of JSON blobs that are written once and never replaced (batch manifests), kept in memory: the last
 * `capacity` keys read or remembered, the oldest dropped first. A failed read is not kept.
 */
export function cachedJsonReader<T>(store: BlobStore, capacity: number): CachedJsonReader<T> {
  const kept = new Map<string, T>();
  const remember = (key: string, value: T) => {
    kept.set(key, value);
    if (kept.size > capacity) kept.delete(kept.keys().next().value!);
  };
  return {
    async read(key) {
      let value = kept.get(key);
      if (value === undefined) remember(key, (value = await readBlobJson<T>(store, key)));
      return value;
    },
    remember,
  };
}
