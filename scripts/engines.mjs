// Provisioning of everything the project needs outside node_modules, pinned, into a cache outside the repo.
// Plain Node with no dependency: it runs before `npm ci`. Every step prints one line and is skipped when done.
import { spawnSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureLlmModel, localLlmWanted } from './engines-llm.mjs';
import { ensureSpeech } from './engines-speech.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CACHE_DIR = path.resolve(process.env.DOCPROC_CACHE_DIR || path.join(os.homedir(), '.cache', 'docproc'));
const BIN = path.join(CACHE_DIR, 'bin');

export const PINS = {
  temporal: { version: '1.5.1', module: 'github.com/temporalio/cli/cmd/temporal@v1.5.1' },
  minio: {
    version: '0.0.0-20260212201848-7aac2a2c5b7c',
    module: 'github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c',
  },
};

/**
 * Debian packages the service uses at run time (OCR, PDF rendering, media; python3-venv for the speech engine's venv).
 */
/**
 * The OCR languages provisioned (tesseract codes, `OCR_LANGUAGES`, comma-separated): by default a set of common
 * European languages, from Debian's `tesseract-ocr-<code>` packs. A language asked for that is not installed is
 * refused with 422 `language_not_installed` (contract §9), never read with another.
 */
export const DEFAULT_OCR_LANGUAGES = ['deu', 'eng', 'fra', 'spa', 'ita', 'nld', 'por', 'pol'];

export function ocrLanguages(env = process.env) {
  const raw = (env.OCR_LANGUAGES ?? '').trim();
  if (!raw) return DEFAULT_OCR_LANGUAGES;
  const codes = raw.split(/[\s,+]+/).filter(Boolean);
  const bad = codes.filter((c) => !/^[a-z]{3}(_[a-z]+)?$/.test(c));
  if (bad.length)
    throw new Error(
      `OCR_LANGUAGES: ${bad.join(', ')} ${bad.length === 1 ? 'is not a' : 'are not'} tesseract language code(s) (deu, eng, fra, chi_sim, ...)`,
    );
  return [...new Set(codes)];
}

export const RUNTIME_PACKAGES = [
  'tesseract-ocr',
  ...ocrLanguages().map((c) => `tesseract-ocr-${c.replace(/_/g, '-')}`),
  'poppler-utils',
  'ffmpeg',
  'python3-venv',
];
/**
 * Debian packages only the tests use (the docs UI browser test; speech synthesised for the speech tests;
 * docker-compose 1.29 validates docker-compose.yml offline, no container runtime needed).
 */
export const TEST_PACKAGES = ['chromium', 'fonts-dejavu-core', 'espeak-ng', 'sox', 'docker-compose'];

export function step(name, message) {
  process.stdout.write(`[setup] ${name}: ${message}\n`);
}

export function which(cmd) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const p = path.join(dir, cmd);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      /* not here */
    }
  }
  return null;
}

export function sha256File(p) {
  return createHash('sha256').update(fs.readFileSync(p)).digest('hex');
}

export function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: opts.stdio ?? 'inherit', env: opts.env ?? process.env, cwd: opts.cwd });
    let out = '';
    child.stdout?.on('data', (d) => (out += d));
    child.stderr?.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}\n${out.slice(-4000)}`)),
    );
  });
}

/**
 * Runs `fn` holding the lock file `<cache>/.<name>.lock`, so setups started at the same time (npm start and npm test)
 * take turns; a lock left by a process that is gone is taken over.
 */
export async function withCacheLock(name, fn) {
  const lock = path.join(CACHE_DIR, `.${name}.lock`);
  for (let said = false; ;) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      const pid = Number(fs.readFileSync(lock, 'utf8'));
      if (!isAlive(pid)) {
        fs.rmSync(lock, { force: true });
        continue;
      }
      if (!said) step(name, `waiting for another setup (pid ${pid})`);
      said = true;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

function isAlive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** `npm ci` when node_modules is absent or was installed from another lock file. */
export async function ensureNodeModules() {
  const lock = path.join(ROOT, 'package-lock.json');
  const marker = path.join(ROOT, 'node_modules', '.docproc-lock.sha256');
  const want = sha256File(lock) + ':' + process.version;
  if (fs.existsSync(marker) && fs.readFileSync(marker, 'utf8') === want) {
    step('node_modules', 'up to date');
    return;
  }
  step('node_modules', 'installing with npm ci');
  const t0 = Date.now();
  await run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: ROOT });
  fs.writeFileSync(marker, want);
  step('node_modules', `installed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

async function tryDownload(url, dest, timeoutMs) {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), timeoutMs);
  try {
    const res = await fetch(url, { signal: ctrl.signal, redirect: 'follow' });
    if (!res.ok) return false;
    const buf = Buffer.from(await res.arrayBuffer());
    fs.writeFileSync(dest, buf);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** Builds a Go module's binary into the cache under a versioned name; the rename makes it atomic. */
async function goInstall(name, module, target) {
  const go = which('go') || (fs.existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : null);
  if (!go) throw new Error(`${name}: Go is needed to build ${module} (install Go 1.22+ and run again)`);
  const tmpBin = fs.mkdtempSync(path.join(CACHE_DIR, `.build-${name}-`));
  step(name, `building ${module} with go install (a few minutes, once)`);
  const t0 = Date.now();
  try {
    await run(go, ['install', module], { stdio: 'pipe', env: { ...process.env, GOBIN: tmpBin } });
    const built = fs.readdirSync(tmpBin)[0];
    fs.renameSync(path.join(tmpBin, built), target);
  } finally {
    fs.rmSync(tmpBin, { recursive: true, force: true });
  }
  step(name, `built in ${((Date.now() - t0) / 1000).toFixed(0)} s: ${target}`);
}

/** Temporal CLI v1.5.1: TEMPORAL_CLI_PATH, a `temporal` on PATH, the cache, the official release, then go install. */
export async function ensureTemporal() {
  const fromEnv = process.env.TEMPORAL_CLI_PATH;
  if (fromEnv) {
    if (!fs.existsSync(fromEnv)) throw new Error(`TEMPORAL_CLI_PATH points to a missing file: ${fromEnv}`);
    step('temporal', `using TEMPORAL_CLI_PATH ${fromEnv}`);
    return fromEnv;
  }
  const onPath = which('temporal');
  if (onPath) {
    step('temporal', `using ${onPath} from PATH`);
    return onPath;
  }
  const { version, module } = PINS.temporal;
  const target = path.join(BIN, `temporal-${version}`);
  if (fs.existsSync(target)) {
    step('temporal', `cached v${version}`);
    return target;
  }
  fs.mkdirSync(BIN, { recursive: true });
  const arch = { x64: 'amd64', arm64: 'arm64' }[process.arch];
  const platform = { linux: 'linux', darwin: 'darwin' }[process.platform];
  if (arch && platform) {
    const url = `https://github.com/temporalio/cli/releases/download/v${version}/temporal_cli_${version}_${platform}_${arch}.tar.gz`;
    const tgz = path.join(CACHE_DIR, `temporal-${version}.tar.gz`);
    step('temporal', `trying the official release v${version}`);
    if (await tryDownload(url, tgz, 4000)) {
      const dir = fs.mkdtempSync(path.join(CACHE_DIR, '.extract-'));
      try {
        await run('tar', ['-xzf', tgz, '-C', dir], { stdio: 'pipe' });
        fs.chmodSync(path.join(dir, 'temporal'), 0o755);
        fs.renameSync(path.join(dir, 'temporal'), target);
        step('temporal', `downloaded v${version}`);
        return target;
      } catch {
        step('temporal', 'release archive unusable, building instead');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
        fs.rmSync(tgz, { force: true });
      }
    } else {
      step('temporal', 'release download not reachable, building from the Go module proxy');
    }
  }
  await goInstall('temporal', module, target);
  return target;
}

/** MinIO at a pinned pseudo-version (its release tags are not semver). MINIO_PATH or a `minio` on PATH first. */
export async function ensureMinio() {
  const fromEnv = process.env.MINIO_PATH;
  if (fromEnv) {
    if (!fs.existsSync(fromEnv)) throw new Error(`MINIO_PATH points to a missing file: ${fromEnv}`);
    step('minio', `using MINIO_PATH ${fromEnv}`);
    return fromEnv;
  }
  const { version, module } = PINS.minio;
  const target = path.join(BIN, `minio-${version}`);
  if (fs.existsSync(target)) {
    step('minio', `cached ${version}`);
    return target;
  }
  fs.mkdirSync(BIN, { recursive: true });
  await goInstall('minio', module, target);
  return target;
}

function missingDebianPackages(pkgs) {
  return pkgs.filter((p) => {
    const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', p], { encoding: 'utf8' });
    return r.status !== 0 || !r.stdout.includes('install ok installed');
  });
}

/**
 * Installs missing Debian packages when running as root; otherwise prints the exact command and, when
 * `required`, fails.
 */
export async function ensureDebian(pkgs, { required = false, label = 'debian' } = {}) {
  if (!fs.existsSync('/usr/bin/dpkg-query')) {
    step(label, `not a Debian system: make sure these are installed: ${pkgs.join(' ')}`);
    return;
  }
  const missing = missingDebianPackages(pkgs);
  if (missing.length === 0) {
    step(label, `present (${pkgs.join(', ')})`);
    return;
  }
  const cmd = `apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')}`;
  if (process.getuid?.() !== 0) {
    const msg = `missing ${missing.join(', ')}; run as root: sudo sh -c '${cmd}'`;
    if (required) throw new Error(msg);
    step(label, msg);
    return;
  }
  step(label, `installing ${missing.join(', ')}`);
  const t0 = Date.now();
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await run('apt-get', ['update', '-q'], { stdio: 'pipe', env });
  await run('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...missing], { stdio: 'pipe', env });
  step(label, `installed in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

/** Everything `npm start` needs. */
export async function setupForStart() {
  const t0 = Date.now();
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  await ensureNodeModules();
  const needTemporal = !process.env.TEMPORAL_ADDRESS;
  // The local speech engine unless the OpenAI-compatible one is chosen; after the Debian step (python3-venv).
  const needSpeech = (process.env.SPEECH_PROVIDER || 'local') === 'local';
  // The local language model unless LLM_PROVIDER or a configured endpoint says otherwise; its pip is the speech venv's.
  const needLlm = localLlmWanted();
  let speech = null;
  const [temporal, llmModel] = await Promise.all([
    needTemporal ? ensureTemporal() : null,
    ensureDebian(RUNTIME_PACKAGES, { label: 'tools' })
      .then(async () => (speech = needSpeech ? await ensureSpeech() : null))
      .then(() => (needLlm ? ensureLlmModel() : null)),
  ]);
  step('done', `setup took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { temporal, speech, llmModel };
}

/** Everything `npm test` needs: the start set plus MinIO and the test-only packages. */
export async function setupForTests() {
  const t0 = Date.now();
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  await ensureNodeModules();
  await ensureDebian([...RUNTIME_PACKAGES, ...TEST_PACKAGES], { label: 'tools', required: true });
  const [temporal, minio, { speech, llmModel }] = await Promise.all([
    ensureTemporal(),
    ensureMinio(),
    // The local language model (the slow suite and the benchmark run it) after the speech venv, whose pip it uses.
    ensureSpeech({ model: 'base' }).then(async (speech) => ({ speech, llmModel: await ensureLlmModel() })),
  ]);
  step('done', `setup took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { temporal, minio, speech, llmModel, chromium: which('chromium') || '/usr/bin/chromium' };
}
