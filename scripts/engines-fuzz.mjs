// Provisioning of the API fuzzer (schemathesis, from PyPI at a pinned version) into the engine cache, for the slow
// fuzz suite (test/slow/fuzz.test.ts). Like the speech venv: one venv under the cache, skipped when its marker names
// the pinned version. Built in a directory of its own and renamed into place, so two setups at once cannot mix.
import fs from 'node:fs';
import path from 'node:path';
import { CACHE_DIR, run, step, which } from './engines.mjs';

export const FUZZ_PINS = { pip: ['schemathesis==4.32.5'] };

const MARKER = '.docproc-verified';

export const fuzzVenvDir = () => path.join(CACHE_DIR, 'fuzz-venv');
export const fuzzPython = () => path.join(fuzzVenvDir(), 'bin', 'python');

const marker = (dir) => {
  try {
    return fs.readFileSync(path.join(dir, MARKER), 'utf8');
  } catch {
    return null;
  }
};

/**
 * The fuzzer's python (run it as `python -m schemathesis.cli`): `FUZZ_PYTHON`, or the cached venv, made when
 * missing or pinned to another version.
 */
export async function ensureFuzz() {
  if (process.env.FUZZ_PYTHON) {
    step('fuzz', `using FUZZ_PYTHON ${process.env.FUZZ_PYTHON}`);
    return process.env.FUZZ_PYTHON;
  }
  const dir = fuzzVenvDir();
  const want = FUZZ_PINS.pip.join(' ');
  if (marker(dir) === want) {
    step('fuzz', `venv cached (${want})`);
    return fuzzPython();
  }
  const python3 = which('python3');
  if (!python3)
    throw new Error(
      'fuzz: python3 (3.9 or later, with the venv module) is needed; on Debian: apt-get install python3-venv',
    );
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const building = `${dir}.build-${process.pid}`;
  fs.rmSync(building, { recursive: true, force: true });
  step('fuzz', `installing ${want} from PyPI into ${dir} (about a minute, once)`);
  const t0 = Date.now();
  try {
    await run(python3, ['-m', 'venv', building], { stdio: 'pipe' });
    const py = path.join(building, 'bin', 'python');
    const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' };
    await run(py, ['-m', 'pip', 'install', '-q', ...FUZZ_PINS.pip], { stdio: 'pipe', env });
    await run(py, ['-c', 'import schemathesis.cli'], { stdio: 'pipe' });
    fs.writeFileSync(path.join(building, MARKER), want);
    // Another setup may have finished first: its venv is as good as ours.
    if (marker(dir) !== want) {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(building, dir);
    }
  } catch (err) {
    throw new Error(
      `fuzz: could not install ${want} (python3 needs the venv module: apt-get install python3-venv)\n${err.message}`,
    );
  } finally {
    fs.rmSync(building, { recursive: true, force: true, maxRetries: 3 });
  }
  step('fuzz', `venv ready in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return fuzzPython();
}
