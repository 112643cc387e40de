// Provisioning of the Temporal cluster layout (`npm run cluster -- --temporal server`): the Temporal server of the
// version docker-compose.yml runs (temporalio/auto-setup), its SQL schema tool and the schema files, the Temporal Web
// UI server of the version the compose file runs (temporalio/ui), all built from the Go module proxy into the engine
// cache, pinned and built once; and PostgreSQL from Debian's package. Plain Node, no dependency.
import fs from 'node:fs';
import path from 'node:path';
import { CACHE_DIR, ensureDebian, run, step, which, withCacheLock } from './engines.mjs';

export const SERVER_PINS = {
  /** The server, its SQL schema tool and the schema files all come from this module version. */
  server: { version: '1.29.1', module: 'go.temporal.io/server' },
  /** temporalio/ui's server with the UI's built assets embedded (its go.mod has a `replace`: built in a wrapper module). */
  ui: {
    version: '2.34.0',
    module: 'github.com/temporalio/ui-server/v2',
    replace: 'github.com/grpc-ecosystem/grpc-gateway => github.com/temporalio/grpc-gateway v1.17.0',
  },
};

/** Debian's PostgreSQL (15 on bookworm); the server's `postgres12` plugin takes any PostgreSQL from 12 on. */
export const POSTGRES_PACKAGES = ['postgresql'];

const BIN = path.join(CACHE_DIR, 'bin');

function goBinary() {
  const go = which('go') || (fs.existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : null);
  if (!go)
    throw new Error('temporal-server: Go (1.23+) is needed to build the Temporal server; install Go and run again');
  return go;
}

/** `go build`/`go install` into a temp dir, then renamed into place (atomic); says how long it took. */
async function goBuild(name, args, target, { cwd, env } = {}) {
  const tmp = fs.mkdtempSync(path.join(CACHE_DIR, `.build-${name}-`));
  step(name, `building with go ${args.join(' ')} (once)`);
  const t0 = Date.now();
  try {
    const out = path.join(tmp, 'bin');
    fs.mkdirSync(out);
    const full = args[0] === 'build' ? [...args.slice(0, 1), '-o', path.join(out, name), ...args.slice(1)] : args;
    await run(goBinary(), full, { stdio: 'pipe', cwd: cwd ?? tmp, env: { ...process.env, GOBIN: out, ...env } });
    const built = fs.readdirSync(out)[0];
    fs.renameSync(path.join(out, built), target);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const seconds = (Date.now() - t0) / 1000;
  step(name, `built in ${seconds.toFixed(0)} s: ${target}`);
  return seconds;
}

/** The directory of a module version in the Go module cache (downloaded from the proxy when missing). */
async function moduleDir(module, version) {
  const out = await run(goBinary(), ['mod', 'download', '-json', `${module}@v${version}`], {
    stdio: 'pipe',
    cwd: CACHE_DIR,
  });
  const info = JSON.parse(out.slice(out.indexOf('{')));
  if (!info.Dir) throw new Error(`go mod download ${module}@v${version}: ${info.Error ?? 'no directory'}`);
  return info.Dir;
}

/** The server's schema files (schema/postgresql/v12/{temporal,visibility}), copied into the cache. */
async function ensureSchemas(version) {
  const target = path.join(CACHE_DIR, `temporal-schema-${version}`);
  if (fs.existsSync(path.join(target, 'temporal', 'versioned'))) return target;
  const src = path.join(await moduleDir(SERVER_PINS.server.module, version), 'schema', 'postgresql', 'v12');
  const tmp = `${target}.copy-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.cpSync(src, tmp, { recursive: true });
  // The module cache is read-only; the copy is the cache's own.
  fs.chmodSync(tmp, 0o755);
  fs.rmSync(target, { recursive: true, force: true });
  fs.renameSync(tmp, target);
  return target;
}

/**
 * The Temporal server, its SQL schema tool, the schema directory and the UI server, each from the cache or built
 * there. The UI is optional: a build that fails leaves `ui` null with the reason in `uiError` (the cluster runs
 * without it and says so).
 * @returns {Promise<{ server: string, sqlTool: string, schemaDir: string, ui: string | null, uiError?: string,
 *   buildSeconds: Record<string, number> }>}
 */
export async function ensureTemporalServer() {
  fs.mkdirSync(BIN, { recursive: true });
  return withCacheLock('temporal-server', async () => {
    const { version, module } = SERVER_PINS.server;
    const server = path.join(BIN, `temporal-server-${version}`);
    const sqlTool = path.join(BIN, `temporal-sql-tool-${version}`);
    const ui = path.join(BIN, `temporal-ui-server-${SERVER_PINS.ui.version}`);
    const buildSeconds = {};
    if (fs.existsSync(server)) step('temporal-server', `cached v${version}`);
    else
      buildSeconds.server = await goBuild('temporal-server', ['install', `${module}/cmd/server@v${version}`], server);
    if (fs.existsSync(sqlTool)) step('temporal-sql-tool', `cached v${version}`);
    else
      buildSeconds.sqlTool = await goBuild(
        'temporal-sql-tool',
        ['install', `${module}/cmd/tools/sql@v${version}`],
        sqlTool,
      );
    const schemaDir = await ensureSchemas(version);
    let uiError;
    if (fs.existsSync(ui)) step('temporal-ui', `cached v${SERVER_PINS.ui.version}`);
    else {
      try {
        buildSeconds.ui = await buildUi(ui);
      } catch (err) {
        uiError = String(err?.message ?? err)
          .split('\n')
          .slice(0, 3)
          .join(' ');
        step('temporal-ui', `not built (${uiError}); the cluster runs without the Web UI`);
      }
    }
    return { server, sqlTool, schemaDir, ui: fs.existsSync(ui) ? ui : null, uiError, buildSeconds };
  });
}

/** temporalio/ui's server: `go install` refuses a module with a `replace`, so a wrapper module requires it. */
async function buildUi(target) {
  const { version, module, replace } = SERVER_PINS.ui;
  const dir = fs.mkdtempSync(path.join(CACHE_DIR, '.ui-module-'));
  try {
    fs.writeFileSync(
      path.join(dir, 'go.mod'),
      `module docproc.local/temporal-ui\n\ngo 1.23\n\nrequire ${module} v${version}\n\nreplace ${replace}\n`,
    );
    fs.writeFileSync(
      path.join(dir, 'tools.go'),
      `//go:build tools\n\npackage tools\n\nimport _ "${module}/cmd/server"\n`,
    );
    await run(goBinary(), ['mod', 'tidy'], { stdio: 'pipe', cwd: dir });
    return await goBuild('temporal-ui', ['build', `${module}/cmd/server`], target, { cwd: dir });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * PostgreSQL's server programs (initdb, postgres, pg_isready) from Debian's package, installed when missing.
 * @returns {Promise<{ binDir: string, version: number }>}
 */
export async function ensurePostgres() {
  await ensureDebian(POSTGRES_PACKAGES, { label: 'postgresql', required: true });
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .map(Number)
        .filter((v) => v >= 12 && fs.existsSync(path.join(root, String(v), 'bin', 'postgres')))
        .sort((a, b) => b - a)
    : [];
  if (versions.length) return { binDir: path.join(root, String(versions[0]), 'bin'), version: versions[0] };
  const initdb = which('initdb');
  if (!initdb) throw new Error('postgresql: no initdb found (Debian: apt-get install postgresql)');
  const dir = path.dirname(fs.realpathSync(initdb));
  const out = await run(path.join(dir, 'postgres'), ['--version'], { stdio: 'pipe' });
  return { binDir: dir, version: Number(/(\d+)\./.exec(out)?.[1] ?? 0) };
}
