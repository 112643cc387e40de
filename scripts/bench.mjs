// `npm run bench`: makes sure the engines exist (as `npm test` does), then runs every bench/*.bench.ts with
// `node --import tsx`, one after the other. Plain Node, no dependency. Benchmarks print figures; they assert nothing.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, setupForTests, step } from './engines.mjs';

function run(file, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, env, stdio: 'inherit' });
    const forward = (sig) => child.kill(sig);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('close', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

async function main() {
  const engines = await setupForTests();
  // The speech engine as `npm test` passes it (bench/audio.bench.ts runs it raw and through the service).
  const env = {
    ...process.env,
    TEMPORAL_CLI_PATH: engines.temporal,
    SPEECH_PYTHON: engines.speech.python,
    SPEECH_MODEL_DIR: engines.speech.modelDir,
    LLM_LOCAL_MODEL_PATH: engines.llmModel,
  };
  const dir = path.join(ROOT, 'bench');
  const only = process.argv.slice(2);
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.bench.ts'))
    .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
    .sort();
  let failed = 0;
  for (const f of files) {
    step('bench', `running bench/${f}`);
    const t0 = Date.now();
    const code = await run(path.join(dir, f), env);
    step(
      'bench',
      `bench/${f} ${code === 0 ? 'finished' : `exited with ${code}`} in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
    );
    if (code !== 0) failed++;
  }
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
