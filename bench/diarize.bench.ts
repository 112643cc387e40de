/**
 * Speaker labels (`diarize=true`) through POST /api/audio/process: for each recording with known speakers, the same
 * request without and with diarize in the same run (the time diarize adds), and the diarization error rate of the
 * answer (share of the speech time labelled with the wrong speaker after the best label mapping, split into confusion
 * and speech the transcript missed). Prints readable lines; asserts nothing.
 *
 *   npx tsx bench/diarize.bench.ts      (or `npm run bench -- diarize`, which provisions the engines first)
 *
 * Inputs, generated: espeak-ng dialogues (test/support/media/speech-speakers.ts) of two voices (a man's and a woman's; two
 * American voices), three voices, one voice, and a BENCH_DIARIZE_MINUTES (5) two-voice dialogue for the time. Real
 * voices when BENCH_AUDIO_REAL_DIR holds the extracted Debian packages asterisk-core-sounds-{en,es,fr,it}-wav (see
 * bench/README.md): prompts of Allison (en_US, es_MX), June (fr_CA) and Carlo (it_IT), 8 kHz telephone recordings,
 * taken in turn. Kept in BENCH_AUDIO_DIR (default <tmpdir>/docproc-bench-audio).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startTemporalDev } from '../scripts/services.mjs';
import { rawRequest } from '../test/support/clients/raw-http';
import { ffmpeg, joinWithPauses, RATE, writeWav } from '../test/support/media/media-factory';
import {
  DIALOGUE,
  dialogueRecording,
  diarizationErrorRate,
  labelledSpans,
  type Turn,
} from '../test/support/media/speech-speakers';
import { startService, stopService, type Service } from './service';
import { cleanupRegistry, envInt, out, procCpuSeconds, secs, temporalBinary } from './support';
import { loadConfig } from '../core/config/config';
import { LocalSpeechProvider, localSpeechOptions } from '../providers/speech/local';

const MINUTES = envInt('BENCH_DIARIZE_MINUTES', 5);
const REAL_DIR = process.env.BENCH_AUDIO_REAL_DIR ?? '';
const INPUTS = path.join(process.env.BENCH_AUDIO_DIR || path.join(os.tmpdir(), 'docproc-bench-audio'), 'diarize');

interface Recording {
  name: string;
  file: string;
  turns: Turn[];
  seconds: number;
  /** Who speaks (the reference speakers' names, index = Turn.speaker). */
  voices: string[];
}

/** One request; with `diarize`, its segments (words labelled). */
async function transcribe(svc: Service, file: string, diarize: boolean, language = 'en') {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(fs.readFileSync(file))], { type: 'audio/wav' }), path.basename(file));
  const fields = { source_language: language, target_language: language === 'auto' ? 'auto' : language };
  for (const [k, v] of Object.entries({
    ...fields,
    useCache: 'false',
    word_timestamps: 'true',
    diarize: String(diarize),
  }))
    form.append(k, v);
  const req = new Request('http://127.0.0.1/', { method: 'POST', body: form });
  const body = Buffer.from(await req.arrayBuffer());
  const t0 = performance.now();
  const res = await rawRequest(svc.url, '/api/audio/process', {
    method: 'POST',
    headers: { 'content-type': req.headers.get('content-type')! },
    body,
  });
  const ms = performance.now() - t0;
  const data = res.json()?.data;
  if (res.status !== 200 || !data) throw new Error(`POST /api/audio/process answered ${res.status}: ${res.text}`);
  return { ms, segments: data.segments as Parameters<typeof labelledSpans>[0] };
}

/**
 * Human voices in turn: `count` prompts of 2.5-7 s, alternating between the packages' speaker folders, 0.7 s apart.
 * The reference speaker is the person (Allison records both en_US and es_MX).
 */
async function promptDialogue(folders: string[], count = 16): Promise<Recording> {
  const sounds = path.join(REAL_DIR, 'usr/share/asterisk/sounds');
  const person = (f: string) => f.split('_').at(-1)!;
  const people = [...new Set(folders.map(person))];
  const lists = folders.map((f) =>
    fs
      .readdirSync(path.join(sounds, f))
      .filter((n) => n.endsWith('.wav'))
      .sort()
      .map((n) => path.join(sounds, f, n))
      .filter((n) => {
        const seconds = (fs.statSync(n).size - 44) / 16_000; // 8 kHz 16-bit
        return seconds >= 2.5 && seconds <= 7;
      }),
  );
  const runs: Int16Array[] = [];
  const who: number[] = [];
  for (let i = 0; i < count; i++) {
    const k = i % folders.length;
    const pcm = await ffmpeg(
      '-i',
      lists[k][(i * 37) % lists[k].length],
      '-ac',
      '1',
      '-ar',
      String(RATE),
      '-f',
      's16le',
      '-',
    );
    runs.push(new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength)));
    who.push(people.indexOf(person(folders[k])));
  }
  const joined = joinWithPauses(runs, () => 0.7);
  const name = folders.join('+');
  const file = path.join(INPUTS, `${name}.wav`);
  await writeWav(file, joined.samples);
  const turns = joined.spans.map(([start, end], i) => ({ start, end, speaker: who[i] }));
  return { name, file, turns, seconds: joined.samples.length / RATE, voices: people };
}

async function main(): Promise<void> {
  const cleanups = cleanupRegistry();
  out(`# docproc diarize benchmark — ${new Date().toISOString()}`);
  out(
    `load average at start: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; ${os.availableParallelism()} cores`,
  );
  try {
    fs.mkdirSync(INPUTS, { recursive: true });
    const espeak = async (name: string, voices: string[], lines = DIALOGUE) => ({
      ...(await dialogueRecording(INPUTS, name, voices, lines)),
      name: `espeak-ng ${voices.join(' / ')}${lines === DIALOGUE ? '' : `, ${lines.length} turns`}`,
      voices,
    });
    const recordings: Recording[] = [
      await espeak('m3-f3', ['en+m3', 'en+f3']),
      await espeak('usf2-m2', ['en-us+f2', 'en+m2']),
      await espeak('m3-f3-m7', ['en+m3', 'en+f3', 'en+m7']),
      await espeak('m3', ['en+m3']),
    ];
    if (REAL_DIR) {
      for (const pair of [
        ['en_US_f_Allison', 'it_IT_m_Carlo'],
        ['fr_CA_f_June', 'it_IT_m_Carlo'],
        ['en_US_f_Allison', 'fr_CA_f_June'],
        ['en_US_f_Allison', 'es_MX_f_Allison'],
      ])
        recordings.push({ ...(await promptDialogue(pair)), name: `Asterisk prompts ${pair.join(' / ')}` });
    }
    const turnsFor = Math.max(8, Math.round((MINUTES * 60) / 4.4));
    const long = await espeak(
      'long',
      ['en+m3', 'en+f3'],
      Array.from({ length: turnsFor }, (_, i) => DIALOGUE[i % 8]),
    );

    // The engine alone (one process, as one media slot of the service): CPU seconds of the process, which a shared
    // machine changes less than wall time, for the long dialogue without and with speaker windows.
    const engine = new LocalSpeechProvider({
      ...localSpeechOptions(loadConfig({ ...process.env, MEDIA_CONCURRENCY: '', SPEECH_THREADS: '' })),
      processes: 1,
    });
    cleanups.add(() => engine.close());
    await engine.transcribe(recordings[0].file, { language: 'en', speakers: true });
    const [pid] = engine.pids();
    const cpu: Record<string, number> = {};
    for (const speakers of [false, true, false, true]) {
      const c0 = procCpuSeconds(pid);
      const t0 = performance.now();
      await engine.transcribe(long.file, { language: 'en', speakers });
      const key = speakers ? 'with' : 'without';
      cpu[key] = Math.min(cpu[key] ?? Infinity, procCpuSeconds(pid) - c0);
      out(
        `engine alone, ${long.seconds.toFixed(0)} s dialogue, speakers ${speakers ? 'on ' : 'off'}: CPU ${cpu[key].toFixed(1)} s (best so far), wall ${secs(performance.now() - t0)}`,
      );
    }
    out(`engine CPU with / without speaker windows: ${(cpu.with / cpu.without).toFixed(2)}× (best of two each)`);
    await engine.close();

    const dbDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-bench-diarize-temporal-'));
    cleanups.add(async () => fs.rmSync(dbDir, { recursive: true, force: true }));
    const temporal = await startTemporalDev({
      bin: temporalBinary(),
      dbFile: path.join(dbDir, 'temporal.db'),
      port: await freePort(),
      uiPort: 0,
      headless: true,
    });
    cleanups.add(() => temporal.stop(10_000));
    const svc = await startService('diarize', temporal.address);
    let stopped = false;
    cleanups.add(async () => void (stopped || (await stopService(svc))));
    // Warm-up: loads the Whisper model and the speaker encoder in the engine processes.
    await Promise.all([transcribe(svc, recordings[0].file, true), transcribe(svc, recordings[0].file, true)]);

    out('');
    out(
      '== diarization error rate (10 ms frames of the reference turns; best label mapping) and the time diarize adds ==',
    );
    for (const r of [...recordings, long]) {
      const real = r.name.startsWith('Asterisk');
      const language = real ? 'auto' : 'en';
      const plain = await transcribe(svc, r.file, false, language);
      const dz = await transcribe(svc, r.file, true, language);
      const der = diarizationErrorRate(r.turns, labelledSpans(dz.segments));
      const found = new Set(dz.segments.map((s) => s.speaker)).size;
      const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
      out(
        `${r.name} (${r.seconds.toFixed(0)} s, ${r.voices.length} speaker(s), ${r.turns.length} turns): ${found} label(s); ` +
          `DER ${pct(der.der)} (confusion ${pct(der.confusion)}, missed ${pct(der.missed)}); ` +
          `time ${secs(plain.ms)} without, ${secs(dz.ms)} with diarize (${(dz.ms / plain.ms).toFixed(2)}×)`,
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
