/**
 * Transcription through POST /api/audio/process against faster-whisper called directly, same model, same files, same
 * run: (a/b) a 10-minute recording, raw engine with the service's model, compute type and threads per process vs the
 * service; (c) a 30-minute recording, the service's chunks in parallel over its media slots vs one raw pass with all
 * cores' threads; (d) peak RSS of each engine process and of the worker. Prints readable lines; asserts nothing.
 *
 *   npx tsx bench/audio.bench.ts      (or `npm run bench -- audio`, which provisions the engines first)
 *
 * Inputs: English sentences spoken by espeak-ng with pauses, looped by ffmpeg (test/support/media/speech-recording.ts),
 * kept in BENCH_AUDIO_DIR (default <tmpdir>/docproc-bench-audio, reused by later runs). Everything on 127.0.0.1.
 * Knobs (env): BENCH_AUDIO_MINUTES (10), BENCH_AUDIO_LONG_MINUTES (30; 0 skips c), BENCH_AUDIO_CHUNK_SECONDS (unset:
 * the service default AUDIO_CHUNK_SECONDS 600), SPEECH_PYTHON / SPEECH_MODEL_DIR (as the service reads them).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import zlib from 'node:zlib';
import os from 'node:os';
import path from 'node:path';
import { freePort, startTemporalDev } from '../scripts/services.mjs';
import { loadConfig } from '../core/config/config';
import { localSpeechOptions } from '../providers/speech/local';
import { enginePids } from '../test/support/servers/proc-tree';
import { rawRequest } from '../test/support/clients/raw-http';
import { pausedRecording, roomNoise, speechRecording } from '../test/support/media/speech-recording';
import { ffmpeg, RATE, writeWav } from '../test/support/media/media-factory';
import { wordErrorRate } from '../test/support/media/wer';
import { startService, stopService, type Service } from './service';
import { COMPUTE_TYPE, rawEngine } from './raw-whisper';
import {
  CpuMeter,
  RssSampler,
  cleanupRegistry,
  envInt,
  out,
  procMem,
  resetPeak,
  secs,
  temporalBinary,
} from './support';

const MINUTES = envInt('BENCH_AUDIO_MINUTES', 10);
const LONG_MINUTES = envInt('BENCH_AUDIO_LONG_MINUTES', 30);
const CHUNK_SECONDS = process.env.BENCH_AUDIO_CHUNK_SECONDS ?? '';
const PAUSED_MINUTES = envInt('BENCH_AUDIO_PAUSED_MINUTES', 30);
/** The extracted asterisk-core-sounds-en(-wav) Debian packages (see bench/README.md), for (f); unset skips it. */
const REAL_DIR = process.env.BENCH_AUDIO_REAL_DIR ?? '';
const INPUTS = process.env.BENCH_AUDIO_DIR || path.join(os.tmpdir(), 'docproc-bench-audio');
/**
 * POST /api/audio/process with the file uploaded (no client-side header timeout: long files answer late), word
 * timestamps asked (the raw side computes them too), VAD as given.
 */
async function serviceRun(
  svc: Service,
  file: string,
  vad = true,
): Promise<{ ms: number; words: number; chunks: number; timedWords: number; text: string }> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(fs.readFileSync(file))], { type: 'audio/wav' }), path.basename(file));
  const fields = { source_language: 'en', target_language: 'en', useCache: 'false', word_timestamps: 'true' };
  for (const [k, v] of Object.entries({ ...fields, vad: String(vad) })) form.append(k, v);
  const req = new Request('http://127.0.0.1/', { method: 'POST', body: form });
  const body = Buffer.from(await req.arrayBuffer());
  const t0 = performance.now();
  const res = await rawRequest(svc.url, '/api/audio/process', {
    method: 'POST',
    headers: { 'content-type': req.headers.get('content-type')! },
    body,
  });
  const took = performance.now() - t0;
  const data = res.json()?.data;
  if (res.status !== 200 || !data)
    throw new Error(`POST /api/audio/process answered ${res.status}: ${res.text.slice(0, 500)}`);
  const chunkDir = path.join(svc.dataDir, 'blobs', 'objects', 'jobs', data.process_id, 'internal', 'chunks');
  const chunks = fs.existsSync(chunkDir) ? fs.readdirSync(chunkDir).length : NaN;
  return {
    ms: took,
    words: String(data.original_text ?? '')
      .split(/\s+/)
      .filter(Boolean).length,
    chunks,
    text: String(data.original_text ?? ''),
    timedWords: (data.segments as { words?: unknown[] }[]).reduce((n, seg) => n + (seg.words?.length ?? 0), 0),
  };
}

/** Peak RSS of the worker's engine processes (VmHWM since the last reset), one figure per process. */
function enginePeaks(svc: Service): string {
  const peaks = enginePids(svc.worker.child.pid).map(
    (pid) => `pid ${pid} ${((procMem(pid)?.hwm ?? NaN) / 1024).toFixed(0)} MB`,
  );
  return peaks.length ? peaks.join(', ') : 'no engine process';
}

const speedLine = (label: string, audioSeconds: number, wallMs: number) =>
  `${label}: ${secs(wallMs)} (${(audioSeconds / (wallMs / 1000)).toFixed(1)}× real time)`;

/**
 * `<inputs>/asterisk-real.wav`: the Asterisk prompts of at least 10 words that the package's transcript lists (the
 * first 60), resampled to 16 kHz, 1 s apart, with 20 s of room noise after every 10th; with their transcript.
 */
async function asteriskRecording(
  realDir: string,
  inputs: string,
): Promise<{ file: string; text: string; prompts: number; seconds: number }> {
  const listing = zlib
    .gunzipSync(fs.readFileSync(path.join(realDir, 'usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz')))
    .toString('utf8');
  const sounds = path.join(realDir, 'usr/share/asterisk/sounds/en_US_f_Allison');
  const picked = listing
    .split('\n')
    .map((l) => /^([a-z0-9-]+): (.+)$/.exec(l.trim()))
    .filter((m): m is RegExpExecArray => !!m && m[2].split(/\s+/).length >= 10 && !/[[\]<>]/.test(m[2]))
    .filter((m) => fs.existsSync(path.join(sounds, `${m[1]}.wav`)))
    .slice(0, 60);
  const runs: Int16Array[] = [];
  for (const m of picked) {
    const pcm = await ffmpeg(
      '-i',
      path.join(sounds, `${m[1]}.wav`),
      '-ac',
      '1',
      '-ar',
      String(RATE),
      '-f',
      's16le',
      '-',
    );
    runs.push(new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength)));
  }
  const pieces: Int16Array[] = [];
  runs.forEach((r, i) => {
    pieces.push(r, (i + 1) % 10 === 0 ? roomNoise(20, i) : new Int16Array(RATE));
  });
  const all = new Int16Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of pieces) {
    all.set(p, at);
    at += p.length;
  }
  const file = path.join(inputs, 'asterisk-real.wav');
  fs.mkdirSync(inputs, { recursive: true });
  await writeWav(file, all);
  return { file, text: picked.map((m) => m[2]).join(' '), prompts: picked.length, seconds: all.length / RATE };
}

async function main(): Promise<void> {
  const cleanups = cleanupRegistry();
  const cores = os.availableParallelism();
  const opts = localSpeechOptions(loadConfig({ ...process.env, MEDIA_CONCURRENCY: '', SPEECH_THREADS: '' }));
  out(`# docproc audio benchmark — ${new Date().toISOString()}`);
  out(
    `load average at start: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  out(
    `node ${process.version}, ${cores} cores (${os.cpus()[0]?.model ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB`,
  );
  const fw = spawnSync(
    opts.python,
    ['-c', 'import faster_whisper, ctranslate2; print(faster_whisper.__version__, ctranslate2.__version__)'],
    { encoding: 'utf8' },
  ).stdout.trim();
  out(
    `engine: faster-whisper/ctranslate2 ` +
      `${fw}; model ${opts.modelDir}; compute type ${COMPUTE_TYPE}; service: ${opts.processes} engine process(es) × ${opts.threads} thread(s)`,
  );

  const rss = new RssSampler();
  cleanups.add(async () => rss.stop());
  try {
    let t = performance.now();
    const file = await speechRecording(INPUTS, MINUTES * 60);
    const long = LONG_MINUTES > 0 ? await speechRecording(INPUTS, LONG_MINUTES * 60) : '';
    out(
      `inputs in ${INPUTS}: ${MINUTES} min${long ? ` and ${LONG_MINUTES} min` : ''} of looped espeak-ng speech, 16 kHz mono WAV, ready in ${secs(performance.now() - t)}`,
    );

    const dbDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-bench-audio-temporal-'));
    cleanups.add(async () => fs.rmSync(dbDir, { recursive: true, force: true }));
    const temporal = await startTemporalDev({
      bin: temporalBinary(),
      dbFile: path.join(dbDir, 'temporal.db'),
      port: await freePort(),
      uiPort: 0,
      headless: true,
    });
    cleanups.add(() => temporal.stop(10_000));
    const svc = await startService(
      'audio',
      temporal.address,
      CHUNK_SECONDS ? { AUDIO_CHUNK_SECONDS: CHUNK_SECONDS } : {},
    );
    let stopped = false;
    cleanups.add(async () => void (stopped || (await stopService(svc))));
    rss.watch('worker', svc.worker.child.pid);
    rss.watch('api', svc.api.child.pid);

    // Warm-up: two short requests at once start (and load the model in) both engine processes.
    const warm = await speechRecording(INPUTS, 20);
    t = performance.now();
    await Promise.all([serviceRun(svc, warm), serviceRun(svc, warm)]);
    const engines = enginePids(svc.worker.child.pid);
    out(`warm-up: two 20 s requests at once in ${secs(performance.now() - t)}; engine processes ${engines.join(', ')}`);
    // The engines are live children of the worker: their CPU is not in the worker's figure, so each is named.
    const pids = {
      worker: svc.worker.child.pid,
      ...Object.fromEntries(engines.map((pid, i) => [`engine ${i + 1}`, pid])),
      api: svc.api.child.pid,
      bench: process.pid,
    };

    out('');
    out(
      `== (a/b) ${MINUTES}-minute file: faster-whisper directly (${opts.threads} thread(s), as one service engine process) vs POST /api/audio/process ==`,
    );
    const rawRun = async (label: string) => {
      const c = new CpuMeter(pids).start();
      const r = await rawEngine(opts.python, opts.modelDir, opts.threads, file);
      out(
        `${speedLine(`raw engine (${label}), transcribe only`, MINUTES * 60, r.transcribeMs)}; whole process ${secs(r.wallMs)} (model load ${secs(r.loadMs)}); ${r.words} words; peak RSS ${r.peakMb.toFixed(0)} MB`,
      );
      out(c.report('raw'));
      return r;
    };
    // The raw engine runs before and after the service (the machine's load changes); the faster run is the baseline.
    const before = await rawRun('before the service');
    rss.resetPhase();
    engines.forEach(resetPeak);
    const cpu = new CpuMeter(pids).start();
    const s10 = await serviceRun(svc, file);
    out(
      `${speedLine('service (word_timestamps=true, VAD on)', MINUTES * 60, s10.ms)}; ${s10.chunks} chunk(s); ${s10.words} words (${s10.timedWords} timed)`,
    );
    out(cpu.report('service'));
    out(`(d) engine processes peak RSS (VmHWM): ${enginePeaks(svc)}`);
    out(rss.report('worker', '(d) ').text);
    const after = await rawRun('after the service');
    const raw = before.transcribeMs <= after.transcribeMs ? before : after;
    out(
      `service / faster raw transcribe: ` +
        `${(s10.ms / raw.transcribeMs).toFixed(2)}×  (goal ≤ 1.1×); service / its raw whole process: ${(s10.ms / raw.wallMs).toFixed(2)}×; service / slower raw transcribe ${(s10.ms / Math.max(before.transcribeMs, after.transcribeMs)).toFixed(2)}×`,
    );

    if (long) {
      out('');
      out(
        `== (c) ${LONG_MINUTES}-minute file: one raw pass with ${cores} threads vs the service's chunks over ${opts.processes} engine process(es) × ${opts.threads} thread(s) ==`,
      );
      let cpu = new CpuMeter(pids).start();
      const rawLong = await rawEngine(opts.python, opts.modelDir, cores, long);
      out(
        `${speedLine(`raw engine, ${cores} threads, transcribe only`, LONG_MINUTES * 60, rawLong.transcribeMs)}; whole process ${secs(rawLong.wallMs)}; ${rawLong.words} words; peak RSS ${rawLong.peakMb.toFixed(0)} MB`,
      );
      out(cpu.report('raw'));
      rss.resetPhase();
      engines.forEach(resetPeak);
      cpu = new CpuMeter(pids).start();
      const s30 = await serviceRun(svc, long);
      out(`${speedLine('service', LONG_MINUTES * 60, s30.ms)}; ${s30.chunks} chunk(s); ${s30.words} words`);
      out(cpu.report('service'));
      out(
        `speed-up of the chunked service over one raw pass: ` +
          `${(rawLong.transcribeMs / s30.ms).toFixed(2)}× (goal ≥ 1.3×); over the raw whole process ${(rawLong.wallMs / s30.ms).toFixed(2)}×`,
      );
      out(`(d) engine processes peak RSS (VmHWM): ${enginePeaks(svc)}`);
      out(rss.report('worker', '(d) ').text);
    }
    if (REAL_DIR) {
      const real = await asteriskRecording(REAL_DIR, INPUTS);
      out('');
      out(
        `== (f) real recordings: ${real.prompts} Asterisk prompts (asterisk-core-sounds-en, a human speaker, 8 kHz telephone quality), 1 s apart, 20 s of room noise after every 10th; ${(real.seconds / 60).toFixed(1)} min ==`,
      );
      for (const vad of [true, false]) {
        const raw = await rawEngine(opts.python, opts.modelDir, cores, real.file, vad, true);
        const s = await serviceRun(svc, real.file, vad);
        out(
          `VAD ${vad ? 'on ' : 'off'}: WER raw faster-whisper ${(100 * wordErrorRate(real.text, raw.text!)).toFixed(1)} %, service ${(100 * wordErrorRate(real.text, s.text)).toFixed(1)} %; ` +
            `time raw ${secs(raw.transcribeMs)}, service ${secs(s.ms)} (${(s.ms / raw.transcribeMs).toFixed(2)}×; ${s.chunks} chunk(s))`,
        );
      }
    }
    if (PAUSED_MINUTES > 0) {
      const paused = await pausedRecording(INPUTS, PAUSED_MINUTES * 60);
      out('');
      out(
        `== (e) ${PAUSED_MINUTES}-minute recording with long pauses (1 min of speech, 2 min of room noise; ${(paused.speechSeconds / 60).toFixed(0)} min of speech): VAD on (default) vs vad=false ==`,
      );
      const runs: Record<string, number> = {};
      for (const vad of [true, false]) {
        const raw = await rawEngine(opts.python, opts.modelDir, cores, paused.file, vad);
        out(
          `${speedLine(`raw engine, ${cores} threads, VAD ${vad ? 'on' : 'off'}, transcribe only`, PAUSED_MINUTES * 60, raw.transcribeMs)}; ${raw.words} words`,
        );
        const s = await serviceRun(svc, paused.file, vad);
        out(
          `${speedLine(`service, VAD ${vad ? 'on' : 'off'}`, PAUSED_MINUTES * 60, s.ms)}; ${s.chunks} chunk(s); ${s.words} words (${s.timedWords} timed)`,
        );
        runs[`raw${vad}`] = raw.transcribeMs;
        runs[`svc${vad}`] = s.ms;
      }
      out(
        `VAD on / off: service ${(runs.svctrue / runs.svcfalse).toFixed(2)}×, raw ${(runs.rawtrue / runs.rawfalse).toFixed(2)}×; ` +
          `service VAD on per minute of speech vs (a/b) service per minute: ${(runs.svctrue / (paused.speechSeconds / 60) / (s10.ms / MINUTES)).toFixed(2)}×`,
      );
    }
    out('');
    stopped = true;
    await stopService(svc);
  } finally {
    await cleanups.run();
  }
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
