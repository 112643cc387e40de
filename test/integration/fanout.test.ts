import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import proto from '@temporalio/proto';
import { readBlobJson } from '../../core/stores/blob-store';
import { withResults, type StoredRecord } from '../../core/results/job-results';
import { jobRecordKey } from '../../core/stores/records';
import type { JobState } from '../../workflows/definitions';
import { buildPdf } from '../support/documents/pdf-factory';
import { sharedDevServer } from '../support/servers/engines';
import { connectTracked, type TrackedConnection } from '../support/workflows/temporal-calls';
import { quietRuntime, sharedBundle } from '../support/workflows/worker';
import { startHarness, type Harness } from '../support/workflows/workflow-env';

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/**
 * The most activities of `type` in flight at once over a run's history: scheduled and not yet closed (completed,
 * failed, timed out or cancelled). Exact, unlike sampling `describe()` while the run goes on.
 */
function peakInFlight(events: HistoryEvent[], type: string): number {
  const open = new Set<string>();
  let peak = 0;
  for (const e of events) {
    const id = String(e.eventId);
    if (e.activityTaskScheduledEventAttributes?.activityType?.name === type) open.add(id);
    const closed =
      e.activityTaskCompletedEventAttributes ??
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes ??
      e.activityTaskCanceledEventAttributes;
    if (closed) open.delete(String(closed.scheduledEventId));
    peak = Math.max(peak, open.size);
  }
  return peak;
}

const WORDS = [
  'apple',
  'river',
  'candle',
  'garden',
  'window',
  'pencil',
  'market',
  'silver',
  'forest',
  'ladder',
  'orange',
  'bridge',
];

describe('bounded fan-out of a job (real dev server, real tesseract)', function () {
  this.timeout(180_000);
  let calls: TrackedConnection;
  let native: NativeConnection;
  let h: Harness;

  before(async function () {
    this.timeout(120_000);
    quietRuntime();
    const server = await sharedDevServer();
    calls = await connectTracked(server.address);
    native = await NativeConnection.connect({ address: server.address });
    await sharedBundle();
    // One media slot (the harness's MEDIA_CONCURRENCY=1): the job may keep two page groups in flight.
    h = await startHarness({
      address: server.address,
      client: new Client({ connection: calls.connection }),
      connection: calls.connection,
      nativeConnection: native,
    });
  });
  after(async () => {
    await h?.stop();
    await native?.close();
    await calls?.closeWhenIdle();
  });

  it('a 12-page local_ocr job keeps at most twice the media slots of page groups in flight, and its pages come back in page order', async () => {
    const file = path.join(h.config.dataDir, 'twelve.pdf');
    fs.mkdirSync(h.config.dataDir, { recursive: true });
    fs.writeFileSync(
      file,
      buildPdf({ pages: WORDS.map((w, i) => ({ kind: 'lines' as const, lines: [`Page ${i + 1}: ${w}`], size: 28 })) }),
    );
    const { state } = await h.jobs.create({
      jobType: 'pdf',
      parameters: { filename: file, extraction_method: 'local_ocr', use_cache: false },
    });
    const handle = h.client.workflow.getHandle(state.job_id);
    await handle.result();

    const { events } = await handle.fetchHistory();
    const scheduled = events!.filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'extractPdfPages',
    );
    // Twelve page steps (a page each: ocr-fine-groups), more than the bound, each on the media queue with the job id
    // as fairness key.
    expect(scheduled).to.have.length(12);
    for (const e of scheduled) {
      const a = e.activityTaskScheduledEventAttributes!;
      expect(a.taskQueue?.name).to.equal(`${h.prefix}-media`);
      expect(a.priority?.fairnessKey).to.equal(state.job_id);
    }
    expect(events!.some((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).to.equal(true);
    expect(peakInFlight(events!, 'extractPdfPages')).to.equal(2);

    const record = await withResults(
      h.store,
      await readBlobJson<JobState & StoredRecord>(h.store, jobRecordKey(state.job_id)),
    );
    expect(record.status).to.equal('completed');
    const contents = (
      record.results as { metadata: { text_contents: { page: number; text: string; method: string }[] } }
    ).metadata.text_contents;
    expect(contents.map((c) => c.page)).to.deep.equal(WORDS.map((_, i) => i + 1));
    for (const [i, c] of contents.entries()) {
      expect(c.method).to.equal('local_ocr');
      expect(c.text, `page ${i + 1}`).to.match(new RegExp(`Page ${i + 1}\\W+${WORDS[i]}`));
    }
  });
});
