import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import { startStack, type Stack } from '../support/servers/stack';
import { startTestApi } from '../support/servers/api';
import { responseChecker } from '../support/clients/openapi-schemas';
import { llmEnv, LLM_KEY, LLM_MODEL } from '../support/servers/llm-env';
import { startLlmServer, type LlmServer } from '../support/servers/llm-server';
import { readSse } from '../support/jobs';
import { ffmpeg } from '../support/media/media-factory';
import { CHUNKED_SENTENCES, chunkedRecording, SENTENCES, speak } from '../support/media/speech-samples';
import { droppedWords, wordErrorRate } from '../support/media/wer';
import { expectOrderedSegments } from '../support/media/speech-segments';
import type { SpeechProvider } from '../../domain/engines/speech';

// POST /api/audio/process and the `audio` job type (spec §4.11, contract §7) on the real API and worker, a Temporal
// dev server, real ffmpeg and the real local Whisper base model; speech is synthesised by espeak-ng. The only stand-in
// is the wire-protocol LLM server (template and translation).

async function postAudio(
  base: string,
  fields: Record<string, string>,
  file: { bytes: Buffer; name: string; type: string },
) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(file.bytes)], { type: file.type }), file.name);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(`${base}/api/audio/process`, {
    method: 'POST',
    body: form,
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, cache: res.headers.get('x-cache') };
}

const ok = (r: { status: number; body: any }) => {
  expect(r.status, JSON.stringify(r.body).slice(0, 600)).to.equal(200);
  expect(r.body.status).to.equal('success');
  return r.body;
};

describe('Audio transcription (POST /api/audio/process, job type audio) on the real engines', function () {
  this.timeout(120_000);
  let s: Stack;
  let llm: LlmServer;
  let dir: string;
  let de: Buffer;
  let deFile: string;
  let longFile: string;
  let longDuration: number;
  let speech: SpeechProvider;
  /** Engine calls since the stack started (the worker's provider, wrapped: it still transcribes for real). */
  let engineCalls = 0;
  /** The data of the first German request (the baseline the other cases compare with). */
  let first: any;
  const baseline = async () =>
    (first ??= ok(
      await postAudio(s.url, { source_language: 'auto' }, { bytes: de, name: 'speech.wav', type: 'audio/wav' }),
    ).data);
  /** The answer validates against the schema the OpenAPI document gives it. */
  const documented = (status: number, body: unknown) =>
    expect(
      responseChecker(s.api.app.openapi())('post', '/api/audio/process', status, body),
      JSON.stringify(body).slice(0, 400),
    ).to.deep.equal([]);

  before(async function () {
    this.timeout(180_000);
    dir = mkdtempSync(path.join(os.tmpdir(), 'audio-test-'));
    deFile = await speak(SENTENCES.de, 'de', dir, 'de');
    de = readFileSync(deFile);
    ({ file: longFile, seconds: longDuration } = await chunkedRecording(dir));
    llm = await startLlmServer({ apiKey: LLM_KEY });
    // Chunks of about 10 s (the smallest AUDIO_CHUNK_SECONDS): the long recording is cut into several.
    s = await startStack(llmEnv(llm, { AUDIO_CHUNK_SECONDS: '10' }));
    speech = s.worker.workers.speech!;
    const transcribe = speech.transcribe.bind(speech);
    speech.transcribe = (...args) => {
      engineCalls += 1;
      return transcribe(...args);
    };
  });
  after(async () => {
    await s?.stop();
    await llm?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => llm?.reset());

  it('transcribes a German recording with every field of spec §4.11, German detected and a word error rate of at most 30 %', async () => {
    const calls = engineCalls;
    const r = await postAudio(s.url, { source_language: 'auto' }, { bytes: de, name: 'speech.wav', type: 'audio/wav' });
    const body = ok(r);
    first = body.data;
    documented(200, body);
    expect(r.cache).to.equal('miss');
    expect(body.request.id).to.be.a('string').and.not.empty;
    expect(Date.parse(body.request.timestamp)).to.be.a('number').and.not.NaN;
    expect(body.process.duration_ms).to.be.a('number').and.above(0);
    const d = body.data;
    expect(d).to.have.all.keys(
      'duration',
      'detected_language',
      'output_text',
      'original_text',
      'translated_text',
      'llm_model',
      'translation_model',
      'token_count',
      'segments',
      'process_id',
      'process_dir',
      'from_cache',
    );
    expect(d.detected_language).to.equal('de');
    const wer = wordErrorRate(SENTENCES.de, d.original_text);
    expect(wer, d.original_text).to.be.at.most(0.3);
    expect(d.output_text).to.equal(d.original_text);
    expect(d).to.include({
      translated_text: null,
      llm_model: null,
      translation_model: null,
      token_count: 0,
      from_cache: false,
    });
    expect(d.duration).to.be.within(5, 15);
    expectOrderedSegments(d.segments, d.duration);
    expect(d.process_id).to.match(/^job-/);
    expect(d.process_dir).to.equal(`jobs/${d.process_id}/out`);
    expect(engineCalls - calls).to.equal(1);
    const requests = body.process.llm_info.requests;
    expect(requests).to.have.length(1);
    expect(requests[0]).to.include({ model: 'whisper-base', purpose: 'transcription', tokens: 0 });
    expect(requests[0].duration_ms).to.be.a('number').and.above(0);
    expect(llm.chatRequests()).to.have.length(0);
  });

  it('answers the same request from the result cache: X-Cache hit, from_cache true, no engine call, the computing job named', async () => {
    await baseline();
    const calls = engineCalls;
    const r = await postAudio(s.url, { source_language: 'auto' }, { bytes: de, name: 'again.wav', type: 'audio/wav' });
    const d = ok(r).data;
    expect(r.cache).to.equal('hit');
    expect(d.from_cache).to.equal(true);
    expect(engineCalls).to.equal(calls);
    expect(d.original_text).to.equal(first.original_text);
    expect(d.segments).to.deep.equal(first.segments);
    // Answered by the API without a job (issue 24): the job named is the one that computed the entry.
    expect(d.process_id).to.equal(first.process_id);
    expect(r.body.process.llm_info).to.deep.equal({ total_tokens: 0, total_cost: 0, requests: [] });
  });

  it('cuts a 25 s recording into chunks at pauses, stitches increasing segments and loses no words against the unchunked transcript', async () => {
    const whole = await speech.transcribe(longFile, { language: 'en' });
    const calls = engineCalls;
    const r = await postAudio(
      s.url,
      { source_language: 'en', target_language: 'en', useCache: 'false' },
      { bytes: readFileSync(longFile), name: 'long.wav', type: 'audio/wav' },
    );
    const d = ok(r).data;
    const chunks = engineCalls - calls;
    expect(chunks).to.be.at.least(2);
    expect(d.duration).to.be.closeTo(longDuration, 0.01);
    expectOrderedSegments(d.segments, d.duration);
    expect(d.segments.at(-1).end).to.be.above(d.duration - 3);
    // Nothing dropped at the cuts: at least 95 % of the whole recording's words are in the chunked transcript
    // (a word the model hears differently without the previous chunk's context is a substitution, not a loss).
    const dropped = droppedWords(whole.text, d.original_text);
    expect(1 - dropped.share, `${whole.text}\n${d.original_text}`).to.be.at.least(0.95);
    expect(1 - wordErrorRate(whole.text, d.original_text)).to.be.at.least(0.85);
    expect(wordErrorRate(CHUNKED_SENTENCES.join(' '), d.original_text), d.original_text).to.be.at.most(0.15);
    expect(r.body.process.llm_info.requests.filter((q: any) => q.purpose === 'transcription')).to.have.length(chunks);
    // Progress per chunk: one event for each, in percent of audio seconds done, on the job's SSE stream.
    const stream = await readSse(`${s.url}/api/jobs/${d.process_id}/events`);
    const transcribed = stream.events.filter(
      (e) => e.event === 'processing' && /of the audio transcribed/.test(e.data.message),
    );
    expect(transcribed).to.have.length(chunks);
    expect(transcribed.at(-1)!.data.message).to.match(/^100 %/);
    for (let i = 1; i < transcribed.length; i++)
      expect(transcribed[i].data.progress).to.be.at.least(transcribed[i - 1].data.progress);
  });

  it('refuses a text file and a video without sound with 400 INVALID_FORMAT before any job or upload exists', async () => {
    const silent = path.join(dir, 'silent.mp4');
    await ffmpeg('-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10:duration=2', '-pix_fmt', 'yuv420p', silent);
    const before = {
      jobs: (await s.worker.store.list('jobs/')).length,
      uploads: (await s.worker.store.list('uploads/')).length,
    };
    const cases = [
      {
        file: { bytes: Buffer.from('Dies ist kein Ton, nur ein paar Worte.\n'), name: 'notes.mp3', type: 'audio/mpeg' },
        type: 'unsupported_format',
      },
      { file: { bytes: readFileSync(silent), name: 'silent.mp4', type: 'video/mp4' }, type: 'no_audio_stream' },
    ];
    for (const c of cases) {
      const r = await postAudio(s.url, {}, c.file);
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      documented(400, r.body);
      expect(r.body.error.code).to.equal('INVALID_FORMAT');
      expect(r.body.error.details.error_type).to.equal(c.type);
      expect(r.body.error.details.supported_formats).to.include.members([
        'flac',
        'm4a',
        'mp3',
        'mp4',
        'ogg',
        'wav',
        'webm',
      ]);
    }
    expect((await s.worker.store.list('jobs/')).length).to.equal(before.jobs);
    expect((await s.worker.store.list('uploads/')).length).to.equal(before.uploads);
  });

  it('fills the template, then translates: one template call, one translation call, both in llm_info with the speech', async () => {
    await baseline();
    llm.reset();
    const r = await postAudio(
      s.url,
      { template: 'PdfMetadata', target_language: 'en' },
      { bytes: de, name: 'speech.wav', type: 'audio/wav' },
    );
    const body = ok(r);
    documented(200, body);
    const d = body.data;
    const chats = llm.chatRequests();
    expect(chats).to.have.length(2);
    expect(JSON.stringify(chats[0].json.messages)).to.include(first.original_text.slice(0, 30));
    expect(chats[0].json.response_format?.type).to.equal('json_object');
    expect(JSON.stringify(chats[1].json.messages)).to.include('title value');
    expect(d.original_text).to.equal(first.original_text);
    expect(d.translated_text)
      .to.match(/^Echo: /)
      .and.include('title value');
    expect(d.output_text).to.equal(d.translated_text);
    expect(d).to.include({ llm_model: LLM_MODEL, translation_model: LLM_MODEL });
    const purposes = body.process.llm_info.requests.map((q: any) => q.purpose);
    expect(purposes).to.deep.equal(['transcription', 'template', 'translation']);
    expect(body.process.llm_info.total_tokens).to.be.above(0).and.equal(d.token_count);
  });

  it('answers 504 naming the job past MEDIA_SYNC_WAIT_MS; the job goes on and its results hold the data', async () => {
    await baseline();
    // The template call waits for the test to open the gate: the job cannot finish within the 1 s wait.
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    llm.respond(async () => {
      await gate;
      return undefined;
    });
    const c = s.api.config;
    const api = await startTestApi(
      {
        DATA_DIR: c.DATA_DIR,
        TASK_QUEUE_PREFIX: c.TASK_QUEUE_PREFIX,
        TEMPORAL_ADDRESS: c.TEMPORAL_ADDRESS!,
        MEDIA_SYNC_WAIT_MS: '1000',
      },
      { store: s.worker.store },
    );
    let jobId: string;
    try {
      const r = await postAudio(
        api.url,
        { template: 'PdfMetadata', useCache: 'false' },
        { bytes: de, name: 'speech.wav', type: 'audio/wav' },
      );
      expect(r.status, JSON.stringify(r.body)).to.equal(504);
      documented(504, r.body);
      expect(r.body.error.code).to.equal('TIMEOUT');
      jobId = r.body.error.details.job_id;
      expect(jobId).to.match(/^job-/);
    } finally {
      open();
      await api.close();
    }
    const job = await s.waitJob(jobId, 90_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    expect(job.results.original_text).to.equal(first.original_text);
    expect(job.results.output_text).to.include('title value');
    expect(job.results).to.include({ process_id: jobId, llm_model: LLM_MODEL, translated_text: null });
  });

  it('runs as job type audio through /api/jobs/ with the same data in results', async () => {
    await baseline();
    const created = await s.call('POST', '/api/jobs/', {
      job_type: 'audio',
      parameters: { filename: deFile, source_language: 'auto', use_cache: false },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    const job = await s.waitJob(created.body.data.job_id, 90_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    const { process_id: _p, process_dir: _d, from_cache: _f, ...same } = first;
    (void _p, _d, _f);
    expect(job.results).to.deep.include(same);
    expect(job.results).to.include({
      process_id: job.job_id,
      process_dir: `jobs/${job.job_id}/out`,
      from_cache: false,
    });
  });

  it('names the model that translated in llm_model when there is no template (job type audio)', async () => {
    const created = await s.call('POST', '/api/jobs/', {
      job_type: 'audio',
      parameters: { filename: deFile, source_language: 'auto', target_language: 'en', use_cache: false },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    const job = await s.waitJob(created.body.data.job_id, 90_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    const chats = llm.chatRequests();
    expect(chats).to.have.length(1);
    expect(JSON.stringify(chats[0].json.messages)).to.include('to English (en)');
    expect(job.results.detected_language).to.equal('de');
    expect(job.results.translated_text).to.match(/^Echo: /);
    expect(job.results).to.include({ llm_model: LLM_MODEL, translation_model: LLM_MODEL });
    const purposes = job.results.llm_info.requests.map((q: any) => q.purpose);
    expect(purposes).to.deep.equal(['transcription', 'translation']);
  });

  it('restarts a job that failed after transcription without transcribing its chunks again', async () => {
    llm.respond(() => ({
      status: 401,
      body: {
        error: {
          message: 'Incorrect API key provided',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      },
    }));
    const calls = engineCalls;
    const created = await s.call('POST', '/api/jobs/', {
      job_type: 'audio',
      parameters: {
        filename: longFile,
        source_language: 'en',
        target_language: 'en',
        template: 'PdfMetadata',
        use_cache: false,
      },
    });
    const failed = await s.waitJob(created.body.data.job_id, 90_000);
    expect(failed.status).to.equal('failed');
    const chunks = engineCalls - calls;
    expect(chunks).to.be.at.least(2);
    llm.respond(null);
    const restarted = await s.call('POST', `/api/event-job/${failed.job_id}/restart`);
    expect(restarted.status, JSON.stringify(restarted.body)).to.equal(200);
    const done = await s.waitJob(failed.job_id, 90_000);
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect(engineCalls - calls).to.equal(chunks);
    expect(done.results.output_text).to.include('title value');
    expect(done.logs.map((l: any) => l.message).join('\n')).to.match(new RegExp(`${chunks} chunk\\(s\\) reused`));
  });
});
