// `npm start`: sets up what is missing, then runs the Temporal dev server (unless TEMPORAL_ADDRESS is set), the local
// model server, the worker and the API, with prefixed readable logs, and supervises them: a child that dies is
// restarted with backoff; Ctrl-C or SIGTERM (or a crash loop) stops them all. Plain Node, no dependency.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT, setupForStart, step } from './engines.mjs';
import { loopbackLaunchEnv } from './launch-env.mjs';
import { stopChild, stopOnSignalsAndOrphaning, waitApiHealthy } from './services.mjs';
import { superviseDevServer, superviseLocalLlm } from './supervised.mjs';
import { Supervisor } from './supervisor.mjs';

const env = { ...process.env };
const dataDir = path.resolve(env.DATA_DIR || path.join(ROOT, '.data'));
const host = env.HOST || '127.0.0.1';
const port = Number(env.PORT || 8080);
const raw = env.LOG_FORMAT === 'json';
let stopping = false;
// Every child is supervised: restarted with backoff when it dies (its state is on disk), the stack stopped only by
// Ctrl-C/SIGTERM or a crash loop (scripts/supervisor.mjs).
const supervisor = new Supervisor({ log: step, raw, onCrashLoop: () => void shutdown(1) });
/** Ports this launcher's children hold (the API's PORT is the operator's). */
const taken = new Set([port]);

async function main() {
  const { temporal: temporalBin, speech, llmModel } = await setupForStart();
  const childEnv = {
    ...env,
    DATA_DIR: dataDir,
    HOST: host,
    PORT: String(port),
    DOCPROC_PARENT_PID: String(process.pid),
  };
  // Listening on loopback only: nobody else can reach the stack, so every child may fetch private targets (contract
  // §2). Said in the log; an explicit setting of the operator's is kept.
  const loopback = loopbackLaunchEnv(childEnv, dataDir);
  Object.assign(childEnv, loopback.set);
  if (loopback.names.length)
    step('network', `the API listens on loopback only (${host}): set ${loopback.names.join(', ')} for every process`);
  if (speech) Object.assign(childEnv, { SPEECH_PYTHON: speech.python, SPEECH_MODEL_DIR: speech.modelDir });
  // The local model server (when the provider is local) before the worker, which is told its port.
  const llmStarting = llmModel ? startLlm(childEnv, llmModel) : null;
  llmStarting?.catch(() => undefined); // awaited below; a failure there stops everything
  let uiUrl = null;
  if (!env.TEMPORAL_ADDRESS) {
    const temporal = await startTemporal(temporalBin);
    childEnv.TEMPORAL_ADDRESS = temporal.address;
    childEnv.TEMPORAL_DEV_PORT = String(temporal.port);
    childEnv.TEMPORAL_UI_PORT = String(temporal.uiPort);
    uiUrl = `http://127.0.0.1:${temporal.uiPort}`;
  } else {
    step('temporal', `using ${env.TEMPORAL_ADDRESS}; no dev server started`);
  }
  if (llmStarting) await llmStarting;
  for (const name of ['worker', 'api']) {
    await supervisor.start(name, async (attach) => {
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, name, 'main.ts')], {
        cwd: ROOT,
        env: childEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      attach(child);
      return child;
    });
  }
  const shownHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const apiUrl = `http://${shownHost}:${port}`;
  await waitApiHealthy(apiUrl, { isStopping: () => stopping });
  if (stopping) return;
  process.stdout.write(
    `\n  API:          ${apiUrl}/api\n  Docs:         ${apiUrl}/api/doc\n` +
      (uiUrl ? `  Temporal UI:  ${uiUrl}\n` : '') +
      `  Data:         ${dataDir}\n\n  Ctrl-C stops everything.\n\n`,
  );
}

/**
 * Starts the Temporal dev server on TEMPORAL_DEV_PORT and TEMPORAL_UI_PORT (7233 and 8233, free ones when taken, other
 * free ones when taken between the check and the bind: scripts/supervised.mjs); later it is restarted on the same
 * ports and database (the worker and the API reconnect by themselves).
 */
async function startTemporal(bin) {
  step('temporal', `starting the dev server (${path.join(dataDir, 'temporal.db')}, WAL)`);
  return superviseDevServer(supervisor, {
    bin,
    dbFile: path.join(dataDir, 'temporal.db'),
    grpcPort: Number(env.TEMPORAL_DEV_PORT || 7233),
    uiPort: Number(env.TEMPORAL_UI_PORT || 8233),
    taken,
    log: step,
  });
}

/**
 * Starts llm-server/main.ts on LLM_LOCAL_PORT (8091, a free one when taken, another when taken between the check and
 * the bind) and sets the children's variables before the worker is told the port.
 */
async function startLlm(childEnv, modelPath) {
  step('llm', `starting the local model server (${path.basename(modelPath)})`);
  const t0 = Date.now();
  const llmEnv = { ...childEnv, LLM_PROVIDER: 'local', LLM_LOCAL_MODEL_PATH: modelPath };
  const llm = await superviseLocalLlm(supervisor, {
    root: ROOT,
    port: Number(env.LLM_LOCAL_PORT || 8091),
    env: llmEnv,
    taken,
    log: step,
  });
  Object.assign(childEnv, { LLM_PROVIDER: 'local', LLM_LOCAL_PORT: String(llm.port), LLM_LOCAL_MODEL_PATH: modelPath });
  // Ready means warm (issue 38): one short completion, so the first request's does not pay for the first evaluation.
  if (env.WARM_UP !== 'false') await warmLlm(llm.url, path.basename(modelPath).replace(/\.gguf$/i, ''));
  step('llm', `ready in ${((Date.now() - t0) / 1000).toFixed(1)} s on ${llm.url}`);
  return llm;
}

/** One completion of a few tokens from the local model server; a failure is said and the start goes on. */
async function warmLlm(url, model) {
  try {
    const res = await fetch(`${url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Say OK.' }], max_tokens: 4 }),
      signal: AbortSignal.timeout(120_000),
    });
    await res.arrayBuffer();
    if (!res.ok) step('llm', `warm-up answered ${res.status}; it warms on the first request`);
  } catch (err) {
    step('llm', `warm-up failed (${err?.message ?? err}); it warms on the first request`);
  }
}

async function shutdown(code) {
  if (stopping) return;
  stopping = true;
  supervisor.stopping = true;
  step('stop', 'stopping api and worker');
  await Promise.all(['api', 'worker'].map((n) => stopChild(supervisor.child(n), 15_000)));
  if (supervisor.child('llm')) {
    step('stop', 'stopping the local model server');
    await stopChild(supervisor.child('llm'), 10_000);
  }
  if (supervisor.child('temporal')) {
    step('stop', 'stopping the Temporal dev server');
    await stopChild(supervisor.child('temporal'), 10_000);
  }
  process.exit(code);
}

stopOnSignalsAndOrphaning(shutdown);
main().catch(async (err) => {
  process.stderr.write(`[start] ${err?.stack ?? err}\n`);
  await shutdown(1);
});
