import { constants as fsConstants, createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Writable, type Readable } from 'node:stream';
import {
  assertValidKey,
  assertValidPrefix,
  BlobNotFoundError,
  type BlobRef,
  type BlobStat,
  type BlobStore,
  type PutOptions,
} from '../../core/stores/blob-store';
import { HashingStream } from './hashing';

interface Meta {
  sha256: string;
  size: number;
  mime: string;
}

/**
 * Blobs as files under `root/objects/<key>`, their metadata as JSON under `root/meta/<key>.json`.
 * Writes go to `root/tmp/` first and are renamed into place, so a crash leaves no partial object.
 */
export class LocalBlobStore implements BlobStore {
  readonly kind = 'local' as const;
  private readonly objects: string;
  private readonly meta: string;
  private readonly tmp: string;

  constructor(readonly root: string) {
    this.objects = path.join(root, 'objects');
    this.meta = path.join(root, 'meta');
    this.tmp = path.join(root, 'tmp');
  }

  async init(): Promise<this> {
    await Promise.all([this.objects, this.meta, this.tmp].map((d) => fs.mkdir(d, { recursive: true })));
    // Leftovers of a crash mid-write: temp files of a writer that no longer runs (named `p<pid>-…`), and any older
    // than a day (a writer on another host sharing the directory, or a name from before the pid prefix).
    const cutoff = Date.now() - 24 * 3600_000;
    for (const f of await fs.readdir(this.tmp)) {
      const p = path.join(this.tmp, f);
      const writer = /^p(\d+)-/.exec(f);
      if (writer && !writerRuns(Number(writer[1]))) {
        await fs.rm(p, { force: true });
        continue;
      }
      const st = await fs.stat(p).catch(() => null);
      if (st && st.mtimeMs < cutoff) await fs.rm(p, { force: true });
    }
    return this;
  }

  private objectPath(key: string): string {
    assertValidKey(key);
    return path.join(this.objects, ...key.split('/'));
  }

  private metaPath(key: string): string {
    return path.join(this.meta, ...key.split('/')) + '.json';
  }

  async put(key: string, body: Readable | Buffer | string, opts: PutOptions = {}): Promise<BlobRef> {
    return this.write(key, opts, async (tmpFile) => {
      if (typeof body === 'string' || Buffer.isBuffer(body)) {
        // Bytes already in memory: one write, no stream machinery.
        const bytes = typeof body === 'string' ? Buffer.from(body) : body;
        await fs.writeFile(tmpFile, bytes, { flag: 'wx' });
        return { sha256: opts.sha256 ?? createHash('sha256').update(bytes).digest('hex'), size: bytes.length };
      }
      const hasher = new HashingStream(opts.sha256);
      await pipeline(body, hasher, createWriteStream(tmpFile, { flags: 'wx' }));
      return { sha256: hasher.digest(), size: hasher.size };
    });
  }

  async putFile(key: string, file: string, opts: PutOptions = {}): Promise<BlobRef> {
    return this.write(key, opts, async (tmpFile) => {
      // The copy first, then the hash of the copy when the caller has none: what is stored is what was hashed.
      await fs.copyFile(file, tmpFile, fsConstants.COPYFILE_EXCL | fsConstants.COPYFILE_FICLONE);
      const size = (await fs.stat(tmpFile)).size;
      if (opts.sha256 !== undefined) return { sha256: opts.sha256, size };
      const hasher = new HashingStream();
      await pipeline(createReadStream(tmpFile), hasher, new Writable({ write: (_c, _e, cb) => cb() }));
      return { sha256: hasher.digest(), size };
    });
  }

  /**
   * Writes an object through a temp file `fill` writes (and returns the hash and size of), then its metadata, then
   * renames both into place; whatever fails, nothing stays in `tmp/`.
   */
  private async write(
    key: string,
    opts: PutOptions,
    fill: (tmpFile: string) => Promise<{ sha256: string; size: number }>,
  ): Promise<BlobRef> {
    const target = this.objectPath(key);
    const tmpFile = path.join(this.tmp, `p${process.pid}-${randomUUID()}`);
    try {
      const { sha256, size } = await fill(tmpFile);
      const ref: BlobRef = { key, sha256, size, mime: opts.mime ?? 'application/octet-stream' };
      const meta: Meta = { sha256: ref.sha256, size: ref.size, mime: ref.mime };
      const tmpMeta = tmpFile + '.meta';
      await fs.writeFile(tmpMeta, JSON.stringify(meta));
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.mkdir(path.dirname(this.metaPath(key)), { recursive: true });
      // Metadata first, then the object: an object is visible only once its metadata exists.
      await fs.rename(tmpMeta, this.metaPath(key));
      await fs.rename(tmpFile, target);
      return ref;
    } catch (err) {
      await fs.rm(tmpFile, { force: true });
      await fs.rm(tmpFile + '.meta', { force: true });
      throw err;
    }
  }

  async get(key: string): Promise<Readable> {
    const p = this.objectPath(key);
    const fh = await fs.open(p, 'r').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT' || e.code === 'EISDIR' || e.code === 'ENOTDIR') throw new BlobNotFoundError(key);
      throw e;
    });
    const st = await fh.stat();
    if (!st.isFile()) {
      await fh.close();
      throw new BlobNotFoundError(key);
    }
    // The stream owns the FileHandle and closes it; handing it the raw fd would close it twice (once on GC).
    return fh.createReadStream({ autoClose: true });
  }

  async stat(key: string): Promise<BlobStat | null> {
    const p = this.objectPath(key);
    const st = await fs.stat(p).catch(() => null);
    if (!st || !st.isFile()) return null;
    const meta = await this.readMeta(key);
    return {
      key,
      size: st.size,
      sha256: meta?.sha256 ?? '',
      mime: meta?.mime ?? 'application/octet-stream',
      modifiedAt: st.mtime.toISOString(),
    };
  }

  private async readMeta(key: string): Promise<Meta | null> {
    try {
      return JSON.parse(await fs.readFile(this.metaPath(key), 'utf8')) as Meta;
    } catch {
      return null;
    }
  }

  async list(prefix: string): Promise<BlobStat[]> {
    const keys = await this.listKeys(prefix);
    const stats = await Promise.all(keys.map((k) => this.stat(k)));
    return stats.filter((s): s is BlobStat => s !== null);
  }

  async listKeys(prefix: string): Promise<string[]> {
    assertValidPrefix(prefix);
    // Walk only the directory that can hold matches.
    const dirPart = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    const start = dirPart ? path.join(this.objects, ...dirPart.split('/')) : this.objects;
    const keys: string[] = [];
    const walk = async (dir: string, rel: string): Promise<void> => {
      const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        const k = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) {
          if (k.startsWith(prefix) || prefix.startsWith(k + '/')) await walk(path.join(dir, e.name), k);
        } else if (e.isFile() && k.startsWith(prefix)) keys.push(k);
      }
    };
    await walk(start, dirPart);
    return keys.sort();
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.objectPath(key), { force: true });
    await fs.rm(this.metaPath(key), { force: true });
  }

  async presign(): Promise<string | null> {
    return null;
  }

  async check(): Promise<void> {
    // Named like a writer's temp file, so a process killed between these two lines leaves nothing the next start
    // does not sweep.
    const probe = path.join(this.tmp, `p${process.pid}-health-${randomUUID()}`);
    await fs.writeFile(probe, 'ok');
    await fs.rm(probe, { force: true });
  }
}

/** Whether the process that named a temp file still runs (this one included: another store of it may be writing). */
function writerRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
