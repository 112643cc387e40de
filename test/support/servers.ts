import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { choosePort, freePort, startMinio, startTemporalDev } from '../../scripts/services.mjs';

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

let sharedTemporal: Promise<DevServer> | null = null;
let sharedMinio: Promise<Minio> | null = null;

/** One dev server shared by the test files that only need a running Temporal. */
export function sharedDevServer(): Promise<DevServer> {
  sharedTemporal ??= startDevServer({ dbFile: null });
  return sharedTemporal;
}

/** One MinIO shared by the S3 tests. */
export function sharedMinioServer(): Promise<Minio> {
  sharedMinio ??= (async () => {
    const port = await freePort();
    const { port: consolePort } = await choosePort(await freePort(), new Set([port]));
    return startMinio({ bin: enginePaths().minio, dir: tempDir('docproc-minio-'), port, consolePort });
  })();
  return sharedMinio;
}

export async function stopSharedServers(): Promise<void> {
  const stops: Promise<void>[] = [];
  if (sharedTemporal) stops.push(sharedTemporal.then((s) => s.stop()).catch(() => undefined));
  if (sharedMinio) stops.push(sharedMinio.then((s) => s.stop()).catch(() => undefined));
  sharedTemporal = null;
  sharedMinio = null;
  await Promise.all(stops);
}
