import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { startStack, type Stack } from '../support/servers/stack';
import { responseChecker } from '../support/clients/openapi-schemas';
import { ffmpeg } from '../support/media/media-factory';
import { expectOrderedSegments } from '../support/media/speech-segments';
import { dialogueRecording, diarizationErrorRate, labelledSpans, type Turn } from '../support/media/speech-speakers';

// Speaker labels (`diarize=true`, issue 26) on the real API and worker, a Temporal dev server, real ffmpeg, the real
// local Whisper base model and the real speaker encoder (Resemblyzer's GE2E weights from PyPI, run by the engine).
// Dialogues of espeak-ng voices spoken in turn, cut into chunks of 15 s, so labels must hold across chunks.

const KEY = 'speech-diarize-test-key';
const auth = { authorization: `Bearer ${KEY}` };

async function post(base: string, route: string, fields: Record<string, string>, file?: string, mime = 'audio/wav') {
  const form = new FormData();
  if (file) form.append('file', new Blob([new Uint8Array(readFileSync(file))], { type: mime }), path.basename(file));
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(`${base}${route}`, {
    method: 'POST',
    body: form,
    headers: auth,
    signal: AbortSignal.timeout(180_000),
  });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

const ok = (r: { status: number; body: any }) => {
  expect(r.status, JSON.stringify(r.body).slice(0, 600)).to.equal(200);
  return r.body;
};

/** The reference speaker of the turn holding an instant (or the nearest turn). */
const speakerAt = (turns: Turn[], t: number): number =>
  turns.reduce((best, x) => {
    const d = t < x.start ? x.start - t : t > x.end ? t - x.end : 0;
    const b = t < best.start ? best.start - t : t > best.end ? t - best.end : 0;
    return d < b ? x : best;
  }).speaker;

describe('Speaker labels (diarize=true) with the local speech engine and speaker encoder', function () {
  this.timeout(300_000);
  let s: Stack;
  let dir: string;
  let two: { file: string; turns: Turn[]; seconds: number };
  let one: { file: string; turns: Turn[]; seconds: number };
  const documented = (route: string, status: number, body: unknown) =>
    expect(
      responseChecker(s.api.app.openapi())('post', route, status, body),
      JSON.stringify(body).slice(0, 400),
    ).to.deep.equal([]);

  before(async function () {
    this.timeout(300_000);
    dir = mkdtempSync(path.join(os.tmpdir(), 'speech-diarize-'));
    // A man's and a woman's espeak-ng voice in turn; and the man alone.
    two = await dialogueRecording(dir, 'two', ['en+m3', 'en+f3']);
    one = await dialogueRecording(dir, 'one', ['en+m3'], undefined, 0.8);
    s = await startStack({ AUDIO_CHUNK_SECONDS: '15', SERVICE_API_KEY: KEY, ALLOW_LOCALHOST_NO_AUTH: 'false' });
  });
  after(async () => {
    await s?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('two voices in turn: two labels across chunks, each segment and word labelled with who spoke it', async () => {
    const body = ok(
      await post(
        s.url,
        '/api/audio/process',
        { source_language: 'en', target_language: 'en', diarize: 'true', word_timestamps: 'true', subtitles: 'srt' },
        two.file,
      ),
    );
    documented('/api/audio/process', 200, body);
    const segments = body.data.segments;
    expectOrderedSegments(segments, two.seconds);
    expect(new Set(segments.map((x: any) => x.speaker))).to.deep.equal(new Set(['SPEAKER_1', 'SPEAKER_2']));
    // The first voice speaks first: SPEAKER_1 is voice 0.
    for (const seg of segments) {
      const who = speakerAt(two.turns, (seg.start + seg.end) / 2);
      expect(seg.speaker, JSON.stringify({ ...seg, words: undefined })).to.equal(`SPEAKER_${who + 1}`);
      for (const w of seg.words) expect(w.speaker, JSON.stringify(w)).to.equal(seg.speaker);
    }
    // Labels on nearly all the speech: confusion and missed speech (10 ms frames) both small.
    const der = diarizationErrorRate(two.turns, labelledSpans(segments));
    expect(der.confusion, JSON.stringify(der)).to.be.at.most(0.05);
    expect(der.der, JSON.stringify(der)).to.be.at.most(0.1);
    // The subtitles mark every turn (eight turns, in order), lines within 42 characters with the mark.
    const marks = [...body.data.subtitles.matchAll(/\[(SPEAKER_\d)\] /g)].map((m: RegExpMatchArray) => m[1]);
    expect(marks).to.deep.equal(two.turns.map((t) => `SPEAKER_${t.speaker + 1}`));
    for (const line of body.data.subtitles.split('\n')) expect(line.length, line).to.be.at.most(42);
  });

  it('one voice is one speaker; without word_timestamps the segments carry the speaker and no words', async () => {
    const d = ok(
      await post(
        s.url,
        '/api/audio/process',
        { source_language: 'en', target_language: 'en', diarize: 'true' },
        one.file,
      ),
    ).data;
    expect(d.segments.length).to.be.at.least(4);
    for (const seg of d.segments) expect(seg).to.have.all.keys('id', 'start', 'end', 'text', 'speaker');
    expect(new Set(d.segments.map((x: any) => x.speaker))).to.deep.equal(new Set(['SPEAKER_1']));
  });

  it('max_speakers=1 gives one label to two voices; max_speakers without diarize, or out of range, is a 400 naming it', async () => {
    const d = ok(
      await post(
        s.url,
        '/api/audio/process',
        { source_language: 'en', target_language: 'en', diarize: 'true', max_speakers: '1' },
        two.file,
      ),
    ).data;
    expect(new Set(d.segments.map((x: any) => x.speaker))).to.deep.equal(new Set(['SPEAKER_1']));
    const job = await s.call('GET', `/api/jobs/${d.process_id}`, undefined, auth);
    expect(job.body.data.parameters).to.include({ diarize: true, max_speakers: 1 });
    const refused: Record<string, string>[] = [
      { max_speakers: '2' },
      { diarize: 'true', max_speakers: '0' },
      { diarize: 'maybe' },
    ];
    for (const fields of refused) {
      const bad = await post(s.url, '/api/audio/process', fields, one.file);
      expect(bad.status, JSON.stringify(bad.body)).to.equal(400);
      expect(bad.body.error.code).to.equal('VALIDATION_ERROR');
      expect(JSON.stringify(bad.body.error.details.issues)).to.match(/max_speakers|diarize/);
    }
  });

  it('a video with diarize=true gains segments with speakers (spec §4.7 shape kept)', async () => {
    const mp4 = path.join(dir, 'talk.mp4');
    await ffmpeg(
      ...['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10', '-i', two.file, '-shortest'],
      ...['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', mp4],
    );
    const body = ok(
      await post(
        s.url,
        '/api/video/process',
        { source_language: 'en', target_language: 'en', diarize: 'true' },
        mp4,
        'video/mp4',
      ),
    );
    documented('/api/video/process', 200, body);
    const segments = body.data.segments;
    expect(new Set(segments.map((x: any) => x.speaker))).to.deep.equal(new Set(['SPEAKER_1', 'SPEAKER_2']));
    const der = diarizationErrorRate(two.turns, labelledSpans(segments));
    expect(der.confusion, JSON.stringify(der)).to.be.at.most(0.1);
  });
});
