// PostgreSQL for the cluster layout on a real Temporal server (scripts/cluster-server.mjs): initdb once, and the
// server process on a loopback port, run as Debian's `postgres` user when this runs as root (PostgreSQL refuses
// root). Plain Node, no dependency.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { listensOn, sleep, stopChild } from './services.mjs';

/** The database user, as docker-compose.yml's postgresql and temporal services name it (initdb's superuser). */
export const POSTGRES_USER = 'temporal';

/** Runs a command to its end; resolves with its output, rejects with it when it fails. */
export function exec(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`${path.basename(cmd)} ${args[0] ?? ''} exited ${code}: ${out.trim().slice(-1500)}`)),
    );
  });
}

/** The user PostgreSQL runs as: itself, or (it refuses to run as root) Debian's `postgres` user. */
export function postgresUser() {
  if (process.getuid?.() !== 0) return {};
  const r = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (r.status !== 0)
    throw new Error(
      "postgresql: running as root, and there is no `postgres` user to run PostgreSQL as (Debian's package makes one)",
    );
  return { uid: Number(r.stdout), gid: Number(g.stdout) };
}

/** Makes `dir` and lets `user` own it; its parents must let that user through (said plainly when they do not). */
function ownedDir(dir, user) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (user.uid === undefined) return;
  fs.chownSync(dir, user.uid, user.gid);
  for (let p = path.dirname(dir); ; p = path.dirname(p)) {
    const mode = fs.statSync(p).mode;
    if (!(mode & 0o001)) {
      // DATA_DIR itself (a temp dir is 0700): let other users through it, not list it.
      if (p === path.dirname(dir)) fs.chmodSync(p, mode | 0o001);
      else
        throw new Error(
          `postgresql: ${p} does not let the postgres user through (chmod o+x it, or choose another DATA_DIR)`,
        );
    }
    if (p === path.dirname(p)) break;
  }
}

/** initdb once: the `temporal` superuser with the password, loopback only, scram-sha-256. */
export async function initPostgres({ binDir, dir, password, user }) {
  if (fs.existsSync(path.join(dir, 'PG_VERSION'))) return false;
  ownedDir(dir, user);
  const pwfile = path.join(dir, '..', `.pgpass-${process.pid}`);
  fs.writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (user.uid !== undefined) fs.chownSync(pwfile, user.uid, user.gid);
  try {
    await exec(
      path.join(binDir, 'initdb'),
      ['-D', dir, '-U', POSTGRES_USER, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--locale=C'],
      { ...user, cwd: os.tmpdir() },
    );
  } finally {
    fs.rmSync(pwfile, { force: true });
  }
  return true;
}

/**
 * PostgreSQL on 127.0.0.1:`port` over `dir` (no Unix socket), resolves once it accepts connections from this child.
 */
export async function startPostgres({ binDir, dir, port, user, onSpawn }) {
  const child = spawn(
    path.join(binDir, 'postgres'),
    [
      '-D',
      dir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: os.tmpdir(), ...user },
  );
  onSpawn?.(child);
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`postgres exited (${child.signalCode ?? child.exitCode}) before it accepted connections`);
    const r = spawnSync(path.join(binDir, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-t', '2'], {
      encoding: 'utf8',
    });
    if (r.status === 0 && listensOn(child.pid, port) !== false) break;
    if (Date.now() > deadline) {
      await stopChild(child, 5000);
      throw new Error(`postgres on port ${port} did not accept connections within 120 s`);
    }
    await sleep(200);
  }
  return child;
}
