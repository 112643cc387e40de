// `npm start`: sets up what is missing, then runs the Temporal dev server (unless TEMPORAL_ADDRESS is set), the
// worker and the API, with prefixed readable logs. Ctrl-C or SIGTERM stops all three. Plain Node, no dependency.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT, setupForStart, step } from './engines.mjs';
import { pipePrefixed } from './logfmt.mjs';
import { choosePort, startLocalLlm, startTemporalDev, stopChild, stopOnSignalsAndOrphaning, waitApiHealthy } from './services.mjs';

const env = { ...process.env };
const dataDir = path.resolve(env.DATA_DIR || path.join(ROOT, '.data'));
const host = env.HOST || '127.0.0.1';
const port = Number(env.PORT || 8080);
const raw = env.LOG_FORMAT === 'json';
const children = [];
let stopping = false;

async function main() {
  const { temporal: temporalBin, speech, llmModel } = await setupForStart();
  const childEnv = { ...env, DATA_DIR: dataDir, HOST: host, PORT: String(port), DOCPROC_PARENT_PID: String(process.pid) };
  if (speech) Object.assign(childEnv, { SPEECH_PYTHON: speech.python, SPEECH_MODEL_DIR: speech.modelDir });
  // The local model server (when the provider is local) before the worker, which is told its port.
  const llmStarting = llmModel ? startLlm(childEnv, llmModel) : null;
  llmStarting?.catch(() => undefined); // awaited below; a failure there stops everything
  let temporal = null;
  let uiUrl = null;
  if (!env.TEMPORAL_ADDRESS) {
    const grpc = await choosePort(Number(env.TEMPORAL_DEV_PORT || 7233));
    const ui = await choosePort(Number(env.TEMPORAL_UI_PORT || 8233), new Set([grpc.port]));
    if (grpc.moved) step('temporal', `port ${env.TEMPORAL_DEV_PORT || 7233} is taken, using ${grpc.port}`);
    if (ui.moved) step('temporal', `UI port ${env.TEMPORAL_UI_PORT || 8233} is taken, using ${ui.port}`);
    step('temporal', `starting the dev server (${path.join(dataDir, 'temporal.db')}, WAL)`);
    temporal = await startTemporalDev({ bin: temporalBin, dbFile: path.join(dataDir, 'temporal.db'), port: grpc.port, uiPort: ui.port });
    children.push({ name: 'temporal', child: temporal.child });
    pipePrefixed(temporal.child.stdout, 'temporal', { raw: true });
    pipePrefixed(temporal.child.stderr, 'temporal', { raw: true });
    childEnv.TEMPORAL_ADDRESS = temporal.address;
    childEnv.TEMPORAL_DEV_PORT = String(grpc.port);
    childEnv.TEMPORAL_UI_PORT = String(ui.port);
    uiUrl = `http://127.0.0.1:${ui.port}`;
  } else {
    step('temporal', `using ${env.TEMPORAL_ADDRESS}; no dev server started`);
  }
  if (llmStarting) await llmStarting;
  for (const name of ['worker', 'api']) {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, name, 'main.ts')], {
      cwd: ROOT,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    track(name, child);
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

/** Starts llm-server/main.ts on LLM_LOCAL_PORT (8091, a free one when taken) and sets the children's variables. */
async function startLlm(childEnv, modelPath) {
  const wanted = Number(env.LLM_LOCAL_PORT || 8091);
  const chosen = await choosePort(wanted);
  if (chosen.moved) step('llm', `port ${wanted} is taken, using ${chosen.port}`);
  Object.assign(childEnv, { LLM_PROVIDER: 'local', LLM_LOCAL_PORT: String(chosen.port), LLM_LOCAL_MODEL_PATH: modelPath });
  step('llm', `starting the local model server (${path.basename(modelPath)})`);
  const t0 = Date.now();
  const llm = await startLocalLlm({ root: ROOT, port: chosen.port, env: childEnv, stdio: 'pipe', onSpawn: (child) => track('llm', child) });
  step('llm', `ready in ${((Date.now() - t0) / 1000).toFixed(1)} s on ${llm.url}`);
  return llm;
}

function track(name, child) {
  children.push({ name, child });
  pipePrefixed(child.stdout, name, { raw });
  pipePrefixed(child.stderr, name, { raw: true });
  child.once('exit', (code, signal) => {
    if (!stopping) {
      step(name, `exited unexpectedly (${signal ?? code}); stopping`);
      void shutdown(1);
    }
  });
}


async function shutdown(code) {
  if (stopping) return;
  stopping = true;
  step('stop', 'stopping api and worker');
  const apps = children.filter((c) => c.name !== 'temporal' && c.name !== 'llm');
  await Promise.all(apps.map((c) => stopChild(c.child, 15_000)));
  const llm = children.find((c) => c.name === 'llm');
  if (llm) {
    step('stop', 'stopping the local model server');
    await stopChild(llm.child, 10_000);
  }
  const t = children.find((c) => c.name === 'temporal');
  if (t) {
    step('stop', 'stopping the Temporal dev server');
    await stopChild(t.child, 10_000);
  }
  process.exit(code);
}

stopOnSignalsAndOrphaning(shutdown);
main().catch(async (err) => {
  process.stderr.write(`[start] ${err?.stack ?? err}\n`);
  await shutdown(1);
});
