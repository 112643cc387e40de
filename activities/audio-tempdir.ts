import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** Runs `work` in a fresh temporary directory, removed afterwards whatever happens. */
export async function withTempDir<T>(prefix: string, work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  try {
    return await work(dir);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
