import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { bundleWorkflowCode, DefaultLogger, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import type { HistoryEntry } from '../fixtures/record-histories';
import { historyFromJson } from '../support/history-json';
import { quietRuntime, sharedBundle } from '../support/worker';

// Histories recorded from real runs (test/fixtures/record-histories.ts). Replaying them with today's workflow
// code proves that jobs and batches running now would survive a deploy of this code: a reordered, added or
// removed command makes the replay fail with a DeterminismViolationError (the last test shows it does).

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DIR = path.join(HERE, '../fixtures/histories');
const index = JSON.parse(fs.readFileSync(path.join(DIR, 'index.json'), 'utf8')) as HistoryEntry[];
const historyOf = (entry: HistoryEntry) => historyFromJson(JSON.parse(fs.readFileSync(path.join(DIR, entry.file), 'utf8')));
/** The recorded history of a scenario of one run. */
function entryOf(scenario: string): HistoryEntry {
  const entry = index.find((e) => e.scenario === scenario);
  if (!entry) throw new Error(`no recorded history of ${scenario} (npx tsx test/fixtures/record-histories.ts ${scenario})`);
  return entry;
}

/** Scenarios the index must hold: one of each kind of run a deploy must not break. */
const REQUIRED_SCENARIOS = [
  'job-transformer-webhook',
  'job-pdf-failed',
  'job-restarted',
  'job-cancelled',
  'job-pdf-native',
  'job-pdf-ocr-groups',
  'job-imageocr',
  'job-external-ocr',
  'job-cancel-request',
  'job-audio-chunks',
  'job-video-upload',
  'job-video-frames',
  'batch-toggle-failall',
  'batch-continued',
];

describe('recorded workflow histories replay on the current workflow code', function () {
  this.timeout(60_000);

  before(async function () {
    this.timeout(120_000);
    quietRuntime();
    await sharedBundle();
  });

  it('lists every recorded history in the index, covering both workflows, every scenario and continue-as-new', () => {
    const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.json') && f !== 'index.json');
    expect(index.map((e) => e.file).sort()).to.deep.equal(files.sort());
    expect(new Set(index.map((e) => e.workflowType))).to.deep.equal(new Set(['jobWorkflow', 'batchWorkflow']));
    expect(index.map((e) => e.scenario)).to.include.members(REQUIRED_SCENARIOS);
    expect(index.filter((e) => e.scenario === 'batch-continued').length).to.be.at.least(2);
  });

  it('holds the runs its scenarios name: three OCR page groups, an image OCR, the external OCR call, audio in chunks, a video, its frames, a cancel request', () => {
    const events = (scenario: string) => historyOf(entryOf(scenario)).events!;
    const activities = (scenario: string, type: string) =>
      events(scenario).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type).length;
    expect(activities('job-pdf-ocr-groups', 'extractPdfPages')).to.equal(3);
    expect(activities('job-imageocr', 'ocrImageBlob')).to.equal(1);
    expect(activities('job-external-ocr', 'externalOcrPdf')).to.equal(1);
    // Audio cut into chunks (10 s each, about 20 s of speech): one transcription per chunk between prepare and finish.
    expect(activities('job-audio-chunks', 'prepareAudio')).to.equal(1);
    expect(activities('job-audio-chunks', 'transcribeChunk')).to.be.at.least(2);
    expect(activities('job-audio-chunks', 'finishAudio')).to.equal(1);
    // A video: its input read, then the audio steps, then finishVideo.
    expect(activities('job-video-upload', 'fetchVideoInput')).to.equal(1);
    expect(activities('job-video-upload', 'prepareAudio')).to.equal(1);
    expect(activities('job-video-upload', 'transcribeChunk')).to.be.at.least(1);
    expect(activities('job-video-upload', 'finishVideo')).to.equal(1);
    expect(activities('job-video-frames', 'extractVideoFrames')).to.equal(1);
    for (const scenario of ['job-audio-chunks', 'job-video-upload', 'job-video-frames']) {
      expect(events(scenario).at(-1)!.workflowExecutionCompletedEventAttributes, scenario).to.not.equal(undefined);
    }
    // Cancelled from outside while converting: wrapped up all the same (the record written by a local activity,
    // the failed webhook delivered), then the run ends as cancelled.
    const cancel = events('job-cancel-request');
    const after = cancel.slice(cancel.findIndex((e) => e.workflowExecutionCancelRequestedEventAttributes));
    expect(after.length).to.be.greaterThan(1);
    expect(after.some((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')).to.equal(true);
    expect(after.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'deliverWebhook')).to.equal(true);
    expect(cancel.at(-1)!.workflowExecutionCanceledEventAttributes).to.not.equal(undefined);
  });

  for (const entry of index) {
    it(`replays ${entry.file} (${entry.workflowType}) without a determinism violation`, async () => {
      const history = historyOf(entry);
      expect(history.events!.length).to.be.greaterThan(3);
      await Worker.runReplayHistory({ workflowBundle: await sharedBundle() }, history, entry.workflowId);
    });
  }

  describe('a deliberately changed job workflow (test/fixtures/changed-workflow.ts)', () => {
    let changed: WorkflowBundleWithSourceMap;

    before(async function () {
      this.timeout(120_000);
      changed = await bundleWorkflowCode({ workflowsPath: path.join(HERE, '../fixtures/changed-workflow.ts'), logger: new DefaultLogger('WARN') });
    });

    it('fails the replay of every recorded job history with a DeterminismViolationError', async () => {
      const jobs = index.filter((e) => e.workflowType === 'jobWorkflow');
      expect(jobs.length).to.be.at.least(8);
      const histories = jobs.map((e) => ({ workflowId: e.workflowId, history: historyOf(e) }));
      const results: { workflowId: string; error?: unknown }[] = [];
      for await (const r of Worker.runReplayHistories({ workflowBundle: changed }, histories)) results.push(r);
      expect(results.map((r) => r.workflowId)).to.deep.equal(jobs.map((e) => e.workflowId));
      for (const [i, r] of results.entries()) expect(r.error, jobs[i].file).to.be.instanceOf(DeterminismViolationError);
    });

    it('throws the DeterminismViolationError from Worker.runReplayHistory, as the tests above would', async () => {
      const entry = entryOf('job-pdf-ocr-groups');
      const err = await Worker.runReplayHistory({ workflowBundle: changed }, historyOf(entry), entry.workflowId).then(() => null, (e: unknown) => e);
      expect(err).to.be.instanceOf(DeterminismViolationError);
    });
  });
});
