import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from '../core/blob-store';

const DIR = path.join(os.tmpdir(), 'docproc-worker-files');

/**
 * A local file with a blob's bytes, for engines that read files (pdftoppm, tesseract). Kept per content hash, so
 * the page groups of one document on one worker download it once; written atomically.
 */
export async function localCopy(store: BlobStore, key: string, sha256: string, ext = ''): Promise<string> {
  await fs.mkdir(DIR, { recursive: true });
  const target = path.join(DIR, `${sha256 || key.replace(/[^A-Za-z0-9]/g, '_')}${ext}`);
  if (await fs.stat(target).catch(() => null)) return target;
  const tmp = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}.part`;
  try {
    await pipeline(await store.get(key), createWriteStream(tmp));
    await fs.rename(tmp, target);
  } finally {
    await fs.rm(tmp, { force: true });
  }
  return target;
}
