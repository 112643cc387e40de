import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { choosePort, freePort, startMinio, startTemporalDev } from '../../../scripts/services.mjs';

/** Engine binaries, as `npm test` provisions them (scripts/engines.mjs). */
export function enginePaths(): { temporal: string; minio: string; chromium: string } {
  const cache = process.env.DOCPROC_CACHE_DIR || path.join(os.homedir(), '.cache', 'docproc');
  const pick = (env: string | undefined, name: string) => {
    if (env) return env;
    const dir = path.join(cache, 'bin');
    const found = fs.existsSync(dir) ? fs.readdirSync(dir).find((f) => f.startsWith(`${name}-`)) : undefined;
    if (!found) throw new Error(`${name} is not provisioned: run npm test (it sets up the engines first)`);
    return path.join(dir, found);
  };
  return {
    temporal: pick(process.env.TEMPORAL_CLI_PATH, 'temporal'),
    minio: pick(process.env.MINIO_PATH, 'minio'),
    chromium: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  };
}

export function tempDir(prefix = 'docproc-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export type DevServer = Awaited<ReturnType<typeof startTemporalDev>>;
export type Minio = Awaited<ReturnType<typeof startMinio>>;

/** A Temporal dev server of its own (headless), on a file DB in a temp dir unless `memory`. */
export async function startDevServer(opts: { dbFile?: string | null; port?: number } = {}): Promise<DevServer> {
  const port = opts.port ?? (await freePort());
  const dbFile = opts.dbFile === undefined ? path.join(tempDir('docproc-temporal-'), 'temporal.db') : opts.dbFile;
  return startTemporalDev({ bin: enginePaths().temporal, dbFile, port, uiPort: 0, headless: true });
}

/**
 * The servers shared by test files, kept on `globalThis`: mocha loads the root hook plugin (test/support/hooks.ts)
 * through `require` and the test files through `import`, so this module can exist twice in one process, and a
 * module-level variable of one copy is not seen by the other (the teardown then stopped nothing and the dev server
 * outlived the run).
 */
interface Shared {
  temporal: Promise<DevServer> | null;
  minio: Promise<Minio> | null;
  /** Every shared server's process, killed at the latest when the test process exits. */
  children: Set<{ kill(signal?: NodeJS.Signals): boolean; exitCode: number | null; signalCode: NodeJS.Signals | null }>;
}
const shared: Shared = ((globalThis as Record<symbol, unknown>)[Symbol.for('docproc.test.sharedServers')] ??= (() => {
  const s: Shared = { temporal: null, minio: null, children: new Set() };
  // mocha --exit ends the process without waiting for anything: no shared server survives it.
  process.once('exit', () => {
    for (const c of s.children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });
  return s;
})()) as Shared;

function tracked<T extends { child: Shared['children'] extends Set<infer C> ? C : never }>(p: Promise<T>): Promise<T> {
  return p.then((server) => {
    shared.children.add(server.child);
    return server;
  });
}

/** One dev server shared by the test files that only need a running Temporal. */
export function sharedDevServer(): Promise<DevServer> {
  shared.temporal ??= tracked(startDevServer({ dbFile: null }));
  return shared.temporal;
}

/** One MinIO shared by the S3 tests. */
export function sharedMinioServer(): Promise<Minio> {
  shared.minio ??= tracked(
    (async () => {
      const port = await freePort();
      const { port: consolePort } = await choosePort(await freePort(), new Set([port]));
      return startMinio({ bin: enginePaths().minio, dir: tempDir('docproc-minio-'), port, consolePort });
    })(),
  );
  return shared.minio;
}

export async function stopSharedServers(): Promise<void> {
  const stops: Promise<void>[] = [];
  if (shared.temporal) stops.push(shared.temporal.then((s) => s.stop()).catch(() => undefined));
  if (shared.minio) stops.push(shared.minio.then((s) => s.stop()).catch(() => undefined));
  shared.temporal = null;
  shared.minio = null;
  await Promise.all(stops);
}
