// `npm run cluster`: the service scaled out on one machine, from the local engine cache: one Temporal dev server,
// one MinIO (STORAGE=s3), N API processes on N ports, io workers (io and llm queues) and media workers as separate
// processes
// (WORKER_QUEUES). Prefixed logs; every process is supervised as in `npm start` (scripts/supervisor.mjs): one that
// dies is restarted with backoff while the others carry on (kill one to watch the others take over); Ctrl-C, SIGTERM
// or a crash loop stops everything. Plain Node, no dependency.
//   npm run cluster -- --apis 2 --io-workers 1 --media-workers 2 [--port 8080] [--temporal dev|server]
// `--temporal server`: instead of the dev server, the layout of docker-compose.yml — PostgreSQL, the Temporal server
// of the compose file's version on it (several history shards) and its Web UI (scripts/cluster-server.mjs).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startServerLayout } from './cluster-server.mjs';
import { ensureMinio, ROOT, setupForStart, step } from './engines.mjs';
import { nodeFlags } from './node-flags.mjs';
import { stopChild, stopOnSignalsAndOrphaning, waitApiHealthy } from './services.mjs';
import { superviseApi, superviseDevServer, superviseLocalLlm, superviseMinio } from './supervised.mjs';
import { Supervisor } from './supervisor.mjs';

const { values: opts } = parseArgs({
  options: {
    apis: { type: 'string', default: '2' },
    'io-workers': { type: 'string', default: '1' },
    'media-workers': { type: 'string', default: '2' },
    port: { type: 'string', default: process.env.PORT || '8080' },
    temporal: { type: 'string', default: 'dev' },
  },
});
if (!['dev', 'server'].includes(opts.temporal)) throw new Error('--temporal must be dev (the default) or server');
const count = (name, min) => {
  const n = Number(opts[name]);
  if (!Number.isInteger(n) || n < min || n > 64) throw new Error(`--${name} must be an integer from ${min} to 64`);
  return n;
};
const apis = count('apis', 1);
const ioWorkers = count('io-workers', 1);
const mediaWorkers = count('media-workers', 1);

const env = { ...process.env };
const dataDir = path.resolve(env.DATA_DIR || path.join(ROOT, '.data', 'cluster'));
const raw = env.LOG_FORMAT === 'json';
/** Names of the supervised processes: the services (APIs, workers) and the infrastructure they need. */
const services = [];
const infra = [];
/** Ports the processes of this cluster hold (chosen without a check-then-bind race: scripts/supervised.mjs). */
const taken = new Set();
let stopping = false;
const supervisor = new Supervisor({ log: step, raw, onCrashLoop: () => void shutdown(1) });

async function main() {
  const [{ temporal: temporalBin, speech, llmModel }, minioBin] = await Promise.all([setupForStart(), ensureMinio()]);
  const childEnv = {
    ...env,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    DOCPROC_PARENT_PID: String(process.pid),
    STORAGE: 's3',
    S3_BUCKET: env.S3_BUCKET || 'docproc',
  };
  if (speech) Object.assign(childEnv, { SPEECH_PYTHON: speech.python, SPEECH_MODEL_DIR: speech.modelDir });

  let uiUrl = null;
  if (opts.temporal === 'server') {
    if (env.TEMPORAL_ADDRESS)
      throw new Error('--temporal server starts its own Temporal server: unset TEMPORAL_ADDRESS');
    step('temporal', `starting PostgreSQL and the Temporal server (${dataDir})`);
    const server = await startServerLayout(supervisor, {
      dataDir,
      cliBin: temporalBin,
      grpcPort: Number(env.TEMPORAL_DEV_PORT || 7233),
      uiPort: Number(env.TEMPORAL_UI_PORT || 8233),
      taken,
      log: step,
      names: infra,
      env,
    });
    Object.assign(childEnv, { TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: server.namespace });
    uiUrl = server.uiUrl;
    if (!uiUrl) step('temporal-ui', `no Web UI: ${server.uiError}`);
  } else if (!env.TEMPORAL_ADDRESS) {
    step('temporal', `starting the dev server (${path.join(dataDir, 'temporal.db')}, WAL)`);
    infra.push('temporal');
    const temporal = await superviseDevServer(supervisor, {
      bin: temporalBin,
      dbFile: path.join(dataDir, 'temporal.db'),
      grpcPort: Number(env.TEMPORAL_DEV_PORT || 7233),
      uiPort: Number(env.TEMPORAL_UI_PORT || 8233),
      taken,
      log: step,
    });
    Object.assign(childEnv, {
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_DEV_PORT: String(temporal.port),
      TEMPORAL_UI_PORT: String(temporal.uiPort),
    });
    uiUrl = `http://127.0.0.1:${temporal.uiPort}`;
  } else {
    step('temporal', `using ${env.TEMPORAL_ADDRESS}; no dev server started`);
  }

  step('minio', `starting MinIO (${path.join(dataDir, 'minio')})`);
  infra.push('minio');
  const minio = await superviseMinio(supervisor, {
    bin: minioBin,
    dir: path.join(dataDir, 'minio'),
    s3Port: 9000,
    accessKey: env.S3_ACCESS_KEY || 'docproc',
    secretKey: env.S3_SECRET_KEY || 'docproc-cluster-secret',
    taken,
    log: step,
  });
  step('minio', `listening on ${minio.endpoint}`);
  Object.assign(childEnv, {
    S3_ENDPOINT: minio.endpoint,
    S3_ACCESS_KEY: minio.accessKey,
    S3_SECRET_KEY: minio.secretKey,
  });

  if (llmModel) {
    step('llm', `starting the local model server (${path.basename(llmModel)}), shared by the workers`);
    infra.push('llm');
    const llmEnv = { ...childEnv, LLM_PROVIDER: 'local', LLM_LOCAL_MODEL_PATH: llmModel };
    const llm = await superviseLocalLlm(supervisor, {
      root: ROOT,
      port: Number(env.LLM_LOCAL_PORT || 8091),
      env: llmEnv,
      taken,
      log: step,
    });
    Object.assign(childEnv, {
      LLM_PROVIDER: 'local',
      LLM_LOCAL_PORT: String(llm.port),
      LLM_LOCAL_MODEL_PATH: llmModel,
    });
  }

  // Workers cannot share one metrics port: asked for metrics, each binds a free one itself (no check-then-bind race)
  // and logs its URL ("worker metrics listening").
  const workerEnv = { ...childEnv, ...(env.WORKER_METRICS_PORT ? { WORKER_METRICS_PORT: '0' } : {}) };
  for (let i = 1; i <= ioWorkers; i++) await service(`io-${i}`, 'worker', { ...workerEnv, WORKER_QUEUES: 'io,llm' });
  for (let i = 1; i <= mediaWorkers; i++)
    await service(`media-${i}`, 'worker', { ...workerEnv, WORKER_QUEUES: 'media' });
  const urls = [];
  for (let i = 1; i <= apis; i++) {
    services.push(`api-${i}`);
    urls.push(
      await superviseApi(supervisor, `api-${i}`, {
        root: ROOT,
        port: Number(opts.port) + i - 1,
        env: childEnv,
        taken,
        log: step,
      }),
    );
  }
  await Promise.all(urls.map((u) => waitApiHealthy(u, { isStopping: () => stopping })));
  if (stopping) return;
  process.stdout.write(
    `\n  APIs:         ${urls.map((u) => `${u}/api`).join('  ')}\n` +
      (uiUrl ? `  Temporal UI:  ${uiUrl}\n` : '') +
      `  MinIO (S3):   ${minio.endpoint}  bucket ${childEnv.S3_BUCKET}\n` +
      `  Workers:      ${ioWorkers} io, ${mediaWorkers} media\n  Data:         ${dataDir}\n\n  Ctrl-C stops everything.\n\n`,
  );
}

function service(name, main, childEnv) {
  services.push(name);
  return supervisor.start(name, async (attach) => {
    const flags = nodeFlags(main, childEnv.WORKER_QUEUES);
    const child = spawn(process.execPath, [...flags, '--import', 'tsx', path.join(ROOT, main, 'main.ts')], {
      cwd: ROOT,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    attach(child);
    return child;
  });
}

async function shutdown(code) {
  if (stopping) return;
  stopping = true;
  supervisor.stopping = true;
  step('stop', 'stopping the APIs and workers');
  await Promise.all(services.map((n) => stopChild(supervisor.child(n), 15_000)));
  step('stop', 'stopping the model server, MinIO and Temporal');
  // PostgreSQL last: the Temporal server flushes to it while it stops.
  await Promise.all(infra.filter((n) => n !== 'postgresql').map((n) => stopChild(supervisor.child(n), 10_000)));
  await stopChild(supervisor.child('postgresql'), 30_000);
  process.exit(code);
}

stopOnSignalsAndOrphaning(shutdown);
main().catch(async (err) => {
  process.stderr.write(`[cluster] ${err?.stack ?? err}\n`);
  await shutdown(1);
});
