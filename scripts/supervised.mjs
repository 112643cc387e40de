// The processes a launcher (`npm start`, `npm run cluster`) starts on ports of its own — the Temporal dev server (gRPC
// and UI; its HTTP and metrics ports it picks itself at every start), MinIO, the local model server, the cluster's
// APIs — each supervised, and none with a check-then-bind race: a port found free is only a hint, and a first start
// whose port another process bound meanwhile (another stack starting at the same moment) moves to other free ports
// before anything is told them (Supervisor.startOnPorts). A restart keeps the ports the clients were told (gRPC, UI,
// S3, the model server's); the ports the dev server picks for itself (HTTP, metrics) it picks again at each start, so
// a clash there is one failed start the backoff retries, and a told port another process holds meanwhile is a crash
// loop that stops the stack naming it. Plain Node, no dependency.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { choosePort, freePort, listensOn, sleep, startLocalLlm, startMinio, startTemporalDev } from './services.mjs';

/** The port for attempt `attempt`: the preferred one (a free one where it is taken) first, then one the OS picks. */
async function pick(preferred, attempt, taken) {
  const { port } = await choosePort(attempt === 1 ? preferred : await freePort(), taken);
  taken.add(port);
  return port;
}

/** Says so when a port is not the one asked for. */
function moved(log, name, label, wanted, port) {
  if (port !== wanted) log(name, `${label} ${wanted} is taken, using ${port}`);
}

/**
 * The Temporal dev server on `grpcPort` and `uiPort` with its database `dbFile`, supervised as `temporal`; restarted
 * later on the ports it came up on (the worker and the API reconnect by themselves). `taken`: ports this launcher
 * holds already (the ports chosen are added).
 * @returns {Promise<{ address: string, port: number, uiPort: number }>}
 */
export async function superviseDevServer(supervisor, { bin, dbFile, grpcPort, uiPort, taken, log }) {
  const { value } = await supervisor.startOnPorts('temporal', {
    raw: true,
    choose: async (attempt) => {
      const grpc = await pick(grpcPort, attempt, taken);
      const ui = await pick(uiPort, attempt, taken);
      moved(log, 'temporal', 'port', grpcPort, grpc);
      moved(log, 'temporal', 'UI port', uiPort, ui);
      return { grpc, ui };
    },
    launch: ({ grpc, ui }, attach) => startTemporalDev({ bin, dbFile, port: grpc, uiPort: ui, onSpawn: attach }),
  });
  return value;
}

/** MinIO on `s3Port` (its console on the next free port) over `dir`, supervised as `minio`. */
export async function superviseMinio(supervisor, { bin, dir, s3Port, accessKey, secretKey, taken, log }) {
  const { value } = await supervisor.startOnPorts('minio', {
    raw: true,
    choose: async (attempt) => {
      const s3 = await pick(s3Port, attempt, taken);
      moved(log, 'minio', 'port', s3Port, s3);
      return { s3, console: await pick(s3 + 1, 1, taken) };
    },
    launch: (ports, attach) =>
      startMinio({ bin, dir, port: ports.s3, consolePort: ports.console, accessKey, secretKey, onSpawn: attach }),
  });
  return value;
}

/** The local model server (llm-server/main.ts) on `port` with `env`, supervised as `llm`. */
export async function superviseLocalLlm(supervisor, { root, port, env, taken, log }) {
  const { value } = await supervisor.startOnPorts('llm', {
    choose: async (attempt) => {
      const p = await pick(port, attempt, taken);
      moved(log, 'llm', 'port', port, p);
      return p;
    },
    launch: (p, attach) =>
      startLocalLlm({ root, port: p, env: { ...env, LLM_LOCAL_PORT: String(p) }, stdio: 'pipe', onSpawn: attach }),
  });
  return value;
}

/**
 * An API process (api/main.ts) on `port` with `env`, supervised as `name`; resolves once it listens (its liveness
 * route answers), with its URL.
 */
export async function superviseApi(supervisor, name, { root, port, env, taken, log }) {
  const { ports } = await supervisor.startOnPorts(name, {
    choose: async (attempt) => {
      const p = await pick(port, attempt, taken);
      moved(log, name, 'port', port, p);
      return p;
    },
    launch: async (p, attach) => {
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'api', 'main.ts')], {
        cwd: root,
        env: { ...env, PORT: String(p) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      attach(child);
      await untilLive(child, p);
      return child;
    },
  });
  return `http://127.0.0.1:${ports}`;
}

/**
 * Resolves once `http://127.0.0.1:<port>/api/health/live` answers 200 from `child` (another process may hold the
 * port); rejects when `child` exits first or after `timeoutMs`.
 */
async function untilLive(child, port, timeoutMs = 180_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`exited (${child.signalCode ?? `code ${child.exitCode}`}) before it listened`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/health/live`, { signal: AbortSignal.timeout(2000) });
      if (res.ok && listensOn(child.pid, port) !== false) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the API did not answer on port ${port} within ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}
