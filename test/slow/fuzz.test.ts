import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ensureFuzz } from '../../scripts/engines-fuzz.mjs';
import { freePort } from '../../scripts/services.mjs';
import { useLlmStack } from '../support/servers/llm-env';
import { tempDir } from '../support/servers/engines';
import type { Stack } from '../support/servers/stack';

// Property-based fuzzing of every operation of the started service (API, worker, Temporal dev server, the LLM wire
// protocol server) with schemathesis at a fixed seed: no 500 (fuzz-schemathesis.toml: the contract's 501-504 are
// answers, held to the document like any other) and no answer outside the OpenAPI document (schema, status code,
// media type). The service runs with its URL guard enforced (HOST=0.0.0.0 with an API key, so the
// loopback-only allowance of private targets is off; it still listens on 127.0.0.1), and the hooks in fuzz_hooks.py
// rewrite every URL the fuzzer generates to a closed port on loopback before it is sent: nothing leaves the machine.

const KEY = 'fuzz-api-key-0123456789abcdef';
const SEED = '20260113';
/** Test cases per operation and phase: about 40 operations; bounded so the run takes a few minutes on 2 cores. */
const MAX_EXAMPLES = process.env.FUZZ_MAX_EXAMPLES ?? '25';
const RUN_LIMIT_MS = 12 * 60_000;
const CHECKS = [
  'not_a_server_error',
  'response_schema_conformance',
  'status_code_conformance',
  'content_type_conformance',
];
const HOOKS_DIR = path.dirname(fileURLToPath(import.meta.url));

describe('schemathesis over every operation of the started service', function () {
  this.timeout(RUN_LIMIT_MS + 60_000);
  let s: Stack;
  let python: string;
  let child: ChildProcess | undefined;

  before(async function () {
    this.timeout(600_000);
    python = await ensureFuzz();
  });
  useLlmStack((stack) => (s = stack), {
    HOST: '0.0.0.0',
    SERVICE_API_KEY: KEY,
    SYNC_WAIT_MS: '2000',
    MEDIA_SYNC_WAIT_MS: '2000',
  });
  after(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('runs with the URL guard enforced in the API and the worker', () => {
    for (const config of [s.api.config, s.worker.config]) {
      expect(config.loopbackOnly).to.equal(false);
      expect(config.ALLOW_PRIVATE_URLS).to.equal(false);
    }
  });

  it(`finds no server error and no answer outside the document (seed ${SEED}, ${MAX_EXAMPLES} cases per operation)`, async () => {
    const closed = await freePort();
    const args = [
      '-m',
      'schemathesis.cli',
      '--config-file',
      path.join(HOOKS_DIR, 'fuzz-schemathesis.toml'),
      'run',
      `${s.url}/api/openapi.json`,
      '--url',
      s.url,
      '-H',
      `X-Service-Api-Key: ${KEY}`,
      '--checks',
      CHECKS.join(','),
      '--seed',
      SEED,
      '--max-examples',
      MAX_EXAMPLES,
      '--request-timeout',
      '60',
      '--generation-database',
      'none',
      '--workers',
      '1',
      '--no-color',
    ];
    const env = {
      ...process.env,
      PYTHONPATH: HOOKS_DIR,
      SCHEMATHESIS_HOOKS: 'fuzz_hooks',
      FUZZ_CLOSED_URL: `http://127.0.0.1:${closed}/fuzz`,
      PYTHONUNBUFFERED: '1',
    };
    const t0 = Date.now();
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      let out = '';
      // schemathesis keeps its run data in ./.schemathesis: a temporary directory, not the repository.
      child = spawn(python, args, { env, cwd: tempDir('docproc-fuzz-'), stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      const timer = setTimeout(() => child?.kill('SIGKILL'), RUN_LIMIT_MS);
      child.on('error', reject);
      child.on('close', (c) => {
        clearTimeout(timer);
        resolve({ code: c, output: out });
      });
    });
    const generated = Number(/(\d+) generated/.exec(output)?.[1] ?? 0);
    const summary = output.slice(output.lastIndexOf('SUMMARY')).split('\n').slice(1).join('\n').trim();
    // Only our own one-line figure: the fuzzer's summary block (its "N passed" and "=== N warnings in S ===" lines)
    // would read as a second test runner's summary in the CI log, which counts tests from `tests: …` alone.
    const operations = /Tested:\s+(\d+)/.exec(summary)?.[1] ?? '?';
    process.stdout.write(
      `      fuzz figures: ${generated} generated cases over ${operations} operations in ${((Date.now() - t0) / 1000).toFixed(0)} s, exit ${code}\n`,
    );
    // On a finding the report goes to the log (each failure with its curl reproducer and `st replay` id), with the
    // fuzzer's own summary lines left out for the same reason.
    if (code !== 0) process.stdout.write(withoutRunnerSummaries(output.replace(new RegExp(KEY, 'g'), '[key]')) + '\n');
    expect(code, `schemathesis found something (seed ${SEED}):\n${summary}`).to.equal(0);
    // Every operation schemathesis loaded from the document was selected and tested.
    const [, selected, total] = /Selected:\s+(\d+)\/(\d+)/.exec(summary) ?? [];
    expect(Number(selected), 'operations selected').to.be.at.least(40).and.equal(Number(total));
    expect(summary, 'every operation tested').to.match(new RegExp(`Tested:\\s+${selected}\\b`));
    expect(generated, 'test cases generated').to.be.greaterThan(500);
  });
});

/**
 * The fuzzer's report without its pytest-style summary lines ("=== 3 warnings in 84.53s ===", "N generated, N passed").
 */
function withoutRunnerSummaries(text: string): string {
  return text
    .split('\n')
    .filter((line) => !/^=+ .* in [\d.]+s =+$/.test(line.trim()) && !/\b\d+ (passed|failed)\b/.test(line))
    .join('\n');
}
