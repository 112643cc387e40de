/**
 * Can Temporal's own fast path replace the API's inline answers (issue 34, item 1)? For (a) a transformer cache hit
 * and (b) a 1 KB HTML-to-Markdown transform, the same work answered over HTTP four ways, from one small HTTP server
 * in this process (so the HTTP cost is the same for every row) with a Temporal worker in this process too (a worker
 * inside the API process, as the question asks):
 *
 * - inline: the request handler does the work itself (today's direct answer: `peekCache` + `transformerData`, or
 *   `runHtmlOperation` + `writeCache` + `transformerData`);
 * - eager start: `client.workflow.execute(answerWorkflow, { requestEagerStart: true })`, the workflow's one step a
 *   local activity doing the same work (the client shares the worker's NativeConnection, as eager start requires);
 * - the same workflow without eager start (for scale);
 * - update-with-start: `client.workflow.executeUpdateWithStart` to one long-lived `hostWorkflow` on this worker
 *   (`workflowIdConflictPolicy: USE_EXISTING`), whose update handler runs the same local activity.
 *
 * Printed: p50/p99 of each, the ratios to inline, how many starts the server really made eager, and whether each
 * path meets today's figures (cache hit p50 ≈ 1.7–3.8 ms, 1 KB transform p50 ≈ 6–9 ms). Asserts nothing about time.
 *
 *   npx tsx bench/fastpath-temporal.bench.ts        (or `npm run bench -- fastpath-temporal`)
 *
 * On 127.0.0.1: a Temporal dev server on a temp SQLite file (WAL, headless; `system.enableEagerWorkflowStart` on).
 * Knobs (env): BENCH_FPT_N (300 measured requests per row), BENCH_FPT_WARMUP (30).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, WithStartWorkflowOperation } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { peekCache, writeCache } from '../core/stores/cache';
import { TRANSFORM_CACHE_OPERATION, transformCacheKey } from '../core/stores/cache-keys';
import { runHtmlOperation } from '../core/html/run';
import { transformerData } from '../core/results/result-shapes';
import { LocalBlobStore } from '../providers/storage';
import { DEV_SERVER_DYNAMIC_CONFIG, freePort, startTemporalDev } from '../scripts/services.mjs';
import type { AnswerRequest } from './fastpath-temporal-workflows';
import { agent, htmlKb, post } from './load-client';
import { cleanupRegistry, envInt, ms, out, ratio, temporalBinary } from './support';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const N = envInt('BENCH_FPT_N', 300);
const WARMUP = envInt('BENCH_FPT_WARMUP', 30);
/** Today's figures (bench/README.md, fastpath rows 1 and 2): the upper end is what a workflow path must meet. */
const TODAY = { hit: { low: 1.7, high: 3.8 }, transform: { low: 6, high: 9 } };

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] : NaN;
}

async function main(): Promise<void> {
  const cleanups = cleanupRegistry();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-bench-fastpath-temporal-'));
  cleanups.add(async () => fs.rmSync(tmp, { recursive: true, force: true }));
  try {
    const installed = JSON.parse(
      fs.readFileSync(path.join(HERE, '..', 'node_modules', '@temporalio', 'client', 'package.json'), 'utf8'),
    ) as { version: string };
    out(
      `fastpath-temporal bench: ${os.availableParallelism()} cores, load average ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}, Node ${process.version}, @temporalio/client ${installed.version}`,
    );
    Runtime.install({ logger: new DefaultLogger('WARN') });
    const temporal = await startTemporalDev({
      bin: temporalBinary(),
      dbFile: path.join(tmp, 'temporal.db'),
      port: await freePort(),
      uiPort: 0,
      headless: true,
      // Eager start is on by default in Server 1.29; named so a run on another server measures the same thing.
      dynamicConfig: { ...DEV_SERVER_DYNAMIC_CONFIG, ...{ 'system.enableEagerWorkflowStart': 'true' } },
    });
    cleanups.add(() => temporal.stop(10_000));
    const store = await new LocalBlobStore(path.join(tmp, 'blobs')).init();

    // The work of each answer, as the API's direct answer does it (api/services/direct-answer.ts).
    const work = async (req: AnswerRequest): Promise<Record<string, unknown>> => {
      if (req.kind === 'hit') {
        const hit = await peekCache<{ text: string; metadata: Record<string, unknown> }>(
          store,
          TRANSFORM_CACHE_OPERATION,
          String(req.key),
        );
        if (!hit) throw new Error('no cache entry');
        return transformerData('html-to-markdown', { operation: 'html-to-markdown', html: req.html }, hit);
      }
      const params = { operation: 'html-to-markdown', html: String(req.html) };
      const computed = runHtmlOperation('html-to-markdown', params.html);
      await writeCache(store, TRANSFORM_CACHE_OPERATION, transformCacheKey(params, {}), computed);
      return transformerData('html-to-markdown', params, computed);
    };

    const t0 = performance.now();
    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: path.join(HERE, 'fastpath-temporal-workflows.ts'),
      logger: new DefaultLogger('WARN'),
    });
    out(`bundled bench/fastpath-temporal-workflows.ts in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const connection = await NativeConnection.connect({ address: temporal.address });
    cleanups.add(() => connection.close());
    const taskQueue = `bench-fpt-${randomUUID().slice(0, 8)}`;
    const worker = await Worker.create({
      connection,
      taskQueue,
      workflowBundle,
      activities: { answer: work },
    });
    const running = worker.run();
    cleanups.add(async () => {
      worker.shutdown();
      await running.catch(() => undefined);
    });
    // Eager start needs the client on the worker's own NativeConnection.
    const client = new Client({ connection });
    let eager = 0;
    let eagerAsked = 0;
    const hostId = `bench-fpt-host-${randomUUID().slice(0, 8)}`;

    const paths: Record<string, (req: AnswerRequest) => Promise<Record<string, unknown>>> = {
      inline: work,
      'eager start + local activity': async (req) => {
        const handle = await client.workflow.start('answerWorkflow', {
          taskQueue,
          workflowId: `bench-fpt-${randomUUID()}`,
          args: [req],
          requestEagerStart: true,
        });
        eagerAsked++;
        if (handle.eagerlyStarted) eager++;
        return (await handle.result()) as Record<string, unknown>;
      },
      'start (not eager) + local activity': async (req) =>
        (await client.workflow.execute('answerWorkflow', {
          taskQueue,
          workflowId: `bench-fpt-${randomUUID()}`,
          args: [req],
        })) as Record<string, unknown>,
      'update-with-start to a hosted workflow': async (req) =>
        (await client.workflow.executeUpdateWithStart('answer', {
          args: [req],
          startWorkflowOperation: new WithStartWorkflowOperation('hostWorkflow', {
            workflowId: hostId,
            taskQueue,
            workflowIdConflictPolicy: 'USE_EXISTING',
          }),
        })) as Record<string, unknown>,
    };
    cleanups.add(() =>
      client.workflow
        .getHandle(hostId)
        .signal('stop')
        .catch(() => undefined),
    );

    // One HTTP server in this process: POST /<path index>/<hit|transform>, body the request; the answer `data`.
    const names = Object.keys(paths);
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const [, idx] = String(req.url).split('/');
        const body = JSON.parse(Buffer.concat(chunks).toString()) as AnswerRequest;
        paths[names[Number(idx)]](body).then(
          (data) => {
            res.setHeader('content-type', 'application/json');
            res.end(JSON.stringify({ status: 'success', data }));
          },
          (e: unknown) => {
            res.statusCode = 500;
            res.end(String(e));
          },
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.add(() => new Promise((r) => server.close(r)));
    const port = (server.address() as { port: number }).port;

    // The cache entry a hit reads (written as the transformer activity writes it).
    const hitHtml = htmlKb();
    const hitParams = { operation: 'html-to-markdown', html: hitHtml };
    const hitKey = transformCacheKey(hitParams, {});
    await writeCache(store, TRANSFORM_CACHE_OPERATION, hitKey, runHtmlOperation('html-to-markdown', hitHtml));
    const expectedHit = JSON.stringify(
      transformerData('html-to-markdown', hitParams, runHtmlOperation('html-to-markdown', hitHtml)),
    );

    const results: Record<string, Record<'hit' | 'transform', number[]>> = {};
    let wrong = 0;
    let firstWrong = '';
    for (const kind of ['hit', 'transform'] as const) {
      // Rows interleaved in rounds of 10, so load from other processes falls on every row alike.
      for (const name of names) (results[name] ??= { hit: [], transform: [] })[kind] = [];
      const rounds = Math.ceil((N + WARMUP) / 10);
      for (let r = 0; r < rounds; r++) {
        for (const [i, name] of names.entries()) {
          for (let j = 0; j < 10; j++) {
            const req: AnswerRequest = kind === 'hit' ? { kind, key: hitKey, html: hitHtml } : { kind, html: htmlKb() };
            const a = await post(`http://127.0.0.1:${port}/${i}/${kind}`, JSON.stringify(req));
            const data = a.status === 200 ? JSON.stringify((JSON.parse(a.text) as { data: unknown }).data) : '';
            if (a.status !== 200 || (kind === 'hit' && data !== expectedHit)) {
              wrong++;
              firstWrong ||= `${name} ${kind}: ${a.status} ${a.text.slice(0, 300)}`;
            }
            if (r * 10 + j >= WARMUP) results[name][kind].push(a.ms);
          }
        }
      }
    }

    out();
    out(`${N} measured requests per row (after ${WARMUP} warm-up), sequential, interleaved; HTTP from this process`);
    for (const kind of ['hit', 'transform'] as const) {
      out();
      const title =
        kind === 'hit' ? '(a) cache hit (1 KB HTML-to-Markdown entry)' : '(b) 1 KB HTML-to-Markdown transform';
      out(title);
      const base = pct(results.inline[kind], 50);
      for (const name of names) {
        const xs = results[name][kind];
        const p50 = pct(xs, 50);
        const meets = p50 <= TODAY[kind].high;
        out(
          `${name.padEnd(40)} p50 ${ms(p50).padStart(9)}  p99 ${ms(pct(xs, 99)).padStart(9)}  ` +
            `${ratio(p50, base).padStart(7)} inline` +
            (name === 'inline' ? '' : `  today's p50 (≤ ${TODAY[kind].high} ms): ${meets ? 'met' : 'NOT met'}`),
        );
      }
    }
    out();
    out(
      `eager starts: ${eager} of ${eagerAsked} asked were started eagerly by the server; wrong answers: ${wrong}${firstWrong ? ` (first: ${firstWrong})` : ''}; ` +
        `load average at the end ${os
          .loadavg()
          .map((x) => x.toFixed(1))
          .join(' ')}`,
    );
  } finally {
    agent.destroy();
    await cleanups.run();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`${(e as Error)?.stack ?? e}\n`);
    process.exit(1);
  },
);
