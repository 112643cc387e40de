// `npm start`: sets up what is missing, then runs the Temporal dev server (unless TEMPORAL_ADDRESS is set), the local
// model server, the worker and the API, with prefixed readable logs, and supervises them: a child that dies is
// restarted with backoff; Ctrl-C or SIGTERM (or a crash loop) stops them all. Plain Node, no dependency.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT, setupForStart, step } from './engines.mjs';
import {
  choosePort,
  startLocalLlm,
  startTemporalDev,
  stopChild,
  stopOnSignalsAndOrphaning,
  waitApiHealthy,
} from './services.mjs';
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

async function main() {
  const { temporal: temporalBin, speech, llmModel } = await setupForStart();
  const childEnv = {
    ...env,
    DATA_DIR: dataDir,
    HOST: host,
    PORT: String(port),
    DOCPROC_PARENT_PID: String(process.pid),
  };
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
 * Starts the Temporal dev server on TEMPORAL_DEV_PORT and TEMPORAL_UI_PORT (7233 and 8233, free ones when taken). A
 * port taken between the check and the bind (another stack starting at the same moment) moves it to other free ports,
 * up to three times, before anything is told its address; later it is restarted on the same ports and database (the
 * worker and the API reconnect by themselves).
 */
async function startTemporal(bin) {
  const wanted = { grpc: Number(env.TEMPORAL_DEV_PORT || 7233), ui: Number(env.TEMPORAL_UI_PORT || 8233) };
  step('temporal', `starting the dev server (${path.join(dataDir, 'temporal.db')}, WAL)`);
  let lastError;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const grpc = await choosePort(wanted.grpc + (attempt - 1) * 10);
    const ui = await choosePort(wanted.ui + (attempt - 1) * 10, new Set([grpc.port]));
    if (grpc.port !== wanted.grpc) step('temporal', `port ${wanted.grpc} is taken, using ${grpc.port}`);
    if (ui.port !== wanted.ui) step('temporal', `UI port ${wanted.ui} is taken, using ${ui.port}`);
    try {
      return await supervisor.start(
        'temporal',
        (attach) =>
          startTemporalDev({
            bin,
            dbFile: path.join(dataDir, 'temporal.db'),
            port: grpc.port,
            uiPort: ui.port,
            onSpawn: attach,
          }),
        { raw: true },
      );
    } catch (err) {
      lastError = err;
      if (!/address already in use|EADDRINUSE/i.test(supervisor.tail('temporal').join('\n'))) throw err;
      await stopChild(supervisor.child('temporal'), 5000);
    }
  }
  throw lastError;
}

/**
 * Starts llm-server/main.ts on LLM_LOCAL_PORT (8091, a free one when taken) and sets the children's variables. A
 * port taken between the check and the bind (another stack starting at the same moment) is not a crash: the first
 * start moves to another free port, up to three times, before the worker is told the port.
 */
async function startLlm(childEnv, modelPath) {
  const wanted = Number(env.LLM_LOCAL_PORT || 8091);
  step('llm', `starting the local model server (${path.basename(modelPath)})`);
  const t0 = Date.now();
  let lastError;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const chosen = await choosePort(attempt === 1 ? wanted : wanted + attempt);
    if (chosen.moved) step('llm', `port ${wanted} is taken, using ${chosen.port}`);
    const llmEnv = {
      ...childEnv,
      LLM_PROVIDER: 'local',
      LLM_LOCAL_PORT: String(chosen.port),
      LLM_LOCAL_MODEL_PATH: modelPath,
    };
    const launch = (attach) =>
      startLocalLlm({ root: ROOT, port: chosen.port, env: llmEnv, stdio: 'pipe', onSpawn: attach });
    try {
      const llm = await supervisor.start('llm', launch);
      Object.assign(childEnv, {
        LLM_PROVIDER: 'local',
        LLM_LOCAL_PORT: String(chosen.port),
        LLM_LOCAL_MODEL_PATH: modelPath,
      });
      step('llm', `ready in ${((Date.now() - t0) / 1000).toFixed(1)} s on ${llm.url}`);
      return llm;
    } catch (err) {
      lastError = err;
      // Only a port taken meanwhile is worth another port; anything else stops the start.
      if (!/EADDRINUSE/.test(supervisor.tail('llm').join('\n'))) throw err;
      await stopChild(supervisor.child('llm'), 5000);
    }
  }
  throw lastError;
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
