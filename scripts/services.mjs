// Starting and stopping the engines' servers (Temporal dev server, MinIO). Plain Node, shared by the start
// launcher and the tests.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import SEARCH_ATTRIBUTES from '../core/runtime/search-attributes.json' with { type: 'json' };

/** Resolves whether a TCP port can be bound on the host. */
export function portFree(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** A port the OS says is free now. */
export function freePort(host = '127.0.0.1') {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen({ port: 0, host, exclusive: true }, () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** The preferred port when free, else a free one; `moved` tells the caller to say so. */
export async function choosePort(preferred, taken = new Set()) {
  if (!taken.has(preferred) && (await portFree(preferred))) return { port: preferred, moved: false };
  let p;
  do p = await freePort();
  while (taken.has(p));
  return { port: p, moved: true };
}

/** Inodes of the listening TCP sockets on `port` (any address), from /proc/net/tcp{,6}; null where there is none. */
function listeningInodes(port) {
  if (!fs.existsSync('/proc/net/tcp')) return null;
  const inodes = new Set();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex, st 0A is LISTEN, the inode is the tenth column.
      if (cols.length > 9 && cols[3] === '0A' && parseInt(cols[1].split(':')[1], 16) === port) inodes.add(cols[9]);
    }
  }
  return inodes;
}

/** Inodes of the sockets process `pid` holds. */
function socketInodes(pid) {
  const out = new Set();
  let fds = [];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return out;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) out.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

/**
 * Whether process `pid` holds a listening TCP socket on `port` (Linux: /proc/net/tcp{,6} and the process's file
 * descriptors); undefined where /proc cannot tell. A readiness probe alone can be answered by another process that
 * bound the port first (another stack starting at the same moment), while this child fails to bind it and exits.
 */
export function listensOn(pid, port) {
  const listening = listeningInodes(port);
  if (!pid || listening === null) return undefined;
  if (!listening.size) return false;
  const mine = socketInodes(pid);
  return [...listening].some((i) => mine.has(i));
}

/**
 * Whether a process other than `pid` listens on `port` too: a server that sets SO_REUSEPORT (MinIO does) binds a port
 * another one holds without an error, and the kernel then shares the connections between them.
 */
export function sharesPort(pid, port) {
  const listening = listeningInodes(port);
  if (!pid || !listening?.size) return false;
  const mine = socketInodes(pid);
  return [...listening].some((i) => !mine.has(i));
}

/** Whether `child` (still running) is the process listening on `port`, as far as the platform can tell. */
const ownsPort = (child, port) =>
  child.exitCode === null && child.signalCode === null && listensOn(child.pid, port) !== false;

export function waitForTcp(port, host = '127.0.0.1', timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const sock = net.connect({ port, host });
      sock.once('connect', () => {
        sock.destroy();
        resolve();
      });
      sock.once('error', () => {
        sock.destroy();
        if (Date.now() > deadline) reject(new Error(`nothing listens on ${host}:${port} after ${timeoutMs} ms`));
        else setTimeout(attempt, 150);
      });
    };
    attempt();
  });
}

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/** Stops a child with SIGTERM, then SIGKILL after `graceMs`. Resolves when it has exited. */
export function stopChild(child, graceMs = 10_000) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Server-side settings of the dev server. Eager activity dispatch: an activity scheduled on the task queue of the
 * workflow task that scheduled it goes back to that worker in the task's completion response instead of through
 * matching, which saves a dispatch hop (about 35 ms per activity on a 2-core machine, bench/README.md). Temporal
 * Cloud enables it; a self-hosted cluster needs the same dynamic config key.
 */
export const DEV_SERVER_DYNAMIC_CONFIG = {
  'system.enableActivityEagerExecution': 'true',
  // One partition per task queue: with the default four, a task in a partition no worker polls waits up to 2 s to be
  // forwarded (measured on the media queue, whose worker has only a poller or two). One machine needs no more.
  'matching.numTaskqueueReadPartitions': '1',
  'matching.numTaskqueueWritePartitions': '1',
  // Task queue fairness (workflows/routing.ts): a job's page, chunk and model activities carry the job id as their
  // fairness key, and matching hands a queue's backlog out round-robin across keys, so a small job's step is not
  // queued behind a big job's backlog. Server 1.29 needs the priority matcher and fairness switched on; migration
  // lets a backlog written before fairness was on drain (a dev server DB from an earlier version).
  'matching.useNewMatcher': 'true',
  'matching.enableFairness': 'true',
  'matching.enableMigration': 'true',
};

/**
 * Starts `temporal server start-dev` on a SQLite file in WAL mode (or in memory when `dbFile` is null) with the
 * project's search attributes and `DEV_SERVER_DYNAMIC_CONFIG` (`dynamicConfig`: other settings, for a benchmark
 * that compares them), and resolves once the default namespace answers from this child.
 */
export async function startTemporalDev({
  bin,
  dbFile,
  port,
  uiPort,
  headless = false,
  ip = '127.0.0.1',
  stdio = 'pipe',
  logLevel = 'error',
  dynamicConfig = DEV_SERVER_DYNAMIC_CONFIG,
  onSpawn = undefined,
}) {
  const args = ['server', 'start-dev', '--ip', ip, '--port', String(port), '--log-level', logLevel];
  if (dbFile) {
    fs.mkdirSync(path.dirname(dbFile), { recursive: true });
    args.push('--db-filename', dbFile, '--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal');
  }
  if (headless) args.push('--headless');
  else args.push('--ui-port', String(uiPort), '--ui-ip', ip);
  for (const [k, v] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${k}=${v}`);
  for (const [k, v] of Object.entries(dynamicConfig)) args.push('--dynamic-config-value', `${k}=${v}`);
  const child = spawn(bin, args, { stdio: ['ignore', stdio, stdio], detached: false });
  onSpawn?.(child);
  const exited = new Promise((_, reject) =>
    child.once('exit', (code) => reject(new Error(`temporal dev server exited with ${code}`))),
  );
  exited.catch(() => undefined);
  const address = `${ip}:${port}`;
  const ready = (async () => {
    await waitForTcp(port, ip, 60_000);
    const deadline = Date.now() + 60_000;
    for (;;) {
      // Answers count only from this child (another server may hold the port: this one then exits).
      const ours = ownsPort(child, port);
      const r = ours
        ? spawnSync(bin, ['operator', 'namespace', 'describe', '--namespace', 'default', '--address', address], {
            encoding: 'utf8',
            timeout: 10_000,
          })
        : { status: null, stderr: `another process listens on ${address}` };
      if (r.status === 0 && ownsPort(child, port)) return;
      if (Date.now() > deadline) throw new Error(`temporal dev server on ${address} did not become ready: ${r.stderr}`);
      await sleep(200);
    }
  })();
  await Promise.race([ready, exited]);
  return {
    child,
    address,
    port,
    uiPort: headless ? null : uiPort,
    stop: (graceMs = 10_000) => stopChild(child, graceMs),
  };
}

/** Starts MinIO on loopback and resolves once its liveness endpoint answers 200 from this child. */
export async function startMinio({
  bin,
  dir,
  port,
  consolePort,
  accessKey = 'docproc-test',
  secretKey = 'docproc-test-secret',
  stdio = 'pipe',
  onSpawn = undefined,
}) {
  fs.mkdirSync(dir, { recursive: true });
  const child = spawn(
    bin,
    ['server', dir, '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`, '--quiet'],
    {
      stdio: ['ignore', stdio, stdio],
      env: { ...process.env, MINIO_ROOT_USER: accessKey, MINIO_ROOT_PASSWORD: secretKey, MINIO_BROWSER: 'off' },
    },
  );
  onSpawn?.(child);
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`minio exited with ${child.exitCode}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/minio/health/live`);
      if (res.ok && ownsPort(child, port)) {
        if (!sharesPort(child.pid, port)) break;
        await stopChild(child, 5000);
        throw new Error(`another process listens on MinIO's port ${port} too (address already in use)`);
      }
    } catch (err) {
      if (String(err?.message).includes('address already in use')) throw err;
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error('minio did not become ready');
    await sleep(200);
  }
  return { child, endpoint: `http://127.0.0.1:${port}`, accessKey, secretKey, stop: () => stopChild(child, 5000) };
}

/**
 * The service's keys and secrets, which the local model server (it runs a model on prompts, and reads only its
 * `LLM_LOCAL_*` settings) never needs: kept out of its environment.
 */
const SERVICE_SECRETS = [
  'SERVICE_API_KEY',
  'LLM_API_KEY',
  'OPENAI_API_KEY',
  'SPEECH_API_KEY',
  'EXTERNAL_OCR_API_KEY',
  'S3_ACCESS_KEY',
  'S3_SECRET_KEY',
  'WEBHOOK_SIGNING_SECRET',
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS_KEY',
];

/** `env` without the service's keys and secrets (SERVICE_SECRETS). */
export function withoutServiceSecrets(env) {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !SERVICE_SECRETS.includes(k)));
}

/**
 * Starts the local model server (llm-server/main.ts) on 127.0.0.1:`port` with `env`, and resolves once its health
 * route answers from this child (the model loads in about 5 s; up to `timeoutMs` on a busy machine). `onSpawn` gets
 * the child at once.
 * @returns {Promise<{ child: import('node:child_process').ChildProcess, url: string, port: number, stop: (graceMs?:
 * number) => Promise<void> }>}
 */
export async function startLocalLlm({ root, port, env, stdio = 'pipe', timeoutMs = 180_000, onSpawn = undefined }) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'llm-server', 'main.ts')], {
    cwd: root,
    env: { ...withoutServiceSecrets(env), LLM_LOCAL_PORT: String(port) },
    stdio: ['ignore', stdio, stdio],
  });
  onSpawn?.(child);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the local model server exited (${child.signalCode ?? child.exitCode})`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) });
      if (res.ok && ownsPort(child, port)) break;
    } catch {
      /* still loading */
    }
    if (Date.now() > deadline) {
      await stopChild(child, 5000);
      throw new Error(`the local model server did not answer on port ${port} within ${timeoutMs / 1000} s`);
    }
    await sleep(250);
  }
  return { child, url: `http://127.0.0.1:${port}/v1`, port, stop: (graceMs = 10_000) => stopChild(child, graceMs) };
}

/**
 * Resolves once `GET <apiUrl>/api/health` answers 200 with status ok, or when `isStopping()` turns true; throws
 * after `timeoutMs` with the last answer.
 */
export async function waitApiHealthy(apiUrl, { isStopping = () => false, timeoutMs = 180_000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (!isStopping()) {
    try {
      const res = await fetch(`${apiUrl}/api/health`, { signal: AbortSignal.timeout(5000) });
      const body = await res.json();
      if (res.status === 200 && body.status === 'ok') return;
      last = `${res.status} ${body.status}`;
    } catch (e) {
      last = String(e?.message ?? e);
    }
    if (Date.now() > deadline) throw new Error(`${apiUrl} did not become healthy: ${last}`);
    await sleep(300);
  }
}

/**
 * A launcher's stop triggers: SIGINT, SIGTERM, and its parent (npm, a shell) going away without passing its signal
 * on (this process is re-parented then). Each calls `shutdown(0)`.
 */
export function stopOnSignalsAndOrphaning(shutdown) {
  const parentPid = process.ppid;
  setInterval(() => {
    if (process.ppid !== parentPid) void shutdown(0);
  }, 500).unref();
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
}
