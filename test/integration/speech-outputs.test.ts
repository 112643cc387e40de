import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { startStack, type Stack } from '../support/servers/stack';
import OpenAI, { toFile } from 'openai';
import { responseChecker } from '../support/clients/openapi-schemas';
import { ffmpeg, joinWithPauses, pcmBytes, RATE, writeWav } from '../support/media/media-factory';
import { CHUNKED_SENTENCES, chunkedRecording, SENTENCES, speak } from '../support/media/speech-samples';
import { wordErrorRate } from '../support/media/wer';
import { roomNoise } from '../support/media/speech-recording';
import { expectOrderedSegments } from '../support/media/speech-segments';
import { readBlobBuffer } from '../../core/stores/blob-store';

// Speech outputs beyond the spec (contract §9, issue 26) on the real API and worker, a Temporal dev server, real
// ffmpeg and the real local Whisper base model: word timings, subtitles, voice activity detection, the prompt,
// language detection and the OpenAI-compatible endpoint (driven by the `openai` npm client). Speech by espeak-ng.

const KEY = 'speech-outputs-test-key';
const auth = { authorization: `Bearer ${KEY}` };

async function post(
  base: string,
  route: string,
  fields: Record<string, string>,
  file?: { path: string; name: string },
) {
  const form = new FormData();
  if (file) form.append('file', new Blob([new Uint8Array(readFileSync(file.path))], { type: 'audio/wav' }), file.name);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(`${base}${route}`, {
    method: 'POST',
    body: form,
    headers: auth,
    signal: AbortSignal.timeout(180_000),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers };
}

const ok = (r: { status: number; body: any }) => {
  expect(r.status, JSON.stringify(r.body).slice(0, 600)).to.equal(200);
  return r.body;
};

/** Samples of a WAV written by `speak`. */
const samplesOf = async (file: string) => {
  const pcm = await pcmBytes(file);
  return new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength));
};

const norm = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/** Cues of an SRT or WebVTT text: times in seconds and their lines. */
function parseCues(text: string): { start: number; end: number; lines: string[] }[] {
  const secs = (t: string) => {
    const [h, m, s] = t.replace(',', '.').split(':');
    return Number(h) * 3600 + Number(m) * 60 + Number(s);
  };
  return text
    .replace(/^WEBVTT\n\n/, '')
    .trim()
    .split(/\n\n+/)
    .map((block) => {
      const rows = block.split('\n');
      const at = rows.findIndex((r) => r.includes(' --> '));
      const [a, b] = rows[at].split(' --> ');
      return { start: secs(a), end: secs(b), lines: rows.slice(at + 1) };
    });
}

describe('Speech outputs beyond the spec: word timings, subtitles, VAD, prompt, language detection, OpenAI endpoint', function () {
  this.timeout(240_000);
  let s: Stack;
  let dir: string;
  let longFile: string;
  let longSeconds: number;
  let gapped: string;
  let gap: [number, number];
  let names: string;
  let lateGerman: string;
  let english: string;
  let transcribeCalls = 0;
  const documented = (route: string, status: number, body: unknown) =>
    expect(
      responseChecker(s.api.app.openapi())('post', route, status, body),
      JSON.stringify(body).slice(0, 400),
    ).to.deep.equal([]);

  before(async function () {
    this.timeout(240_000);
    dir = mkdtempSync(path.join(os.tmpdir(), 'speech-outputs-'));
    ({ file: longFile, seconds: longSeconds } = await chunkedRecording(dir));
    // A sentence, 30 s of room noise, a sentence: chunks of 10 s put whole chunks in the noise.
    const a = await samplesOf(await speak(CHUNKED_SENTENCES[0], 'en', dir, 'gap-a'));
    const b = await samplesOf(await speak(CHUNKED_SENTENCES[4], 'en', dir, 'gap-b'));
    const joined = joinWithPauses([a, roomNoise(30), b], () => 0);
    gap = [joined.spans[1][0], joined.spans[1][1]];
    gapped = path.join(dir, 'gapped.wav');
    await writeWav(gapped, joined.samples);
    names = await speak(
      'My colleague Siobhan Kowalczyk presented the Kubernetes migration. It went well.',
      'en',
      dir,
      'names',
    );
    // German after 40 s without speech: the detector must find the speech, not judge the silence.
    const de = await samplesOf(await speak(SENTENCES.de, 'de', dir, 'de'));
    lateGerman = path.join(dir, 'late-de.wav');
    await writeWav(lateGerman, joinWithPauses([new Int16Array(40 * RATE), de], () => 0).samples);
    english = await speak(SENTENCES.en, 'en', dir, 'en');
    s = await startStack({ AUDIO_CHUNK_SECONDS: '10', SERVICE_API_KEY: KEY, ALLOW_LOCALHOST_NO_AUTH: 'false' });
    const speech = s.worker.workers.speech!;
    const transcribe = speech.transcribe.bind(speech);
    speech.transcribe = (...args) => {
      transcribeCalls += 1;
      return transcribe(...args);
    };
  });
  after(async () => {
    await s?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('word_timestamps=true and subtitles=vtt: ordered words inside their segments across chunks, cues within the broadcast rules, the file beside the outputs', async () => {
    const r = await post(
      s.url,
      '/api/audio/process',
      { source_language: 'en', target_language: 'en', word_timestamps: 'true', subtitles: 'vtt' },
      { path: longFile, name: 'long.wav' },
    );
    const body = ok(r);
    documented('/api/audio/process', 200, body);
    const d = body.data;
    expectOrderedSegments(d.segments, longSeconds);
    const words = d.segments.flatMap((seg: any) => seg.words);
    let last = 0;
    for (const seg of d.segments) {
      expect(seg.words, JSON.stringify(seg)).to.be.an('array').that.is.not.empty;
      // The words make the segment's text, and lie inside it.
      expect(norm(seg.words.map((w: any) => w.word).join(''))).to.equal(norm(seg.text));
      for (const w of seg.words) {
        expect(w.start, JSON.stringify(w)).to.be.at.least(Math.max(seg.start, last));
        expect(w.end).to.be.at.least(w.start).and.at.most(seg.end);
        expect(w.probability).to.be.within(0, 1);
        last = w.start;
      }
    }
    // Later chunks' words are on the recording's time line: the last sentence's words near its end.
    expect(words.at(-1).end).to.be.above(longSeconds - 3);
    expect(words.filter((w: any) => w.start > 12).length).to.be.at.least(10);
    expect(wordErrorRate(CHUNKED_SENTENCES.join(' '), words.map((w: any) => w.word).join(''))).to.be.at.most(0.15);

    const cues = parseCues(d.subtitles);
    expect(d.subtitles.startsWith('WEBVTT\n\n')).to.equal(true);
    expect(cues.length).to.be.at.least(CHUNKED_SENTENCES.length);
    cues.forEach((c, i) => {
      expect(c.lines.length, JSON.stringify(c)).to.be.within(1, 2);
      for (const line of c.lines) expect(line.length, line).to.be.at.most(42);
      expect(c.end - c.start, JSON.stringify(c))
        .to.be.above(0)
        .and.at.most(7);
      if (i > 0) expect(c.start).to.be.at.least(cues[i - 1].end);
    });
    // The cues hold the transcript, word for word; no cue spans a sentence end.
    expect(norm(cues.flatMap((c) => c.lines).join(' '))).to.equal(norm(words.map((w: any) => w.word).join('')));
    for (const c of cues) expect(c.lines.join(' ').slice(0, -1), c.lines.join(' ')).not.to.match(/[.!?] /);
    // Written beside the outputs: the job's file is the answer's text.
    const job = await s.call('GET', `/api/jobs/${d.process_id}`, undefined, auth);
    const asset = job.body.data.results.assets.find((a: string) => a.endsWith('subtitles.vtt'));
    expect(asset, JSON.stringify(job.body.data.results.assets)).to.be.a('string');
    expect((await readBlobBuffer(s.api.store, asset)).toString('utf8')).to.equal(d.subtitles);
    const file = await fetch(`${s.url}/api/event-job/files/${asset}`, { headers: auth });
    expect(file.status).to.equal(200);
    expect(await file.text()).to.equal(d.subtitles);
  });

  it('without word_timestamps the segments carry no words (the spec’s shape), and srt numbers its cues', async () => {
    const d = ok(
      await post(
        s.url,
        '/api/audio/process',
        { source_language: 'en', target_language: 'en', subtitles: 'srt' },
        { path: english, name: 'en.wav' },
      ),
    ).data;
    for (const seg of d.segments) expect(seg).to.have.all.keys('id', 'start', 'end', 'text');
    expect(d.subtitles).to.match(/^1\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}\n/);
    expect(
      wordErrorRate(
        SENTENCES.en,
        parseCues(d.subtitles)
          .flatMap((c) => c.lines)
          .join(' '),
      ),
    ).to.be.at.most(0.2);
  });

  it('a video with word_timestamps=true and subtitles=srt gains segments with words and the subtitles (spec §4.7 shape kept)', async () => {
    const mp4 = path.join(dir, 'talk.mp4');
    await ffmpeg(
      ...['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10', '-i', english, '-shortest'],
      ...['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', mp4],
    );
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(readFileSync(mp4))], { type: 'video/mp4' }), 'talk.mp4');
    for (const [k, v] of Object.entries({
      source_language: 'en',
      target_language: 'en',
      word_timestamps: 'true',
      subtitles: 'srt',
    }))
      form.append(k, v);
    const res = await fetch(`${s.url}/api/video/process`, { method: 'POST', body: form, headers: auth });
    const body = await res.json();
    expect(res.status, JSON.stringify(body).slice(0, 400)).to.equal(200);
    documented('/api/video/process', 200, body);
    const d = body.data;
    expect(d).to.include.keys('duration', 'transcription', 'metadata', 'segments', 'subtitles');
    expect(d.segments[0].words[0]).to.have.all.keys('word', 'start', 'end', 'probability');
    expect(
      wordErrorRate(SENTENCES.en, d.segments.flatMap((x: any) => x.words.map((w: any) => w.word)).join('')),
    ).to.be.at.most(0.2);
    expect(d.subtitles).to.match(/^1\n00:00:0\d,\d{3} --> /);
  });

  it('VAD (on by default): 30 s of room noise between two sentences, whole chunks of it, yield no text; vad=false is taken', async () => {
    const d = ok(
      await post(
        s.url,
        '/api/audio/process',
        { source_language: 'en', target_language: 'en', word_timestamps: 'true' },
        { path: gapped, name: 'gapped.wav' },
      ),
    ).data;
    const inGap = d.segments.flatMap((seg: any) =>
      seg.words.filter((w: any) => w.end > gap[0] + 0.5 && w.start < gap[1] - 0.5),
    );
    expect(inGap, JSON.stringify(d.segments)).to.deep.equal([]);
    const expected = `${CHUNKED_SENTENCES[0]} ${CHUNKED_SENTENCES[4]}`;
    expect(wordErrorRate(expected, d.original_text), d.original_text).to.be.at.most(0.2);
    const off = await post(
      s.url,
      '/api/audio/process',
      { source_language: 'en', target_language: 'en', vad: 'false' },
      { path: gapped, name: 'gapped.wav' },
    );
    ok(off);
    expect(off.headers.get('x-cache'), 'vad=false is another cache entry').to.equal('miss');
    const job = await s.call('GET', `/api/jobs/${off.body.data.process_id}`, undefined, auth);
    expect(job.body.data.parameters.vad).to.equal(false);
    const bad = await post(s.url, '/api/audio/process', { vad: 'maybe' }, { path: gapped, name: 'gapped.wav' });
    expect(bad.status).to.equal(400);
  });

  it('passes the prompt to the engine: names and terms it holds are spelled as given', async () => {
    const fields = { source_language: 'en', target_language: 'en' };
    const plain = ok(await post(s.url, '/api/audio/process', fields, { path: names, name: 'n.wav' })).data;
    const prompted = ok(
      await post(
        s.url,
        '/api/audio/process',
        { ...fields, prompt: 'Siobhan Kowalczyk, Kubernetes' },
        { path: names, name: 'n.wav' },
      ),
    ).data;
    expect(plain.original_text).not.to.include('Kowalczyk');
    expect(prompted.original_text).to.include('Kowalczyk');
    expect(prompted.original_text).to.include('Kubernetes');
  });

  it('POST /api/audio/detect-language: German after 40 s of silence, English at once; nothing transcribed', async () => {
    const calls = transcribeCalls;
    const de = ok(await post(s.url, '/api/audio/detect-language', {}, { path: lateGerman, name: 'late.wav' }));
    documented('/api/audio/detect-language', 200, de);
    expect(de.data.language).to.equal('de');
    expect(de.data.language_probability).to.be.above(0.5).and.at.most(1);
    expect(de.data.duration).to.be.above(44);
    const en = ok(await post(s.url, '/api/audio/detect-language', {}, { path: english, name: 'en.wav' })).data;
    expect(en.language).to.equal('en');
    expect(transcribeCalls - calls, 'no transcription').to.equal(0);
    const neither = await post(s.url, '/api/audio/detect-language', {});
    expect(neither.status).to.equal(400);
  });

  it('POST /v1/audio/transcriptions answers the openai client in every response_format, behind the service key', async () => {
    const client = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: KEY, maxRetries: 0, timeout: 180_000 });
    const file = () => toFile(readFileSync(english), 'en.wav', { type: 'audio/wav' });
    const json = await client.audio.transcriptions.create({ file: await file(), model: 'whisper-1', language: 'en' });
    expect(wordErrorRate(SENTENCES.en, json.text), json.text).to.be.at.most(0.2);
    const text = await client.audio.transcriptions.create({
      file: await file(),
      model: 'whisper-1',
      response_format: 'text',
    });
    expect(String(text).trim()).to.equal(json.text);
    const srt = await client.audio.transcriptions.create({
      file: await file(),
      model: 'whisper-1',
      response_format: 'srt',
    });
    expect(String(srt)).to.match(/^1\n00:00:0\d,\d{3} --> /);
    const verbose = await client.audio.transcriptions.create({
      file: await file(),
      model: 'whisper-1',
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
      prompt: 'children, bridge',
    });
    expect(verbose.language).to.equal('english');
    expect(verbose.duration).to.be.above(5);
    expect(verbose.segments!.length).to.be.at.least(1);
    expect(verbose.words!.length).to.be.at.least(15);
    for (let i = 1; i < verbose.words!.length; i++)
      expect(verbose.words![i].start).to.be.at.least(verbose.words![i - 1].start);
    const vtt = await client.audio.transcriptions.create({
      file: await file(),
      model: 'whisper-1',
      response_format: 'vtt',
    });
    expect(String(vtt).startsWith('WEBVTT')).to.equal(true);
    // The same key as every endpoint; an option the engine cannot honour is refused, not ignored.
    const stranger = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: 'wrong', maxRetries: 0 });
    const refused = await stranger.audio.transcriptions
      .create({ file: await file(), model: 'whisper-1' })
      .catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(OpenAI.AuthenticationError);
    const hot = await client.audio.transcriptions
      .create({ file: await file(), model: 'whisper-1', temperature: 0.7 })
      .catch((e: unknown) => e);
    expect(hot).to.be.instanceOf(OpenAI.BadRequestError);
  });
});
