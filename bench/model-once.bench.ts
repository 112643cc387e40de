/**
 * Model calls sent and paid per answer under a model slower than the client's timeout. Prints the figures; asserts
 * nothing.
 *
 *   npx tsx bench/model-once.bench.ts        (or `npm run bench -- model-once`)
 *
 * Everything on 127.0.0.1: a Temporal dev server (temp SQLite, WAL, headless), the real `worker/main.ts` and
 * `api/main.ts` processes, and the OpenAI-compatible test server (`test/support/servers/llm-server.ts`) whose every answer
 * takes BENCH_ONCE_MODEL_MS (3000) while the client's LLM_TIMEOUT_MS is BENCH_ONCE_TIMEOUT_MS (1000), LLM_MAX_RETRIES
 * at its default (4), and PROVIDER_OUTAGE_MAX_MS BENCH_ONCE_WINDOW_MS (45000) so a job that is never answered ends.
 * Two endpoints: one that honours `Idempotency-Key` (as the local model server does; the service told so with
 * LLM_IDEMPOTENCY_KEYS=true) and one that ignores it (every request computed, the service's default for a remote).
 * For each: BENCH_ONCE_JOBS (4) translation jobs at once (one model call each, distinct texts), then: jobs completed,
 * requests sent, requests the endpoint computed (what it would charge for), each per answer, and the wall time.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startTemporalDev } from '../scripts/services.mjs';
import { llmEnv, LLM_KEY } from '../test/support/servers/llm-env';
import { startLlmServer } from '../test/support/servers/llm-server';
import { startService, stopService } from './service';
import { cleanupRegistry, envInt, out, secs, temporalBinary } from './support';

const MODEL_MS = envInt('BENCH_ONCE_MODEL_MS', 3000);
const TIMEOUT_MS = envInt('BENCH_ONCE_TIMEOUT_MS', 1000);
const WINDOW_MS = envInt('BENCH_ONCE_WINDOW_MS', 45_000);
const JOBS = envInt('BENCH_ONCE_JOBS', 4);

async function runJob(url: string, n: number): Promise<{ status: string; error?: unknown }> {
  const res = await fetch(`${url}/api/jobs/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      job_type: 'transformer',
      parameters: {
        operation: 'text',
        text: `Satz ${n} von ${Date.now()}: Der Rat hat den Haushalt beschlossen.`,
        source_language: 'de',
        target_language: 'en',
        use_cache: false,
      },
    }),
  });
  const created = (await res.json()) as { data: { job_id: string } };
  for (;;) {
    const r = (await (await fetch(`${url}/api/jobs/${created.data.job_id}?wait=30`)).json()) as {
      data: { status: string; error?: unknown };
    };
    if (r.data.status === 'completed' || r.data.status === 'failed') return r.data;
  }
}

const per = (n: number, answers: number) => (answers ? (n / answers).toFixed(2) : `∞ (${n} for no answer)`);

async function main() {
  const cleanup = cleanupRegistry();
  out(
    `model-once bench: model ${MODEL_MS} ms, LLM_TIMEOUT_MS ${TIMEOUT_MS}, LLM_MAX_RETRIES 4, PROVIDER_OUTAGE_MAX_MS ${WINDOW_MS}, ` +
      `${JOBS} translation jobs at once; ${os.availableParallelism()} cores, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-bench-once-'));
  cleanup.add(async () => fs.rmSync(dir, { recursive: true, force: true }));
  const temporal = await startTemporalDev({
    bin: temporalBinary(),
    dbFile: path.join(dir, 'temporal.db'),
    port: await freePort(),
    uiPort: 0,
    headless: true,
  });
  cleanup.add(() => temporal.stop());
  for (const honours of [true, false]) {
    const llm = await startLlmServer({ apiKey: LLM_KEY, idempotencyKeys: honours });
    llm.respond(() => ({ delayMs: MODEL_MS }));
    const svc = await startService(`once-${honours ? 'keys' : 'nokeys'}`, temporal.address, {
      ...llmEnv(llm, {
        LLM_TIMEOUT_MS: String(TIMEOUT_MS),
        LLM_MAX_RETRIES: '4',
        PROVIDER_OUTAGE_MAX_MS: String(WINDOW_MS),
        ...(honours ? { LLM_IDEMPOTENCY_KEYS: 'true' } : {}),
      }),
    });
    const t0 = performance.now();
    const jobs = await Promise.all(Array.from({ length: JOBS }, (_, i) => runJob(svc.url, i)));
    const wall = performance.now() - t0;
    const answers = jobs.filter((j) => j.status === 'completed').length;
    const sent = llm.chatRequests().length;
    const paid = llm.paidRequests().length;
    out(
      `${honours ? 'endpoint honours keys ' : 'endpoint ignores keys '}: ${answers}/${JOBS} jobs completed in ${secs(wall)}; ` +
        `requests sent ${sent} (${per(sent, answers)} per answer), computed (paid) ${paid} (${per(paid, answers)} per answer)`,
    );
    const failed = jobs.find((j) => j.status === 'failed');
    if (failed) out(`  a failed job: ${JSON.stringify(failed.error).slice(0, 300)}`);
    await stopService(svc);
    await llm.close();
  }
  await cleanup.run();
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
