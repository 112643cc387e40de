// `npm test`: sets up what is missing (node_modules, Temporal CLI, MinIO, Debian tools), type-checks, then runs
// the mocha suites against the real engines. `--slow` adds the slow suites. Plain Node, no dependency.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, setupForTests, step } from './engines.mjs';
import { ensureFuzz } from './engines-fuzz.mjs';
import { ensurePostgres, ensureTemporalServer } from './engines-server.mjs';

const args = process.argv.slice(2);
const slow = args.includes('--slow') || process.env.DOCPROC_SLOW_TESTS === '1';
const passthrough = args.filter((a) => a !== '--slow');

// Mocha's own summary ("  1044 passing (18m)", "  2 failing", "  3 pending"): counted, and kept out of the output,
// because CI reads the test count from the one `tests: N passed, N failed` line that ends the run.
const MOCHA_SUMMARY = /^\s+(\d+) (passing|failing|pending)\b/;

/** Runs a child, passing its stdout through line by line; `onLine` sees each line and returns false to drop it. */
function run(cmd, cmdArgs, env, onLine) {
  return new Promise((resolve) => {
    const child = spawn(cmd, cmdArgs, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    const emit = (line) => {
      if (onLine?.(line) !== false) process.stdout.write(`${line}\n`);
    };
    child.stdout.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        emit(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    });
    child.on('close', (code) => {
      if (buf) emit(buf);
      resolve(code ?? 1);
    });
  });
}

/** Runs one guard rail (a Node CLI); a failure ends the run with the count line CI reads. */
async function guard(env, name, label, cliArgs) {
  step(name, label);
  const code = await run(process.execPath, cliArgs, env);
  if (code !== 0) {
    process.stdout.write(`${name} failed (${label})\ntests: 0 passed, 1 failed, 0 skipped\n`);
    process.exit(1);
  }
}

/**
 * Every process of this run still alive: the runner tags the test process's environment (`DOCPROC_TEST_RUN`), every
 * process a test starts inherits it, also once it is re-parented to init. Linux only (read from /proc).
 */
function processesOfRun(tag) {
  if (!fs.existsSync('/proc')) return [];
  const out = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    let environ;
    try {
      environ = fs.readFileSync(`/proc/${d}/environ`, 'latin1');
    } catch {
      continue;
    }
    if (!environ.split('\0').includes(`DOCPROC_TEST_RUN=${tag}`)) continue;
    let cmd = '';
    try {
      cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'latin1').split('\0').join(' ').trim();
    } catch {
      // gone meanwhile
    }
    if (cmd) out.push({ pid: Number(d), cmd });
  }
  return out;
}

/** Kills what the run left behind (after a grace for processes on their way out) and names each; answers how many. */
async function sweepLeftovers(tag) {
  let left = processesOfRun(tag);
  for (let i = 0; left.length && i < 20; i++) {
    await new Promise((r) => setTimeout(r, 250));
    left = processesOfRun(tag);
  }
  for (const p of left) {
    process.stdout.write(`left behind by the tests, killed: pid ${p.pid}: ${p.cmd.slice(0, 200)}\n`);
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return left.length;
}

async function main() {
  const t0 = Date.now();
  const engines = await setupForTests();
  const runTag = `${process.pid}-${Date.now()}`;
  // The fuzzer (schemathesis) only for the slow suites (test/slow/fuzz.test.ts).
  const fuzzPython = slow ? await ensureFuzz() : undefined;
  // The cluster layout's Temporal server, SQL tool, UI and PostgreSQL (test/slow/cluster-server.test.ts), built once.
  if (slow) await Promise.all([ensureTemporalServer(), ensurePostgres()]);
  const env = {
    ...process.env,
    TEMPORAL_CLI_PATH: engines.temporal,
    MINIO_PATH: engines.minio,
    CHROMIUM_PATH: engines.chromium,
    SPEECH_PYTHON: engines.speech.python,
    SPEECH_MODEL_DIR: engines.speech.modelDir,
    // The local language model's file, for the slow suite that runs it (other suites configure no model).
    LLM_LOCAL_MODEL_PATH: engines.llmModel,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    // Inherited by every process a test starts: what is still alive after the run is named and killed.
    DOCPROC_TEST_RUN: runTag,
    ...(fuzzPython ? { FUZZ_PYTHON: fuzzPython } : {}),
  };
  // Guard rails before any suite: types, the formatter's check (`npm run format` fixes what it finds), then the lint
  // (eslint.config.mjs: promises handled, the architecture's import arrows).
  await guard(env, 'typecheck', 'tsc --noEmit', [
    path.join(ROOT, 'node_modules/typescript/bin/tsc'),
    '--noEmit',
    '-p',
    ROOT,
  ]);
  await guard(env, 'format', 'prettier --check', [
    path.join(ROOT, 'node_modules/prettier/bin/prettier.cjs'),
    '--check',
    '--log-level',
    'warn',
    '**/*.{ts,mjs,cjs,js}',
  ]);
  await guard(env, 'lint', 'eslint', [path.join(ROOT, 'node_modules/eslint/bin/eslint.js'), ROOT]);
  const specs = passthrough.length
    ? passthrough
    : [
        'test/unit/**/*.test.ts',
        'test/integration/**/*.test.ts',
        'test/e2e/**/*.test.ts',
        ...(slow ? ['test/slow/**/*.test.ts'] : []),
      ];
  const counts = { passing: 0, failing: 0, pending: 0 };
  const code = await run(
    process.execPath,
    [path.join(ROOT, 'node_modules/mocha/bin/mocha.js'), ...specs],
    env,
    (line) => {
      const m = MOCHA_SUMMARY.exec(line);
      if (!m) return true;
      counts[m[2]] = Number(m[1]);
      return false;
    },
  );
  // A run must leave no process behind: each survivor is killed and named, and the run counts one failure for them.
  const leftovers = await sweepLeftovers(runTag);
  if (leftovers)
    process.stdout.write(`the tests left ${leftovers} process(es) behind (listed above): counted as a failure\n`);
  const failed = (code !== 0 && counts.failing === 0 ? 1 : counts.failing) + (leftovers ? 1 : 0);
  step('done', `npm test took ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  // The last line of the run, always: CI counts tests from it.
  process.stdout.write(`\ntests: ${counts.passing} passed, ${failed} failed, ${counts.pending} skipped\n`);
  process.exit(code !== 0 ? code : leftovers ? 1 : 0);
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.stdout.write('tests: 0 passed, 1 failed\n');
  process.exit(1);
});
