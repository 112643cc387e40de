import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../errors';

/**
 * Where a client-named server file really is: its real path (symlinks resolved) when it exists, else the path
 * resolved against the working directory. Checking this, not the name as given, keeps `..` and symlinks from
 * leading out of the allowed roots.
 */
async function resolveInputPath(filename: string): Promise<string> {
  const wanted = path.resolve(filename);
  return fs.realpath(wanted).catch(() => wanted);
}

/**
 * True when a resolved path is one of the allowed input roots (config `inputRoots`, contract §6) or lies inside one.
 */
export async function isInsideInputRoots(resolved: string, roots: readonly string[]): Promise<boolean> {
  const real = await Promise.all(roots.map((r) => fs.realpath(r).catch(() => path.resolve(r))));
  return real.some((r) => resolved === r || resolved.startsWith(r.endsWith(path.sep) ? r : r + path.sep));
}

/**
 * Refuses (403 FORBIDDEN, contract §1) a server file that lies outside the allowed input roots, by where it really
 * is, and a relative name: what it names would depend on the server's working directory.
 */
export async function assertInsideInputRoots(filename: string, roots: readonly string[]): Promise<void> {
  if (path.isAbsolute(filename) && (await isInsideInputRoots(await resolveInputPath(filename), roots))) return;
  throw new AppError('FORBIDDEN', 'The file lies outside the directories this server may read (INPUT_ROOTS).', {
    filename,
  });
}
