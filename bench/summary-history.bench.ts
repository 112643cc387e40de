/**
 * A 1,000-session event summary (issue 33 item 5): how long it takes and how big the histories grow (Temporal caps
 * a run at 51,200 events and 50 MB). Asserts nothing; prints the figures.
 *
 *   npx tsx bench/summary-history.bench.ts        (or `npm run bench -- summary-history`)
 *
 * On a local dev server with the real workers in this process and the OpenAI-compatible test server as the model
 * (it answers at once, so the time is the service's: Temporal, the activities, the store): BENCH_SUMMARY_SESSIONS
 * (1000) sessions in BENCH_SUMMARY_TRACKS (10) tracks, one piece each, `chunk_chars` 12,000 as the route sends it.
 * The job's own history and every slice's (`summaryCallsWorkflow`, patched('summary-slices')).
 */
import { Client } from '@temporalio/client';
import { llmEnv } from '../test/support/servers/llm-env';
import { startLlmServer } from '../test/support/servers/llm-server';
import { seedEvent, summarizingModel, summaryHistories, type HistoryFigures } from '../test/support/summary-load';
import { sharedBundle } from '../test/support/workflows/worker';
import { createLocalEnv, startHarness } from '../test/support/workflows/workflow-env';
import { envInt, out, secs } from './support';

const SESSIONS = envInt('BENCH_SUMMARY_SESSIONS', 1000);
const TRACKS = envInt('BENCH_SUMMARY_TRACKS', 10);
const EVENT_LIMIT = 51_200;
const SIZE_LIMIT = 50 * 1024 * 1024;

const line = (name: string, f: HistoryFigures) =>
  `${name}: ${f.events} events (${((100 * f.events) / EVENT_LIMIT).toFixed(2)} % of ${EVENT_LIMIT}), ` +
  `${(f.bytes / 1024).toFixed(0)} KB as JSON (${((100 * f.bytes) / SIZE_LIMIT).toFixed(2)} % of 50 MB)`;

async function main() {
  const env = await createLocalEnv();
  const llm = await startLlmServer();
  await sharedBundle();
  const client = new Client({ connection: env.connection });
  const h = await startHarness(
    { address: env.address, client, connection: env.connection, nativeConnection: env.nativeConnection },
    { env: llmEnv(llm) },
  );
  try {
    const event = 'Bench Conf';
    let t = performance.now();
    await seedEvent(h.store, event, SESSIONS, TRACKS);
    out(`# ${SESSIONS}-session event summary (${TRACKS} tracks; seeded in ${secs(performance.now() - t)})`);
    summarizingModel(llm);
    t = performance.now();
    const job = await h.jobs.create({
      jobType: 'event_summary',
      parameters: { event, template: 'EventSummary', target_language: 'en', chunk_chars: 12_000 },
    });
    await client.workflow.getHandle(job.state.job_id).result();
    out(`completed in ${secs(performance.now() - t)}; ${llm.chatRequests().length} model requests`);
    const { job: own, children } = await summaryHistories(client, job.state.job_id);
    out(line('the job', own));
    const most = children.reduce((a, b) => (b.events > a.events ? b : a), children[0] ?? own);
    const sum = children.reduce((n, c) => n + c.events, 0);
    out(`${children.length} slices, ${sum} events in all; the largest: ${line(most.workflowId, most)}`);
  } finally {
    await h.stop();
    await llm.close();
    await env.teardown();
  }
}

main().catch((e: unknown) => {
  out(`failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(1);
});
