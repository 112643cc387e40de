/**
 * The session store at scale (issue #15): listing by event, track, topic and language with BENCH_SESSIONS (10,000)
 * session records, on the local store and on MinIO. Prints figures and ratios against the backend's raw key listing;
 * asserts nothing about time.
 *
 *   npx tsx bench/sessions.bench.ts        (or `npm run bench -- sessions`)
 *
 * Knobs (env): BENCH_SESSIONS (10000), BENCH_SESSIONS_REPEAT (5 timed runs per figure, the median printed).
 * Only records are written (no Markdown blobs): listing never reads those.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startMinio, freePort } from '../scripts/services.mjs';
import type { BlobStore } from '../core/stores/blob-store';
import { mapPool } from '../core/runtime/pool';
import {
  countSessions,
  listSessionEntries,
  listSessionRecords,
  putSessionRecord,
  sessionPath,
  type SessionRecord,
} from '../core/stores/session-store';
import { LocalBlobStore } from '../providers/storage';
import { S3BlobStore } from '../providers/storage/s3.store';
import { envInt, ms, out, ratio } from './support';
import { enginePaths } from '../test/support/servers/engines';

const N = envInt('BENCH_SESSIONS', 10_000);
const REPEAT = envInt('BENCH_SESSIONS_REPEAT', 5);
const EVENTS = 10;
const TRACKS = 20;
const TOPICS = 30;

/** N sessions over 10 events × 20 tracks (track names shared across events), 30 topics, a tenth also in English. */
function records(): SessionRecord[] {
  const out: SessionRecord[] = [];
  for (let i = 0; out.length < N; i++) {
    const event = `Konferenz ${2016 + (i % EVENTS)}`;
    const track = `Track ${Math.floor(i / EVENTS) % TRACKS} – Öffentlichkeit`;
    const session = `Session ${i}: Über offene Daten`;
    const base = {
      event,
      track,
      session,
      filename: `session-${i}`,
      topic: `Thema ${i % TOPICS}`,
      tags: ['a', 'b'],
      metadata: { day: '2025-02-01', speakers: ['Ada', 'Alan'] },
      source: { url: `https://example.org/s/${i}` },
      job_id: `job-${i}`,
      processed_at: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString(),
    };
    out.push({ ...base, language: 'de', markdown_key: sessionPath(event, 'de', track, base.filename) });
    if (i % 10 === 0 && out.length < N)
      out.push({ ...base, language: 'en', markdown_key: sessionPath(event, 'en', track, base.filename) });
  }
  return out;
}

async function median(fn: () => Promise<unknown>, repeat = REPEAT): Promise<{ ms: number; result: unknown }> {
  let result: unknown = await fn(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const t0 = performance.now();
    result = await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)]!, result };
}

async function bench(name: string, store: BlobStore): Promise<void> {
  out(`\n== ${name}: ${N} session records`);
  const recs = records();
  const t0 = performance.now();
  await mapPool(recs, 32, (r) => putSessionRecord(store, r));
  const writeMs = performance.now() - t0;
  out(
    `${'write'.padEnd(24)} ${ms(writeMs).padStart(12)}  ${(recs.length / (writeMs / 1000)).toFixed(0)} records/s (32 writers)`,
  );

  const raw = await median(() => store.listKeys('session-index/'));
  out(
    `${'raw listKeys'.padEnd(24)} ${ms(raw.ms).padStart(12)}  ${(raw.result as string[]).length} keys (the backend's floor)`,
  );
  const count = (r: unknown) => (r as unknown[]).length;
  const figures: [string, () => Promise<unknown>][] = [
    ['all (tracks/available)', async () => countSessions(await listSessionEntries(store), 'track')],
    ['topics', async () => countSessions(await listSessionEntries(store), 'topic')],
    ['by event', () => listSessionEntries(store, { event: 'Konferenz 2019' })],
    ['by track', () => listSessionEntries(store, { track: 'Track 7 – Öffentlichkeit' })],
    ['by topic', () => listSessionEntries(store, { topic: 'Thema 11' })],
    [
      'by event+track+lang',
      () => listSessionEntries(store, { event: 'Konferenz 2019', track: 'Track 7 – Öffentlichkeit', language: 'de' }),
    ],
    ['records of a track', () => listSessionRecords(store, { track: 'Track 7 – Öffentlichkeit' })],
  ];
  for (const [label, fn] of figures) {
    const m = await median(fn);
    out(
      `${label.padEnd(24)} ${ms(m.ms).padStart(12)}  ${String(count(m.result)).padStart(5)} rows   ${ratio(m.ms, raw.ms)} raw listKeys`,
    );
  }
  const meta = await median(() => store.list('session-index/'), 1);
  out(
    `${'list() with metadata'.padEnd(24)} ${ms(meta.ms).padStart(12)}  ${String(count(meta.result)).padStart(5)} rows   ${ratio(meta.ms, raw.ms)} raw listKeys (what listing by reading each record would cost at least)`,
  );
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-bench-sessions-'));
  const cleanups: (() => Promise<unknown>)[] = [() => fs.promises.rm(dir, { recursive: true, force: true })];
  try {
    out(`session store listing, ${N} sessions, median of ${REPEAT} runs after a warm-up; ${os.cpus().length} cores`);
    await bench('local', await new LocalBlobStore(path.join(dir, 'blobs')).init());
    const [port, consolePort] = [await freePort(), await freePort()];
    const minio = await startMinio({ bin: enginePaths().minio, dir: path.join(dir, 'minio'), port, consolePort });
    cleanups.unshift(() => minio.stop());
    await bench(
      's3 (MinIO)',
      await new S3BlobStore({
        endpoint: minio.endpoint,
        accessKey: minio.accessKey,
        secretKey: minio.secretKey,
        bucket: 'bench-sessions',
      }).init(),
    );
  } finally {
    for (const c of cleanups) await c().catch(() => undefined);
  }
}

await main();
