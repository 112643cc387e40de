import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../core/config/config';
import { freePort, startLocalLlm } from '../../scripts/services.mjs';
import { ROOT } from '../support/servers/processes';
import { SENTENCES, speak } from '../support/media/speech-samples';
import { startStack, type Stack } from '../support/servers/stack';
import { waitFor } from '../support/wait';

// The real local model (Qwen2.5-Coder-1.5B GGUF, provisioned by scripts/engines-llm.mjs) in its own server process
// (llm-server/main.ts, as `npm start` runs it) behind the real API and worker: no stand-in anywhere. The model's
// wording varies, so the tests assert facts (a date, names, nouns, a length), never sentences.

/** The file `npm test` provisioned (LLM_LOCAL_MODEL_PATH), else the engine cache's. */
const MODEL_PATH = loadConfig({
  LLM_LOCAL_MODEL_PATH: process.env.LLM_LOCAL_MODEL_PATH,
  DOCPROC_CACHE_DIR: process.env.DOCPROC_CACHE_DIR,
}).localLlm.modelPath;

const MEETING_DE = [
  'Protokoll der Projektbesprechung vom 14. März 2025 in Hamburg.',
  'Anwesend waren Anna Schmidt (Projektleitung), Jonas Weber (Entwicklung) und Lea Braun (Vertrieb).',
  'Anna Schmidt eröffnete die Sitzung und stellte den Zeitplan für das zweite Quartal vor.',
  'Jonas Weber berichtete, dass die neue Schnittstelle Ende April fertig sein wird.',
  'Lea Braun wies darauf hin, dass zwei Kunden auf die Auslieferung warten.',
  'Beschlossen wurde, die Tests um eine Woche vorzuziehen.',
].join('\n');

const TEMPLATE = [
  '# {{title|Ein kurzer Titel der Besprechung}}',
  '',
  'Datum: {{date|Das Datum der Besprechung im ISO-Format JJJJ-MM-TT, z. B. 2024-01-31}}',
  '',
  'Teilnehmer: {{speakers|Die vollständigen Namen aller anwesenden Personen, durch Kommas getrennt}}',
].join('\n');

/** About 400 words on one subject, so a summary has facts to keep: a city's new tram line. */
const LONG_TEXT = Array.from({ length: 3 }, (_, i) =>
  [
    `Part ${i + 1}. The city of Freiburg opened its new tram line to the university hospital this spring after three years of construction.`,
    'The line is six kilometres long, has eleven stops and connects the main station with the hospital and the ' +
      'western suburbs.',
    'Trams run every seven and a half minutes during the day and every fifteen minutes in the evening and on Sundays.',
    'The project cost about one hundred and twenty million euros, most of it paid by the federal state and the ' +
      'national government.',
    'During construction, shops along the route complained about lost customers, and the city paid compensation to ' +
      'some of them.',
    'Since the opening, the number of passengers has been higher than planned, and buses on the parallel route ' +
      'have been reduced.',
    'Residents praise the quieter streets, while cyclists ask for safer crossings at two of the new stops.',
  ].join(' '),
).join('\n\n');

describe('The local language model through the service (real model server, API and worker)', function () {
  this.timeout(900_000);
  let llm: { child: ChildProcess; stop: () => Promise<void> } | undefined;
  let port: number;
  let s: Stack;
  let dir: string;
  const llmEnv = () =>
    ({
      ...process.env,
      LLM_LOCAL_MODEL_PATH: MODEL_PATH,
      LLM_LOCAL_QUEUE: '1',
      LLM_LOCAL_SLOTS: '1',
      LOG_LEVEL: 'warn',
    }) as Record<string, string>;
  const startModel = async () => {
    llm = (await startLocalLlm({ root: ROOT, port, env: llmEnv(), stdio: 'ignore', timeoutMs: 300_000 })) as typeof llm;
  };
  const health = async () =>
    (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as { active: number; queued: number };
  /** Polls the model server until `pred` holds (its own state, no sleeps standing in for it). */
  const until = (pred: (h: { active: number; queued: number }) => boolean, what: string) =>
    waitFor(async () => pred(await health()), `the model server to reach: ${what}`, {
      timeoutMs: 300_000,
      everyMs: 50,
      errors: 'throw',
    });

  before(async function () {
    this.timeout(600_000);
    if (!existsSync(MODEL_PATH))
      throw new Error(`no local model at ${MODEL_PATH}: run node scripts/engines-llm.mjs (npm test does)`);
    dir = mkdtempSync(path.join(os.tmpdir(), 'local-llm-test-'));
    port = await freePort();
    await startModel();
    // Retries enough to outlast a restart of the model server (backoff doubles to 20 s).
    s = await startStack({
      LLM_PROVIDER: 'local',
      LLM_LOCAL_PORT: String(port),
      LLM_LOCAL_MODEL_PATH: MODEL_PATH,
      LLM_MAX_RETRIES: '10',
    });
  });
  after(async () => {
    await s?.stop();
    await llm?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('fills an inline template from a German meeting note: the ISO date and all three speakers', async () => {
    const r = await s.call('POST', '/api/transformer/template', {
      text: MEETING_DE,
      template_content: TEMPLATE,
      source_language: 'de',
      target_language: 'de',
    });
    expect(r.status, JSON.stringify(r.body).slice(0, 500)).to.equal(200);
    const fields = r.body.data.template_fields;
    expect(Object.keys(fields).sort()).to.deep.equal(['date', 'speakers', 'title']);
    for (const v of Object.values(fields)) expect(v).to.be.a('string');
    expect(fields.date).to.match(/2025-03-14/);
    for (const name of ['Anna Schmidt', 'Jonas Weber', 'Lea Braun']) expect(fields.speakers).to.include(name);
    expect(r.body.data.transformed_text).to.include('Lea Braun');
  });

  it('translates a German sentence to English keeping its key nouns, and the job names the local model', async () => {
    const r = await s.call('POST', '/api/jobs/', {
      job_type: 'transformer',
      parameters: {
        operation: 'text',
        text: 'Der Vorstand hat den Vertrag mit der Stadt Hamburg gestern unterschrieben.',
        source_language: 'de',
        target_language: 'en',
      },
    });
    expect(r.status, JSON.stringify(r.body)).to.be.oneOf([200, 201, 202]);
    const job = await s.waitJob(r.body.data.job_id, 600_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    const text = String(job.results.translated_text);
    expect(text).to.match(/contract|agreement/i);
    expect(text).to.match(/board/i);
    expect(text).to.include('Hamburg');
    expect(job.results.llm_info.requests[0].model).to.equal('qwen2.5-coder-1.5b-instruct-q4_k_m');
    expect(job.results.llm_info.total_tokens).to.be.above(0);
  });

  it('summarises a 400-word text within max_length', async () => {
    const words = LONG_TEXT.split(/\s+/).length;
    expect(words).to.be.within(380, 480);
    const r = await s.call('POST', '/api/transformer/summarize', { text: LONG_TEXT, max_length: 400 });
    expect(r.status, JSON.stringify(r.body).slice(0, 500)).to.equal(200);
    const summary = String(r.body.data.summary);
    expect(summary.length).to.be.within(40, 400);
    expect(summary).to.match(/tram/i);
  });

  it('answers 503 with Retry-After when its queue is full', async () => {
    const ask = (signal: AbortSignal) =>
      fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'qwen2.5-coder-1.5b-instruct-q4_k_m',
          max_tokens: 400,
          messages: [{ role: 'user', content: 'Count slowly from 1 to 300.' }],
        }),
        signal,
      });
    const stop = new AbortController();
    const running = ask(stop.signal).catch(() => undefined);
    await until((h) => h.active === 1, 'one request generating');
    const waiting = ask(stop.signal).catch(() => undefined);
    await until((h) => h.queued === 1, 'one request queued (LLM_LOCAL_QUEUE=1)');
    const res = await ask(AbortSignal.timeout(30_000));
    expect(res.status).to.equal(503);
    expect(Number(res.headers.get('retry-after'))).to.be.at.least(1);
    const body = (await res.json()) as { error: { type: string; code: string; message: string } };
    expect(body.error).to.include({ type: 'server_busy', code: 'queue_full' });
    stop.abort();
    await Promise.all([running, waiting]);
    // The clients that went away left the queue and stopped their generation.
    await until((h) => h.active === 0 && h.queued === 0, 'an idle server after the clients left');
  });

  it('waits out a full queue: a job whose calls meet 503 until the provider gives up is retried by Temporal and completes', async () => {
    // A stack whose provider does not retry at all: every 503 of the full queue ends an attempt of the step, so only
    // the error boundary's outage retries (PROVIDER_OUTAGE_MAX_MS, honouring Retry-After) can carry the job through.
    const impatient = await startStack({
      LLM_PROVIDER: 'local',
      LLM_LOCAL_PORT: String(port),
      LLM_LOCAL_MODEL_PATH: MODEL_PATH,
      LLM_MAX_RETRIES: '0',
    });
    const stop = new AbortController();
    try {
      const ask = () =>
        fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'qwen2.5-coder-1.5b-instruct-q4_k_m',
            max_tokens: 2000,
            messages: [{ role: 'user', content: 'Count slowly from 1 to 3000.' }],
          }),
          signal: stop.signal,
        }).catch(() => undefined);
      const running = ask();
      await until((h) => h.active === 1, 'one request generating');
      const waiting = ask();
      await until((h) => h.queued === 1, 'one request queued: the queue is full');
      const r = await impatient.call('POST', '/api/jobs/', {
        job_type: 'transformer',
        parameters: {
          operation: 'text',
          text: 'Die Stadt Hamburg hat den Vertrag gestern unterschrieben.',
          source_language: 'de',
          target_language: 'en',
          use_cache: false,
        },
      });
      expect(r.status, JSON.stringify(r.body)).to.be.oneOf([200, 201, 202]);
      const jobId = r.body.data.job_id;
      // The step fails on the 503 and is tried again by Temporal: its second attempt is waiting or running.
      const handle = impatient.api.temporal.client.workflow.getHandle(jobId);
      await waitFor(
        async () => {
          const d = await handle.describe();
          if (d.raw.pendingActivities?.some((a) => (a.attempt ?? 0) >= 2)) return true;
          if (d.status.name !== 'RUNNING')
            throw new Error(`the job's run ended (${d.status.name}) before its step was retried`);
        },
        'the step to be tried again',
        { timeoutMs: 120_000, everyMs: 200, errors: 'throw' },
      );
      expect(
        (await impatient.call('GET', `/api/jobs/${jobId}`)).body.data.status,
        'still processing, not failed',
      ).to.equal('processing');
      stop.abort();
      await Promise.all([running, waiting]);
      const job = await impatient.waitJob(jobId, 600_000);
      expect(job.status, JSON.stringify(job.error)).to.equal('completed');
      expect(String(job.results.translated_text)).to.include('Hamburg');
    } finally {
      stop.abort();
      await impatient.stop();
    }
  });

  it('finishes a job whose model server was killed mid-request: the call is retried against the restarted server', async () => {
    const r = await s.call('POST', '/api/jobs/', {
      job_type: 'transformer',
      parameters: {
        operation: 'template',
        text: MEETING_DE,
        template_content: TEMPLATE,
        source_language: 'de',
        target_language: 'de',
      },
    });
    expect(r.status, JSON.stringify(r.body)).to.be.oneOf([200, 201, 202]);
    const jobId = r.body.data.job_id;
    await until((h) => h.active === 1, 'the job generating');
    llm!.child.kill('SIGKILL');
    await new Promise((resolve) => llm!.child.once('exit', resolve));
    await startModel();
    const job = await s.waitJob(jobId, 600_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    expect(job.results.template_fields.date).to.match(/2025-03-14/);
  });

  it('translates English speech (source_language=auto) to German with the local model', async () => {
    const file = await speak(SENTENCES.en, 'en', dir, 'en');
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(readFileSync(file))], { type: 'audio/wav' }), 'speech.wav');
    form.append('source_language', 'auto');
    form.append('target_language', 'de');
    const res = await fetch(`${s.url}/api/audio/process`, {
      method: 'POST',
      body: form,
      signal: AbortSignal.timeout(600_000),
    });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body).slice(0, 500)).to.equal(200);
    expect(body.data.detected_language).to.equal('en');
    // German, and at least two of the recording's key nouns (children, park, bridge, lunch, evening) in German.
    const german = String(body.data.translated_text);
    expect(german, german).to.match(/\b(und|die|der|das|wir)\b/i);
    const nouns = [/Kinder/i, /Park/i, /Brücke/i, /Mittag/i, /Abend/i].filter((n) => n.test(german));
    expect(nouns.length, german).to.be.at.least(2);
  });
});
