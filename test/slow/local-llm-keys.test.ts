import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadConfig } from '../../core/config/config';
import { freePort, startLocalLlm } from '../../scripts/services.mjs';
import { ROOT } from '../support/servers/processes';
import { startStack, type Stack } from '../support/servers/stack';
import { waitFor } from '../support/wait';

// The real local model server (llm-server/main.ts with the provisioned Qwen2.5-Coder-1.5B GGUF) honours
// Idempotency-Key: a request whose client went away goes on computing, the same key while it computes waits for it
// and after it answered gets the same answer, so a client's retry after a timeout, or a dead worker's successor, is
// never computed twice. Through the service: a job whose model calls outlast LLM_TIMEOUT_MS completes with one
// computation per call (before, each timeout stopped the generation and the retry began it again, until the job
// failed).

const MODEL_PATH = loadConfig({
  LLM_LOCAL_MODEL_PATH: process.env.LLM_LOCAL_MODEL_PATH,
  DOCPROC_CACHE_DIR: process.env.DOCPROC_CACHE_DIR,
}).localLlm.modelPath;
const MODEL = 'qwen2.5-coder-1.5b-instruct-q4_k_m';

interface Health {
  active: number;
  queued: number;
  idempotency?: { computed: number; joined: number; replayed: number; entries: number };
}

describe('the local model server and idempotency keys (real model)', function () {
  this.timeout(900_000);
  let llm: { child: ChildProcess; stop: () => Promise<void> } | undefined;
  let port = 0;
  let s: Stack | undefined;
  const health = async (): Promise<Health> =>
    (await fetch(`http://127.0.0.1:${port}/health`)).json() as Promise<Health>;
  const until = (pred: (h: Health) => boolean, what: string) =>
    waitFor(async () => pred(await health()), `the model server to reach: ${what}`, {
      timeoutMs: 300_000,
      everyMs: 50,
      errors: 'throw',
    });
  const chat = (key: string, user: string, signal?: AbortSignal) =>
    fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ model: MODEL, max_tokens: 48, messages: [{ role: 'user', content: user }] }),
      signal,
    });

  before(async function () {
    this.timeout(600_000);
    if (!existsSync(MODEL_PATH))
      throw new Error(`no local model at ${MODEL_PATH}: run node scripts/engines-llm.mjs (npm test does)`);
    port = await freePort();
    llm = (await startLocalLlm({
      root: ROOT,
      port,
      env: { ...process.env, LLM_LOCAL_MODEL_PATH: MODEL_PATH, LLM_LOCAL_SLOTS: '1', LOG_LEVEL: 'warn' },
      stdio: 'ignore',
      timeoutMs: 300_000,
    })) as typeof llm;
  });
  after(async () => {
    await s?.stop();
    await llm?.stop();
  });

  it('goes on with a keyed request whose client left, and answers the same key from that one generation', async () => {
    const before = (await health()).idempotency!;
    const gone = new AbortController();
    const first = chat('test-key-1', 'Count from one to forty in English words.', gone.signal).catch(() => undefined);
    await until((h) => h.active === 1, 'the first request generating');
    gone.abort();
    await first;
    // The client is gone; the generation is not.
    await new Promise((r) => setTimeout(r, 500));
    expect((await health()).active, 'still generating without its client').to.equal(1);

    const again = await chat('test-key-1', 'Count from one to forty in English words.');
    expect(again.status).to.equal(200);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    const answer = (await again.json()) as { id: string; choices: { message: { content: string } }[] };
    expect(answer.choices[0].message.content.length).to.be.above(0);
    const replay = await chat('test-key-1', 'Count from one to forty in English words.');
    expect(((await replay.json()) as { id: string }).id, 'the same answer').to.equal(answer.id);

    const after = (await health()).idempotency!;
    expect(after.computed - before.computed, 'one generation').to.equal(1);
    expect(after.joined - before.joined, 'the retry waited for it').to.equal(1);
    expect(after.replayed - before.replayed, 'the third got it kept').to.equal(1);
    const reused = await chat('test-key-1', 'Something else entirely.');
    expect(reused.status, 'the key with another request').to.equal(422);
  });

  it('completes a translation whose generation outlasts LLM_TIMEOUT_MS with one generation for its call', async () => {
    s = await startStack({
      LLM_PROVIDER: 'local',
      LLM_LOCAL_PORT: String(port),
      LLM_LOCAL_MODEL_PATH: MODEL_PATH,
      // Far shorter than the generation: every request times out at least once; the retries carry the call's key.
      LLM_TIMEOUT_MS: '500',
      LLM_MAX_RETRIES: '2',
    });
    const before = (await health()).idempotency!;
    const r = await s.call('POST', '/api/jobs/', {
      job_type: 'transformer',
      parameters: {
        operation: 'text',
        text: 'Der Vorstand hat den Vertrag mit der Stadt Hamburg gestern nach langen Verhandlungen unterschrieben.',
        source_language: 'de',
        target_language: 'en',
        use_cache: false,
      },
    });
    expect(r.status, JSON.stringify(r.body)).to.be.oneOf([200, 201, 202]);
    const job = await s.waitJob(r.body.data.job_id, 600_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    expect(String(job.results.translated_text)).to.include('Hamburg');
    const after = (await health()).idempotency!;
    expect(after.computed - before.computed, 'one generation for the one call').to.equal(1);
    expect(after.joined + after.replayed - before.joined - before.replayed, 'retries after timeouts').to.be.above(0);
  });
});
