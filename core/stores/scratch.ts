import { createWriteStream, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from './blob-store';

/** Directories removed when the process exits: one exit listener for all of a process's scratch areas. */
const exitRemovals = new Set<string>();
function removeOnExit(dir: string): void {
  if (exitRemovals.size === 0) {
    process.once('exit', () => {
      for (const d of exitRemovals) rmSync(d, { recursive: true, force: true });
    });
  }
  exitRemovals.add(dir);
}

/**
 * A process's scratch space for engines that read and write files (poppler, tesseract, ffmpeg): one directory per
 * process under the service's own root (`SCRATCH_DIR`, default `<DATA_DIR>/scratch`), mode 0700, files 0600.
 * Every directory and copy is removed when the step that asked for it ends; a process's whole directory is removed
 * when it exits, and the directories of processes that died without cleaning up are removed by the next one.
 */
export class Scratch {
  /** Local copies of blobs, shared by the steps that use the same content at the same time (counted). */
  private readonly copies = new Map<string, { users: number; ready: Promise<string> }>();
  private opened: Promise<void> | undefined;

  /** `base` is the shared root; this process works in `<base>/p<pid>-<random>`. */
  constructor(
    readonly base: string,
    readonly dir = path.join(base, `p${process.pid}-${Math.random().toString(36).slice(2, 8)}`),
  ) {}

  /** Creates this process's directory (0700) and removes those of dead processes; once. */
  open(): Promise<void> {
    this.opened ??= (async () => {
      await fs.mkdir(this.base, { recursive: true, mode: 0o700 });
      await fs.chmod(this.base, 0o700);
      await removeDeadProcessDirs(this.base);
      await fs.mkdir(path.join(this.dir, 'files'), { recursive: true, mode: 0o700 });
      removeOnExit(this.dir);
    })().catch((err: unknown) => {
      this.opened = undefined;
      throw err;
    });
    return this.opened;
  }

  /** Runs `work` in a fresh directory (0700) under this process's scratch, removed afterwards whatever happens. */
  async withDir<T>(prefix: string, work: (dir: string) => Promise<T>): Promise<T> {
    await this.open();
    const dir = await fs.mkdtemp(path.join(this.dir, prefix.replace(/[^A-Za-z0-9_-]/g, '') || 'step-'));
    try {
      return await work(dir);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * Runs `work` with a local file holding the blob's bytes (mode 0600). Steps of this process that read the same
   * content at the same time share one copy (the page groups of one document); the copy is removed when the last
   * of them ends.
   */
  async withBlobFile<T>(
    store: BlobStore,
    key: string,
    sha256: string,
    ext: string,
    work: (file: string) => Promise<T>,
  ): Promise<T> {
    await this.open();
    const name = `${(sha256 || key).replace(/[^A-Za-z0-9]/g, '_')}${ext.replace(/[^A-Za-z0-9.]/g, '')}`;
    const target = path.join(this.dir, 'files', name);
    let entry = this.copies.get(target);
    if (!entry) {
      entry = { users: 0, ready: copyBlob(store, key, target) };
      this.copies.set(target, entry);
    }
    entry.users++;
    try {
      return await work(await entry.ready);
    } finally {
      if (--entry.users === 0) {
        this.copies.delete(target);
        await entry.ready.then(
          () => fs.rm(target, { force: true }),
          () => undefined,
        );
      }
    }
  }
}

/** Writes a blob's bytes to `target` (mode 0600) through a temporary name, so a reader never sees a partial file. */
export async function copyBlob(store: BlobStore, key: string, target: string): Promise<string> {
  const tmp = `${target}.${Math.random().toString(36).slice(2)}.part`;
  try {
    await pipeline(await store.get(key), createWriteStream(tmp, { mode: 0o600 }));
    await fs.rename(tmp, target);
  } finally {
    await fs.rm(tmp, { force: true });
  }
  return target;
}

/** Removes `p<pid>-*` directories whose process no longer runs (a worker killed with SIGKILL leaves its own). */
async function removeDeadProcessDirs(base: string): Promise<void> {
  for (const name of await fs.readdir(base).catch(() => [] as string[])) {
    const m = /^p(\d+)-/.exec(name);
    if (!m || Number(m[1]) === process.pid || isAlive(Number(m[1]))) continue;
    await fs.rm(path.join(base, name), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const byRoot = new Map<string, Scratch>();

/** The process's scratch under `root` (one instance per root, so every activity of a worker shares it). */
export function scratchAt(root: string): Scratch {
  const resolved = path.resolve(root);
  let s = byRoot.get(resolved);
  if (!s) {
    s = new Scratch(resolved);
    byRoot.set(resolved, s);
  }
  return s;
}
