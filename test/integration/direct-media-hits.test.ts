import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { startStack, type Stack } from '../support/servers/stack';
import { countWorkflowStarts } from '../support/direct-pdf';
import { responseChecker } from '../support/clients/openapi-schemas';
import { ffmpeg } from '../support/media/media-factory';
import { postMultipart } from '../support/clients/pdf-http';
import { SENTENCES, speak } from '../support/media/speech-samples';
import { readBlobBuffer } from '../../core/stores/blob-store';
import { jobResultsKey } from '../../core/stores/records';

// Issue 24 for audio and video: a synchronous request for an upload whose transcript is in the result cache is answered
// by the API without starting a workflow, with the data a hit through a job gives. The real API and worker, the shared
// Temporal dev server, real ffmpeg and the real local Whisper base model; speech by espeak-ng. Workflow starts are
// counted at the API's Temporal client (every start passes there), transcriptions at the worker's speech provider.

type Reply = { status: number; body: any; headers: Headers };

/** `data` without the fields named. */
const without = (data: Record<string, unknown>, ...keys: string[]) =>
  Object.fromEntries(Object.entries(data).filter(([k]) => !keys.includes(k)));

describe('audio and video cache hits answered without a job', function () {
  this.timeout(180_000);
  let s: Stack;
  let dir: string;
  let wav: Buffer;
  let mp4: Buffer;
  /** Workflow ids the API started in the current test. */
  let started: string[] = [];
  let transcriptions = 0;
  const documented = (route: string, r: Reply) =>
    expect(
      responseChecker(s.api.app.openapi())('post', route, r.status, r.body),
      JSON.stringify(r.body).slice(0, 400),
    ).to.deep.equal([]);
  const postAudio = (route: string, fields: Record<string, string>, query = '') =>
    postMultipart(`${s.url}${route}${query}`, fields, { bytes: wav, name: 'talk.wav', type: 'audio/wav' });
  const postVideo = (fields: Record<string, string>, query = '') =>
    postMultipart(`${s.url}/api/video/process${query}`, fields, { bytes: mp4, name: 'talk.mp4', type: 'video/mp4' });
  const ok = (r: Reply) => {
    expect(r.status, JSON.stringify(r.body).slice(0, 600)).to.equal(200);
    return r.body;
  };
  /** The finished job of a 202 (`wait_ms=0`): its `data` and job fields. */
  const jobOf = async (r: Reply) => {
    expect(r.status, JSON.stringify(r.body).slice(0, 600)).to.equal(202);
    const job = await s.waitJob(r.body.data.job_id, 120_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    return job;
  };

  before(async function () {
    this.timeout(240_000);
    dir = mkdtempSync(path.join(os.tmpdir(), 'direct-media-hits-'));
    const spoken = await speak(SENTENCES.en, 'en', dir, 'en');
    wav = readFileSync(spoken);
    const video = path.join(dir, 'talk.mp4');
    await ffmpeg(
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=320x240:rate=25',
      '-i',
      spoken,
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-shortest',
      video,
    );
    mp4 = readFileSync(video);
    s = await startStack();
    countWorkflowStarts(s, (id) => started.push(id));
    const speech = s.worker.workers.speech!;
    const transcribe = speech.transcribe.bind(speech);
    speech.transcribe = (...args) => {
      transcriptions += 1;
      return transcribe(...args);
    };
  });
  after(async () => {
    await s?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    started = [];
  });

  it('/api/audio/process: a miss runs a job; the same upload again is answered from the cache without a workflow, with the data of the job that computed it and of a hit through a job', async () => {
    const fields = { source_language: 'en', target_language: 'en', word_timestamps: 'true', subtitles: 'vtt' };
    const miss = await postAudio('/api/audio/process', fields);
    const first = ok(miss).data;
    expect([miss.headers.get('x-cache'), first.from_cache, started.length]).to.deep.equal(['miss', false, 1]);
    expect(first.process_id).to.equal(started[0]);
    const calls = transcriptions;

    const hit = await postAudio('/api/audio/process', fields);
    documented('/api/audio/process', hit);
    const d = ok(hit).data;
    expect(hit.headers.get('x-cache')).to.equal('hit');
    expect(started, 'a hit starts no workflow').to.deep.equal([started[0]]);
    expect(transcriptions, 'nor a transcription').to.equal(calls);
    // Field by field the miss's data: process_id and process_dir name the job that computed it.
    expect(d).to.deep.equal({ ...first, from_cache: true });
    expect(hit.body.process.llm_info).to.deep.equal({ total_tokens: 0, total_cost: 0, requests: [] });
    expect(hit.body.request.id).to.equal(hit.headers.get('x-request-id'));
    // That job's record holds the same data, its folder the transcript and the subtitles.
    const record = await s.call('GET', `/api/jobs/${d.process_id}`);
    expect(record.body.data.results).to.deep.include(without(d, 'from_cache'));
    const files = record.body.data.results.assets as string[];
    expect(
      files.every((f) => f.startsWith(`${d.process_dir}/`)),
      JSON.stringify(files),
    ).to.equal(true);
    const vtt = files.find((f) => f.endsWith('subtitles.vtt'))!;
    expect((await readBlobBuffer(s.api.store, vtt)).toString('utf8')).to.equal(d.subtitles);

    // A hit through a job (the client asks for one): the same data but for the job's own id and folder.
    const viaJob = await jobOf(await postAudio('/api/audio/process', fields, '?wait_ms=0'));
    expect(started).to.have.length(2);
    expect(viaJob.results.from_cache).to.equal(true);
    expect(viaJob.results).to.deep.include({
      ...without(d, 'process_id', 'process_dir', 'from_cache'),
      process_id: viaJob.job_id,
      process_dir: `jobs/${viaJob.job_id}/out`,
    });
    expect(transcriptions).to.equal(calls);

    // useCache=false runs a job again, and transcribes again.
    const forced = await postAudio('/api/audio/process', { ...fields, useCache: 'false' });
    expect([ok(forced).data.from_cache, forced.headers.get('x-cache'), started.length]).to.deep.equal([
      false,
      'miss',
      3,
    ]);
    expect(transcriptions).to.be.above(calls);
  });

  it('/api/audio/process: the entry also answers another subtitle format without word timings (the same transcript), shaped as a job shapes it', async () => {
    const timed = { source_language: 'en', target_language: 'en', word_timestamps: 'true' };
    const first = ok(await postAudio('/api/audio/process', timed)).data;
    started = [];
    const calls = transcriptions;
    const fields = { source_language: 'en', target_language: 'en', subtitles: 'srt' };
    const hit = await postAudio('/api/audio/process', fields);
    const d = ok(hit).data;
    expect([hit.headers.get('x-cache'), started.length, transcriptions]).to.deep.equal(['hit', 0, calls]);
    for (const seg of d.segments) expect(seg).to.have.all.keys('id', 'start', 'end', 'text');
    expect(d.segments).to.deep.equal(first.segments.map(({ words: _, ...seg }: any) => seg));
    expect(d.subtitles).to.match(/^1\n\d\d:\d\d:\d\d,\d{3} --> /);
    const viaJob = await jobOf(await postAudio('/api/audio/process', fields, '?wait_ms=0'));
    expect(viaJob.results).to.deep.include(without(d, 'process_id', 'process_dir', 'from_cache'));
  });

  it('/api/audio/process: an entry whose computing job is gone (swept) is answered by a job, never with a made-up process_id', async () => {
    const fields = { source_language: 'en', target_language: 'en', vad: 'false' };
    const first = ok(await postAudio('/api/audio/process', fields)).data;
    expect(started).to.deep.equal([first.process_id]);
    await s.api.store.delete(jobResultsKey(first.process_id));
    const calls = transcriptions;
    const again = await postAudio('/api/audio/process', fields);
    const d = ok(again).data;
    expect([again.headers.get('x-cache'), d.from_cache, started.length, transcriptions]).to.deep.equal([
      'hit',
      true,
      2,
      calls,
    ]);
    expect(d.process_id).to.equal(started[1]);
    expect(without(d, 'process_id', 'process_dir')).to.deep.equal(
      without({ ...first, from_cache: true }, 'process_id', 'process_dir'),
    );
  });

  it('/v1/audio/transcriptions: the second identical request is answered from the cache without a job, in the same bytes', async () => {
    const fields = { model: 'whisper-1', language: 'en', response_format: 'verbose_json' };
    const timed = { ...fields, 'timestamp_granularities[]': 'word' };
    const miss = await postAudio('/v1/audio/transcriptions', timed);
    expect(miss.status, JSON.stringify(miss.body).slice(0, 400)).to.equal(200);
    expect([miss.headers.get('x-cache'), miss.headers.get('x-job-id'), started.length]).to.deep.equal([
      'miss',
      started[0],
      1,
    ]);
    expect(miss.body.words).to.be.an('array').that.is.not.empty;
    const hit = await postAudio('/v1/audio/transcriptions', timed);
    expect(hit.status).to.equal(200);
    expect([hit.headers.get('x-cache'), hit.headers.get('x-job-id'), started.length]).to.deep.equal(['hit', null, 1]);
    expect(hit.body).to.deep.equal(miss.body);
    // Subtitles come from the same entry (word timings kept): as a job cuts them.
    const vtt = await postAudio('/v1/audio/transcriptions', { ...fields, response_format: 'vtt' });
    expect([vtt.status, vtt.headers.get('x-cache'), started.length]).to.deep.equal([200, 'hit', 1]);
    const job = await jobOf(
      await postAudio('/v1/audio/transcriptions', { ...fields, response_format: 'vtt' }, '?wait_ms=0'),
    );
    expect(job.results.from_cache).to.equal(true);
    expect(vtt.body).to.equal(job.results.subtitles);
  });

  it('/api/video/process: a cached upload is answered without a job with the data a hit through a job gives', async () => {
    const fields = { source_language: 'en', target_language: 'en', word_timestamps: 'true', subtitles: 'vtt' };
    const miss = await postVideo(fields);
    const first = ok(miss).data;
    expect([miss.headers.get('x-cache'), started.length]).to.deep.equal(['miss', 1]);
    const calls = transcriptions;
    const hit = await postVideo(fields);
    documented('/api/video/process', hit);
    expect([hit.headers.get('x-cache'), started.length, transcriptions]).to.deep.equal(['hit', 1, calls]);
    expect(hit.body.data).to.deep.equal(first);
    expect(first.metadata).to.deep.equal({ resolution: '320x240', codec: 'h264', fps: 25 });
    const viaJob = await jobOf(await postVideo(fields, '?wait_ms=0'));
    expect(viaJob.results.from_cache).to.equal(true);
    expect(without(viaJob.results, 'structured_data', 'assets', 'target_dir', 'llm_info', 'from_cache')).to.deep.equal(
      hit.body.data,
    );
    // useCache=false transcribes again.
    const forced = await postVideo({ ...fields, useCache: 'false' });
    expect([ok(forced).status, forced.headers.get('x-cache'), started.length]).to.deep.equal(['success', 'miss', 3]);
    expect(transcriptions).to.be.above(calls);
  });
});
