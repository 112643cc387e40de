import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { bundleWorkflowCode, DefaultLogger, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import type { HistoryEntry } from '../fixtures/record-histories';
import {
  acceptedUpdates,
  childWorkflowIds,
  closeOf,
  failureType,
  patchMarkers,
  scheduledActivities,
  startInput,
} from '../support/workflows/history-facts';
import { historyFromJson } from '../support/workflows/history-json';
import { quietRuntime, sharedBundle } from '../support/workflows/worker';
import { exportedWorkflows, patchSites, pipelineJobTypes } from '../support/workflows/workflow-source';

// Histories recorded from real runs (test/fixtures/record-histories.ts). Replaying them with today's workflow
// code proves that jobs and batches running now would survive a deploy of this code: a reordered, added or
// removed command makes the replay fail with a DeterminismViolationError (the last test shows it does). What must
// have a history is read from the code (test/support/workflows/workflow-source.ts): every job type of the pipeline table, both
// branches of every patch, every workflow workflows/index.ts exports; a new one without a history fails here.

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DIR = path.join(HERE, '../fixtures/histories');
const WORKFLOWS = path.join(HERE, '../../workflows');
const index = JSON.parse(fs.readFileSync(path.join(DIR, 'index.json'), 'utf8')) as HistoryEntry[];
const historyOf = (entry: HistoryEntry) =>
  historyFromJson(JSON.parse(fs.readFileSync(path.join(DIR, entry.file), 'utf8')));
/** The recorded history of a scenario of one run. */
function entryOf(scenario: string): HistoryEntry {
  const entry = index.find((e) => e.scenario === scenario);
  if (!entry)
    throw new Error(`no recorded history of ${scenario} (npx tsx test/fixtures/record-histories.ts ${scenario})`);
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
  'job-transformer-template',
  'job-session',
  'job-track-summary',
  'job-event-summary',
  'job-story',
  'job-closeout',
  'batch-toggle-failall',
  'batch-continued',
  'batch-failall-outcomes',
  'ping-workflow',
  'job-pdf-native-before-one-step',
  'job-session-before-pipeline',
  'job-notified',
  'job-notified.notifier',
  'batch-failall-closes-gaps',
  'job-pdf-ocr-bounded',
  'job-template-llm-queue',
  'job-pdf-ocr-fine',
  'job-transformer-in-task',
  'batch-counts-completions',
  'batch-counts-completions.child',
  'batch-reset',
  'batch-failall-awaits-starts',
  'batch-closeout',
  'batch-closeout.batch-terminated',
  'job-event-summary-sliced',
  'job-event-summary-sliced.slice',
  'job-imageocr-download-queue',
];

type History = ReturnType<typeof historyOf>;
const hasMarker = (h: History, id: string) => patchMarkers(h).some((m) => m.id === id);

/**
 * The old side of each patch: a history recorded before the patch existed, which today's code must replay through
 * the old branch (no marker). `why`: a patch without one says why (after `deprecatePatch` the old side no longer
 * replays and is deleted). The lifecycle and the state of each patch: docs/operations.md, "Changing workflow code".
 */
const OLD_SIDES: Record<string, { scenario: string; file?: string; took: (h: History) => boolean } | { why: string }> =
  {
    // A pdf job failed NOT_IMPLEMENTED: recorded before the pdf pipeline existed.
    'pdf-pipeline': {
      scenario: 'job-pdf-failed',
      took: (h) =>
        startInput(h)?.jobType === 'pdf' && failureType(h) === 'NOT_IMPLEMENTED' && !hasMarker(h, 'pdf-pipeline'),
    },
    // fail-all answered at once with the number signalled: recorded before fail-all waited for the outcomes.
    'fail-all-counts-outcomes': {
      scenario: 'batch-toggle-failall',
      took: (h) => acceptedUpdates(h) === 1 && !hasMarker(h, 'fail-all-counts-outcomes'),
    },
    // Recorded at the commits before these patches (test/fixtures/record-old-side.ts).
    'pdf-native-one-step': {
      scenario: 'job-pdf-native-before-one-step',
      took: (h) =>
        hasMarker(h, 'pdf-pipeline') &&
        !hasMarker(h, 'pdf-native-one-step') &&
        scheduledActivities(h, 'extractPdfPages') === 1 &&
        closeOf(h) === 'completed',
    },
    'session-pipeline': {
      scenario: 'job-session-before-pipeline',
      took: (h) =>
        startInput(h)?.jobType === 'session' &&
        failureType(h) === 'NOT_IMPLEMENTED' &&
        !hasMarker(h, 'session-pipeline'),
    },
    // Recorded before webhook delivery moved to the notifier: the job run delivered its webhooks itself.
    'webhook-notifier': {
      scenario: 'job-transformer-webhook',
      took: (h) => scheduledActivities(h, 'deliverWebhook') >= 1 && !hasMarker(h, 'webhook-notifier'),
    },
    // Recorded before a restarted run owned its record: run 2 of a restarted job, which wrote none at its start.
    'run-owns-record': {
      scenario: 'job-restarted',
      file: 'job-restarted.run2.json',
      took: (h) => startInput(h)?.run === 2 && !hasMarker(h, 'run-owns-record'),
    },
    // Recorded before bounded fan-out: every page group scheduled at once, no fairness keys.
    'bounded-fanout': {
      scenario: 'job-pdf-ocr-groups',
      took: (h) => scheduledActivities(h, 'extractPdfPages') === 3 && !hasMarker(h, 'bounded-fanout'),
    },
    // Recorded before the llm queue: the template job's model step on the io queue.
    'llm-queue': {
      scenario: 'job-transformer-template',
      took: (h) => !hasMarker(h, 'llm-queue') && closeOf(h) === 'completed',
    },
    // Recorded under bounded fan-out before OCR read a page per step: five pages in three groups of two.
    'ocr-fine-groups': {
      scenario: 'job-pdf-ocr-bounded',
      took: (h) =>
        hasMarker(h, 'bounded-fanout') &&
        scheduledActivities(h, 'extractPdfPages') === 3 &&
        !hasMarker(h, 'ocr-fine-groups'),
    },
    // A small conversion as a regular activity (a page of about 4 KB, inline): recorded before it ran in the task.
    'small-transform-in-task': {
      scenario: 'job-transformer-webhook',
      took: (h) => {
        const html = (startInput(h)?.parameters as { html?: string } | undefined)?.html;
        return (
          typeof html === 'string' &&
          html.length < 16 * 1024 &&
          scheduledActivities(h, 'runTransformerStep') === 1 &&
          !hasMarker(h, 'small-transform-in-task')
        );
      },
    },
    // A batch whose children each signalled jobFinished: recorded before it counted them by their close.
    'batch-counts-completions': {
      scenario: 'batch-continued',
      file: 'batch-continued.run1.json',
      took: (h) =>
        !hasMarker(h, 'batch-counts-completions') &&
        (h.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'jobFinished')
          .length > 0,
    },
    // fail-all that closed the gaps, before it waited for in-flight starts before its failJob signals.
    'fail-all-awaits-starts': {
      scenario: 'batch-failall-closes-gaps',
      took: (h) => hasMarker(h, 'fail-all-closes-gaps') && !hasMarker(h, 'fail-all-awaits-starts'),
    },
    // The old branch ran only where a start found its job already started (a reset batch, a continue-as-new racing a
    // start): no such run was recorded before the patch; every recorded batch replays past it without the marker.
    'batch-adopts-started-jobs': {
      why: 'no recorded run found a job already started before the patch; the other batch histories replay without it',
    },
    // A summary that made every model call in its own history: recorded before the calls ran in slices.
    'summary-slices': {
      scenario: 'job-event-summary',
      took: (h) => scheduledActivities(h, 'summaryCall') >= 9 && !hasMarker(h, 'summary-slices'),
    },
    // A session whose page and attachments downloaded on the io queue: recorded before the download queue.
    'download-queue': {
      scenario: 'job-session',
      took: (h) =>
        scheduledActivities(h, 'fetchSessionPage') === 1 &&
        (h.events ?? []).some(
          (e) =>
            e.activityTaskScheduledEventAttributes?.activityType?.name === 'fetchSessionPage' &&
            !e.activityTaskScheduledEventAttributes.taskQueue?.name?.endsWith('-download'),
        ) &&
        !hasMarker(h, 'download-queue'),
    },
    // fail-all with the outcome wait but before it closed the gaps (a slice being loaded, records in the update).
    'fail-all-closes-gaps': {
      scenario: 'batch-failall-outcomes',
      took: (h) => hasMarker(h, 'fail-all-counts-outcomes') && !hasMarker(h, 'fail-all-closes-gaps'),
    },
  };

describe('recorded workflow histories replay on the current workflow code', function () {
  this.timeout(60_000);

  before(async function () {
    this.timeout(120_000);
    quietRuntime();
    await sharedBundle();
  });

  it('lists every recorded history in the index, covering every registered workflow, every scenario and continue-as-new', () => {
    const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.json') && f !== 'index.json');
    expect(index.map((e) => e.file).sort()).to.deep.equal(files.sort());
    // Every workflow workflows/index.ts exports (the worker registers them all), the closeout workflow among them.
    const registered = exportedWorkflows(path.join(WORKFLOWS, 'index.ts'));
    expect(registered).to.include.members(['jobWorkflow', 'batchWorkflow', 'jobCloseoutWorkflow']);
    expect([...new Set(index.map((e) => e.workflowType))].sort()).to.deep.equal([...registered].sort());
    expect(index.map((e) => e.scenario)).to.include.members(REQUIRED_SCENARIOS);
    expect(index.filter((e) => e.scenario === 'batch-continued').length).to.be.at.least(2);
  });

  it('holds a completed run of every job type the pipeline table (workflows/pipelines/index.ts) dispatches to', () => {
    const jobTypes = pipelineJobTypes(path.join(WORKFLOWS, 'pipelines/index.ts'));
    expect(jobTypes).to.include.members(['pdf', 'session', 'transformer', 'track_summary', 'event_summary', 'story']);
    const covered = new Set(
      index
        .filter((e) => e.workflowType === 'jobWorkflow')
        .flatMap((e) => {
          const h = historyOf(e);
          return closeOf(h) === 'completed' ? [String(startInput(h)?.jobType)] : [];
        }),
    );
    expect(
      jobTypes.filter((t) => !covered.has(t)),
      'job types without a completed recorded run',
    ).to.deep.equal([]);
  });

  it('holds the new side of every patch in workflows/, and the old side where one was recorded', () => {
    const sites = patchSites(WORKFLOWS);
    const ids = [...new Set(sites.map((s) => s.id))];
    expect(ids).to.include.members([
      'pdf-pipeline',
      'session-pipeline',
      'pdf-native-one-step',
      'fail-all-counts-outcomes',
    ]);
    const histories = index.map(historyOf);
    expect(
      ids.filter((id) => !histories.some((h) => hasMarker(h, id))),
      'patches without a history of their new branch',
    ).to.deep.equal([]);
    // A deprecated patch keeps a history recorded under deprecatePatch (its marker says so): the one that still
    // replays once the call is removed (docs/operations.md, "Changing workflow code").
    const deprecated = [...new Set(sites.filter((s) => s.call === 'deprecatePatch').map((s) => s.id))];
    expect(
      deprecated.filter((id) => !histories.some((h) => patchMarkers(h).some((m) => m.id === id && m.deprecated))),
      'deprecated patches without a deprecated marker',
    ).to.deep.equal([]);
    // Each patch says where its old side is, or why it has none; a new patch must be added to OLD_SIDES, a removed one
    // taken out.
    expect(
      ids.filter((id) => !OLD_SIDES[id]),
      'patches missing from OLD_SIDES',
    ).to.deep.equal([]);
    expect(
      Object.keys(OLD_SIDES).filter((id) => !ids.includes(id)),
      'OLD_SIDES entries of patches no longer in the code',
    ).to.deep.equal([]);
    for (const id of ids) {
      const old = OLD_SIDES[id]!;
      if (!('scenario' in old)) continue;
      const entry = old.file ? index.find((e) => e.file === old.file) : entryOf(old.scenario);
      expect(entry, `${old.file ?? old.scenario} recorded`).to.not.equal(undefined);
      expect(old.took(historyOf(entry!)), `${old.scenario} takes the old branch of ${id}`).to.equal(true);
    }
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
    expect(after.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'deliverWebhook')).to.equal(
      true,
    );
    expect(cancel.at(-1)!.workflowExecutionCanceledEventAttributes).to.not.equal(undefined);
  });

  it('holds the runs the later scenarios name: a session with its two child jobs, map-reduce summaries, a closeout, a counted fail-all, a ping', () => {
    const h = (scenario: string) => historyOf(entryOf(scenario));
    const activities = (scenario: string, type: string) => scheduledActivities(h(scenario), type);
    expect(activities('job-transformer-template', 'runTransformerStep')).to.equal(1);
    for (const type of [
      'planSession',
      'fetchSessionPage',
      'collectSessionTranscript',
      'fetchSessionAttachments',
      'renderSessionPages',
      'fillSessionTemplate',
      'writeSessionOutput',
      'recordSession',
    ]) {
      expect(activities('job-session', type), type).to.equal(1);
    }
    expect(childWorkflowIds(h('job-session'))).to.have.length(2);
    expect(startInput(h('job-session.child-video'))?.jobType).to.equal('video');
    expect(startInput(h('job-session.child-pdf'))?.jobType).to.equal('pdf');
    for (const [scenario, calls] of [
      ['job-track-summary', 6],
      ['job-event-summary', 9],
      ['job-story', 7],
    ] as const) {
      expect(activities(scenario, 'planSessionSummary'), scenario).to.equal(1);
      expect(activities(scenario, 'summaryCall'), scenario).to.be.at.least(calls);
      expect(activities(scenario, 'finishSessionSummary'), scenario).to.equal(1);
    }
    // The closeout of a terminated job: its last state read, the failed webhook sent; the job's own run terminated.
    expect(entryOf('job-closeout').workflowType).to.equal('jobCloseoutWorkflow');
    expect(activities('job-closeout', 'readJobRun')).to.equal(1);
    expect(activities('job-closeout', 'deliverWebhook')).to.be.at.least(1);
    expect(closeOf(h('job-closeout'))).to.equal('completed');
    expect(closeOf(h('job-closeout.job-terminated'))).to.equal('terminated');
    expect(hasMarker(h('batch-failall-outcomes'), 'fail-all-counts-outcomes')).to.equal(true);
    expect(activities('ping-workflow', 'pingActivity')).to.equal(2);
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
      changed = await bundleWorkflowCode({
        workflowsPath: path.join(HERE, '../fixtures/changed-workflow.ts'),
        logger: new DefaultLogger('WARN'),
      });
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
      const err = await Worker.runReplayHistory({ workflowBundle: changed }, historyOf(entry), entry.workflowId).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(DeterminismViolationError);
    });
  });
});
