// Provisioning of the Python tools the contract suites run against the served OpenAPI document, each from PyPI at a
// pinned version into a venv of its own under the engine cache: the API fuzzer (schemathesis, for the slow fuzz suite,
// test/slow/fuzz.test.ts) and the client generator (openapi-python-client, for test/e2e/generated-clients.test.ts).
// Like the speech venv: skipped when its marker names the pinned versions; built in a directory of its own and renamed
// into place, so two setups at once cannot mix.
import fs from 'node:fs';
import path from 'node:path';
import { CACHE_DIR, run, step, which } from './engines.mjs';

export const FUZZ_PINS = { pip: ['schemathesis==4.32.5'] };
/** The generator; the clients it writes need only its own dependencies (httpx, attrs). */
export const CLIENT_GENERATOR_PINS = { pip: ['openapi-python-client==0.29.1'] };

const MARKER = '.docproc-verified';

export const fuzzVenvDir = () => path.join(CACHE_DIR, 'fuzz-venv');
export const fuzzPython = () => path.join(fuzzVenvDir(), 'bin', 'python');
export const clientGeneratorVenvDir = () => path.join(CACHE_DIR, 'client-generator-venv');

const marker = (dir) => {
  try {
    return fs.readFileSync(path.join(dir, MARKER), 'utf8');
  } catch {
    return null;
  }
};

/**
 * The python of the venv `dir` holding `pins`, made when missing or pinned to other versions; `probe` is Python that
 * must run in it (an import) before it counts as made.
 */
async function ensureToolVenv(name, dir, pins, probe) {
  const python = path.join(dir, 'bin', 'python');
  const want = pins.join(' ');
  if (marker(dir) === want) {
    step(name, `venv cached (${want})`);
    return python;
  }
  const python3 = which('python3');
  if (!python3)
    throw new Error(
      `${name}: python3 (3.9 or later, with the venv module) is needed; on Debian: apt-get install python3-venv`,
    );
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const building = `${dir}.build-${process.pid}`;
  fs.rmSync(building, { recursive: true, force: true });
  step(name, `installing ${want} from PyPI into ${dir} (about a minute, once)`);
  const t0 = Date.now();
  try {
    await run(python3, ['-m', 'venv', building], { stdio: 'pipe' });
    const py = path.join(building, 'bin', 'python');
    const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' };
    await run(py, ['-m', 'pip', 'install', '-q', ...pins], { stdio: 'pipe', env });
    await run(py, ['-c', probe], { stdio: 'pipe' });
    fs.writeFileSync(path.join(building, MARKER), want);
    // Another setup may have finished first: its venv is as good as ours.
    if (marker(dir) !== want) {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(building, dir);
    }
  } catch (err) {
    throw new Error(
      `${name}: could not install ${want} (python3 needs the venv module: apt-get install python3-venv)\n${err.message}`,
    );
  } finally {
    fs.rmSync(building, { recursive: true, force: true, maxRetries: 3 });
  }
  step(name, `venv ready in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return python;
}

/**
 * The fuzzer's python (run it as `python -m schemathesis.cli`): `FUZZ_PYTHON`, or the cached venv, made when
 * missing or pinned to another version.
 */
export async function ensureFuzz() {
  if (process.env.FUZZ_PYTHON) {
    step('fuzz', `using FUZZ_PYTHON ${process.env.FUZZ_PYTHON}`);
    return process.env.FUZZ_PYTHON;
  }
  return ensureToolVenv('fuzz', fuzzVenvDir(), FUZZ_PINS.pip, 'import schemathesis.cli');
}

/**
 * The client generator's python (run it as `python -m openapi_python_client generate ...`; the clients it writes run
 * in the same python): `CLIENT_GENERATOR_PYTHON`, or the cached venv, made when missing or pinned to another version.
 */
export async function ensureClientGenerator() {
  if (process.env.CLIENT_GENERATOR_PYTHON) {
    step('client-generator', `using CLIENT_GENERATOR_PYTHON ${process.env.CLIENT_GENERATOR_PYTHON}`);
    return process.env.CLIENT_GENERATOR_PYTHON;
  }
  return ensureToolVenv(
    'client-generator',
    clientGeneratorVenvDir(),
    CLIENT_GENERATOR_PINS.pip,
    'import openapi_python_client, httpx, attrs',
  );
}
