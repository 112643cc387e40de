// The Temporal cluster layout of `npm run cluster -- --temporal server`, the runnable stand-in for docker-compose.yml:
// PostgreSQL (Debian's package, its data under DATA_DIR, loopback, a free port), the schemas created and updated by
// the server's own SQL tool, the Temporal server (the compose file's version, several history shards, persistence
// and visibility on PostgreSQL), its Web UI, the namespace created and the project's search attributes registered by
// `npm run setup -- --temporal-namespace` — each process supervised (scripts/supervisor.mjs), restarted with backoff
// on the ports it came up on. The compose file's variables decide the same things here: POSTGRES_PASSWORD,
// TEMPORAL_NAMESPACE, TEMPORAL_RETENTION. Plain Node, no dependency.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './engines.mjs';
import { ensurePostgres, ensureTemporalServer, SERVER_PINS } from './engines-server.mjs';
import {
  DATABASES,
  dynamicConfigYaml,
  HISTORY_SHARDS,
  PORT_NAMES,
  serverConfigYaml,
  serverSettings,
} from './cluster-server-config.mjs';
import { exec, initPostgres, POSTGRES_USER, postgresUser, startPostgres } from './postgres.mjs';

import { choosePort, freePort, listensOn, portFree, sleep, stopChild, waitForTcp } from './services.mjs';

/** The databases and their schemas, created (first start) or updated to the server's version, by its SQL tool. */
async function prepareSchemas({ sqlTool, schemaDir, pgPort, password, log }) {
  const base = [
    '--plugin',
    'postgres12',
    '--ep',
    '127.0.0.1',
    '-p',
    String(pgPort),
    '-u',
    POSTGRES_USER,
    '--pw',
    password,
  ];
  for (const [key, db] of Object.entries(DATABASES)) {
    const args = [...base, '--db', db];
    try {
      await exec(sqlTool, [...args, 'create-database']);
      await exec(sqlTool, [...args, 'setup-schema', '-v', '0.0']);
      log('postgresql', `created database ${db}`);
    } catch (err) {
      if (!/already exists/i.test(String(err?.message))) throw err;
    }
    await exec(sqlTool, [...args, 'update-schema', '-d', path.join(schemaDir, key, 'versioned')]);
  }
  log(
    'postgresql',
    `schemas of ${Object.values(DATABASES).join(' and ')} at Temporal ${SERVER_PINS.server.version}'s versions`,
  );
}

/** `temporal operator ...` with the CLI; resolves with its output or null when it failed. */
function cli(bin, args) {
  const r = spawnSync(bin, args, { encoding: 'utf8', timeout: 15_000 });
  return r.status === 0 ? r.stdout : null;
}

/** The Temporal server from `root` (config/docproc.yaml); resolves once the frontend on `port` says SERVING. */
async function startServer({ bin, root, port, cliBin, onSpawn }) {
  const child = spawn(bin, ['--root', root, '--config', 'config', '--env', 'docproc', '--allow-no-auth', 'start'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: root,
  });
  onSpawn?.(child);
  const exited = new Promise((_, reject) =>
    child.once('exit', (code, signal) => reject(new Error(`the Temporal server exited (${signal ?? code})`))),
  );
  exited.catch(() => undefined);
  const address = `127.0.0.1:${port}`;
  const ready = (async () => {
    await waitForTcp(port, '127.0.0.1', 120_000);
    const deadline = Date.now() + 240_000;
    for (;;) {
      const ours = child.exitCode === null && listensOn(child.pid, port) !== false;
      if (ours && /SERVING/.test(cli(cliBin, ['operator', 'cluster', 'health', '--address', address]) ?? '')) return;
      if (Date.now() > deadline) throw new Error(`the Temporal server on ${address} did not say SERVING within 240 s`);
      await sleep(300);
    }
  })();
  await Promise.race([ready, exited]);
  return child;
}

/** The Web UI server on `port`, for the frontend at `address`; resolves once its page answers. */
async function startUi({ bin, root, port, address, namespace, onSpawn }) {
  fs.mkdirSync(path.join(root, 'config'), { recursive: true });
  fs.writeFileSync(
    path.join(root, 'config', 'docproc.yaml'),
    `temporalGrpcAddress: ${address}\nhost: 127.0.0.1\nport: ${port}\npublicPath: ""\nenableUi: true\n` +
      `defaultNamespace: ${namespace}\nnotifyOnNewVersion: false\nrefreshInterval: 0s\n` +
      `cors:\n  cookieInsecure: true\n  allowOrigins:\n    - http://127.0.0.1:${port}\n`,
  );
  const child = spawn(bin, ['--root', root, '--config', 'config', '--env', 'docproc', 'start'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: root,
  });
  onSpawn?.(child);
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the Temporal UI exited (${child.exitCode})`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) });
      if (res.ok && listensOn(child.pid, port) !== false) break;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) {
      await stopChild(child, 5000);
      throw new Error(`the Temporal UI did not answer on port ${port}`);
    }
    await sleep(200);
  }
  return child;
}

/**
 * A free port below 32768: the server keeps each service's membership port in a `smallint` column of PostgreSQL
 * (cluster_membership.rpc_port), and Linux hands out ephemeral ports from 32768 up.
 */
async function lowPort(taken) {
  for (let i = 0; i < 200; i++) {
    const p = 20_000 + Math.floor(Math.random() * 12_000);
    if (!taken.has(p) && (await portFree(p))) {
      taken.add(p);
      return p;
    }
  }
  throw new Error('no free port between 20000 and 32000');
}

/** `fn` until it succeeds, every 2 s for up to 3 min; each failure logged; the last one thrown. */
async function retrying(name, what, fn, log) {
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      log(name, `${what} failed, trying again in 2 s: ${String(err?.message ?? err).slice(0, 300)}`);
      await sleep(2000);
    }
  }
}

/** A port: `preferred` (a free one where it is taken) on the first attempt, else one the OS picks; marked taken. */
async function pick(preferred, attempt, taken) {
  const { port } = await choosePort(attempt === 1 && preferred ? preferred : await freePort(), taken);
  taken.add(port);
  return port;
}

/**
 * Starts the layout under `dataDir` with `supervisor` (processes `postgresql`, `temporal`, `temporal-ui`; `names`
 * gets them in start order). `cliBin`: the Temporal CLI (health, the namespace); `grpcPort`/`uiPort`: the ports
 * wanted for the frontend and the UI.
 * @returns {Promise<{ address: string, port: number, uiUrl: string | null, uiError?: string, pgPort: number,
 *   namespace: string }>}
 */
export async function startServerLayout(
  supervisor,
  { dataDir, cliBin, grpcPort, uiPort, taken, log, names, env = process.env },
) {
  const [bins, pg] = await Promise.all([ensureTemporalServer(), ensurePostgres()]);
  const { password, namespace, retention } = serverSettings(env);
  const user = postgresUser();
  const pgDir = path.join(dataDir, 'postgresql');
  fs.mkdirSync(dataDir, { recursive: true });
  if (await initPostgres({ binDir: pg.binDir, dir: pgDir, password, user }))
    log(
      'postgresql',
      `initialised ${pgDir} (PostgreSQL ${pg.version}${user.uid !== undefined ? ', run as the postgres user' : ''})`,
    );

  names.push('postgresql');
  const { ports: pgPort } = await supervisor.startOnPorts('postgresql', {
    raw: true,
    choose: (attempt) => pick(attempt === 1 ? 5432 : 0, attempt, taken),
    launch: (port, attach) => startPostgres({ binDir: pg.binDir, dir: pgDir, port, user, onSpawn: attach }),
  });
  log('postgresql', `PostgreSQL ${pg.version} listening on 127.0.0.1:${pgPort} (${pgDir})`);
  await prepareSchemas({ sqlTool: bins.sqlTool, schemaDir: bins.schemaDir, pgPort, password, log });

  const root = path.join(dataDir, 'temporal-server');
  const dynamicConfigFile = path.join(root, 'config', 'dynamicconfig.yaml');
  fs.mkdirSync(path.dirname(dynamicConfigFile), { recursive: true });
  fs.writeFileSync(dynamicConfigFile, dynamicConfigYaml());
  names.push('temporal');
  const { ports } = await supervisor.startOnPorts('temporal', {
    raw: true,
    choose: async (attempt) => {
      const chosen = {};
      for (const name of PORT_NAMES)
        chosen[name] = name === 'frontend' ? await pick(grpcPort, attempt, taken) : await lowPort(taken);
      if (chosen.frontend !== grpcPort) log('temporal', `port ${grpcPort} is taken, using ${chosen.frontend}`);
      fs.writeFileSync(
        path.join(root, 'config', 'docproc.yaml'),
        serverConfigYaml({ pgPort, password, ports: chosen, dynamicConfigFile }),
      );
      return chosen;
    },
    launch: (_ports, attach) => startServer({ bin: bins.server, root, port: _ports.frontend, cliBin, onSpawn: attach }),
  });
  const address = `127.0.0.1:${ports.frontend}`;
  log(
    'temporal',
    `Temporal server ${SERVER_PINS.server.version} on ${address} (${HISTORY_SHARDS} history shards, PostgreSQL)`,
  );

  // The namespace, as the compose file's auto-setup creates it; then the search attributes, as its temporal-setup
  // (restarted on failure as compose restarts it): a server that has just said SERVING may still refuse a moment.
  await retrying(
    'temporal',
    'creating the namespace',
    async () => {
      if (cli(cliBin, ['operator', 'namespace', 'describe', '--namespace', namespace, '--address', address]) !== null)
        return;
      const args = ['operator', 'namespace', 'create', '--namespace', namespace, '--retention', retention];
      await exec(cliBin, [...args, '--address', address]).catch((err) => {
        if (!/already (exists|registered)/i.test(String(err?.message))) throw err;
      });
      log('temporal', `created namespace ${namespace} (retention ${retention})`);
    },
    log,
  );
  await retrying(
    'setup',
    'registering the search attributes',
    async () => {
      const out = await exec(
        process.execPath,
        [path.join(ROOT, 'scripts', 'setup.mjs'), '--temporal-namespace', namespace],
        {
          cwd: ROOT,
          env: { ...env, TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace },
        },
      );
      for (const line of out.trim().split('\n')) if (line) log('setup', line.replace(/^\[setup\] /, ''));
    },
    log,
  );

  let uiUrl = null;
  if (bins.ui) {
    names.push('temporal-ui');
    const { ports: ui } = await supervisor.startOnPorts('temporal-ui', {
      raw: true,
      choose: async (attempt) => {
        const p = await pick(uiPort, attempt, taken);
        if (p !== uiPort) log('temporal-ui', `port ${uiPort} is taken, using ${p}`);
        return p;
      },
      launch: (p, attach) =>
        startUi({
          bin: bins.ui,
          root: path.join(dataDir, 'temporal-ui'),
          port: p,
          address,
          namespace,
          onSpawn: attach,
        }),
    });
    uiUrl = `http://127.0.0.1:${ui}`;
  }
  return { address, port: ports.frontend, uiUrl, uiError: bins.uiError, pgPort, namespace };
}
