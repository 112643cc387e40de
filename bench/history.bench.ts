/**
 * How big the histories of big jobs grow (issue 20: events per history): Temporal caps a run at 51,200 events and
 * 50 MB, and every event is replayed when a worker picks a run up again. Asserts nothing; prints the figures.
 *
 *   npx tsx bench/history.bench.ts        (or `npm run bench -- history`, which provisions the engines first)
 *
 * On a local dev server with the worker in this process and the OpenAI-compatible test server as the model:
 * - a BENCH_HISTORY_PAGES (2000) page PDF read in page groups of 2 with a webhook on the job: `vision_llm` (the model
 *   answers at once), whose page groups and steps are those of `local_ocr` (the same history; tesseract on 2,000
 *   pages would take about ten minutes of this machine's two cores and change nothing in it), and the job's notifier;
 * - an event summary over BENCH_HISTORY_SESSIONS (100) sessions in 10 tracks (a model call per session, per track and
 *   for the event).
 */
import { Client } from '@temporalio/client';
import type proto from '@temporalio/proto';
import { putSessionRecord } from '../core/stores/session-store';
import { notifierWorkflowId } from '../core/jobs/webhooks';
import { llmEnv, message } from '../test/support/servers/llm-env';
import { startLlmServer } from '../test/support/servers/llm-server';
import { buildPdf } from '../test/support/documents/pdf-factory';
import { sessionRecord } from '../test/support/sessions';
import { startWebhookReceiver } from '../test/support/servers/webhook-receiver';
import { sharedBundle } from '../test/support/workflows/worker';
import { createLocalEnv, startHarness } from '../test/support/workflows/workflow-env';
import { envInt, out, secs } from './support';

type History = proto.temporal.api.history.v1.IHistory;

const PAGES = envInt('BENCH_HISTORY_PAGES', 2000);
const SESSIONS = envInt('BENCH_HISTORY_SESSIONS', 100);
const TRACKS = 10;
/** Temporal's limits per run (the server's defaults). */
const EVENT_LIMIT = 51_200;
const SIZE_LIMIT = 50 * 1024 * 1024;

function describeHistory(name: string, h: History): string {
  const events = h.events ?? [];
  const count = (pick: (e: (typeof events)[number]) => unknown) => events.filter((e) => pick(e)).length;
  const bytes = Buffer.byteLength(JSON.stringify(h));
  return (
    `${name}: ${events.length} events (${((100 * events.length) / EVENT_LIMIT).toFixed(1)} % of ${EVENT_LIMIT}), about ${(bytes / 1024).toFixed(0)} KB as JSON ` +
    `(${((100 * bytes) / SIZE_LIMIT).toFixed(2)} % of 50 MB); ${count((e) => e.activityTaskScheduledEventAttributes)} activities, ` +
    `${count((e) => e.workflowTaskCompletedEventAttributes)} workflow tasks, ${count((e) => e.timerStartedEventAttributes)} timers, ` +
    `${count((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes)} signals sent, ${count((e) => e.markerRecordedEventAttributes)} markers`
  );
}

async function main() {
  const t0 = performance.now();
  const env = await createLocalEnv();
  const llm = await startLlmServer();
  const receiver = await startWebhookReceiver();
  await sharedBundle();
  const client = new Client({ connection: env.connection });
  const h = await startHarness(
    { address: env.address, client, connection: env.connection, nativeConnection: env.nativeConnection },
    { env: llmEnv(llm) },
  );
  try {
    out(`# History sizes (dev server; page groups of 2; MEDIA_CONCURRENCY=1 in the harness)`);

    // The model: a page's text for a vision request, a short summary naming what it was given otherwise.
    llm.respond((req) => {
      if (JSON.stringify(req.json?.messages ?? '').includes('image_url'))
        return { content: 'Page text read by the vision model.' };
      if (req.json?.response_format) return undefined;
      const names = [...message(req, 'user').matchAll(/^(?:Session: |## )(.+)$/gm)].map((m) => m[1]);
      return {
        content: `About ${names.slice(0, 3).join('; ') || 'the sessions'}. ${'Some words of summary. '.repeat(6)}`,
      };
    });

    const pdf = buildPdf({
      pages: Array.from({ length: PAGES }, (_, i) => ({ kind: 'lines' as const, lines: [`Page ${i + 1}`], size: 12 })),
    });
    const ref = await h.store.put('uploads/history-bench.pdf', pdf, { mime: 'application/pdf' });
    let t = performance.now();
    const big = await h.jobs.create({
      jobType: 'pdf',
      parameters: { file_key: ref.key, extraction_method: 'vision_llm', use_cache: false },
      webhook: { url: receiver.url, jobId: 'history-bench' },
    });
    await client.workflow.getHandle(big.state.job_id).result();
    out(
      `${PAGES}-page job completed in ${secs(performance.now() - t)}; ${receiver.requests.length} webhook deliveries`,
    );
    out(describeHistory(`${PAGES}-page job`, await client.workflow.getHandle(big.state.job_id).fetchHistory()));
    const notifier = client.workflow.getHandle(notifierWorkflowId(big.state.job_id));
    await notifier.result();
    out(describeHistory(`its notifier`, await notifier.fetchHistory()));

    const event = 'History Conf';
    for (let i = 0; i < SESSIONS; i++) {
      const rec = sessionRecord({
        event,
        track: `Track ${i % TRACKS}`,
        session: `Session ${i}`,
        language: 'en',
        topic: 'Bench',
      });
      await h.store.put(
        rec.markdown_key,
        `# Session ${i}\n\n${'Maps, routing engines and open data in some detail. '.repeat(25)}\n`,
        { mime: 'text/markdown' },
      );
      await putSessionRecord(h.store, rec);
    }
    t = performance.now();
    const summary = await h.jobs.create({
      jobType: 'event_summary',
      parameters: { event, template: 'EventSummary', target_language: 'en', chunk_chars: 12_000 },
    });
    await client.workflow.getHandle(summary.state.job_id).result();
    out(
      `event summary over ${SESSIONS} sessions in ${TRACKS} tracks completed in ${secs(performance.now() - t)}; ${llm.chatRequests().length} model requests in all`,
    );
    out(
      describeHistory(
        `${SESSIONS}-session event summary`,
        await client.workflow.getHandle(summary.state.job_id).fetchHistory(),
      ),
    );
    out(`total ${secs(performance.now() - t0)}`);
  } finally {
    await h.stop();
    await receiver.close();
    await llm.close();
    await env.teardown();
  }
}

main().catch((e: unknown) => {
  out(`failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(1);
});
