// The steps every setup module shares (the repository and cache paths, the one-line report, `which`, a child process,
// the cache lock): a leaf module, so engines.mjs, engines-llm.mjs and engines-speech.mjs import it and not each other.
// Plain Node with no dependency: it runs before `npm ci`.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CACHE_DIR = path.resolve(process.env.DOCPROC_CACHE_DIR || path.join(os.homedir(), '.cache', 'docproc'));

export function step(name, message) {
  process.stdout.write(`[setup] ${name}: ${message}\n`);
}

export function which(cmd) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const p = path.join(dir, cmd);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      /* not here */
    }
  }
  return null;
}

export function sha256File(p) {
  return createHash('sha256').update(fs.readFileSync(p)).digest('hex');
}

export function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: opts.stdio ?? 'inherit', env: opts.env ?? process.env, cwd: opts.cwd });
    let out = '';
    child.stdout?.on('data', (d) => (out += d));
    child.stderr?.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}\n${out.slice(-4000)}`)),
    );
  });
}

/**
 * Runs `fn` holding the lock file `<cache>/.<name>.lock`, so setups started at the same time (npm start and npm test)
 * take turns; a lock left by a process that is gone is taken over.
 */
export async function withCacheLock(name, fn) {
  const lock = path.join(CACHE_DIR, `.${name}.lock`);
  for (let said = false; ;) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      const pid = Number(fs.readFileSync(lock, 'utf8'));
      if (!isAlive(pid)) {
        fs.rmSync(lock, { force: true });
        continue;
      }
      if (!said) step(name, `waiting for another setup (pid ${pid})`);
      said = true;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

function isAlive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}
