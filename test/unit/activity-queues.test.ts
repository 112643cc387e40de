import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createActivities } from '../../activities';
import { loadConfig } from '../../core/config/config';
import { taskQueues } from '../../core/jobs/ids';
import * as presets from '../../workflows/activity-options';
import {
  ACTIVITY_TABLE,
  queuesOf,
  registeredOn,
  scheduledWith,
  type ActivityName,
  type QueueKind,
  type Route,
} from '../../workflows/activity-table';

// Workflows schedule each activity on the queue workflows/activity-table.ts gives it, and each worker registers the
// activities the same table puts on its queue: a step sent to a queue whose worker does not register it would wait
// for a worker that never comes. These tests prove the two sides agree for every activity and every route a
// workflow can pass, and pin the options of each variant to the presets the workflows scheduled before the table.

const queues = taskQueues('aq');
const kindOf = (taskQueue: string | undefined): QueueKind =>
  taskQueue === undefined || taskQueue === queues.io
    ? 'io'
    : taskQueue === queues.media
      ? 'media'
      : taskQueue === queues.download
        ? 'download'
        : 'llm';

// The real activities (built without engines: nothing starts until one is called).
const all = createActivities({
  config: loadConfig({
    DATA_DIR: path.join(os.tmpdir(), 'activity-queues'),
    LOG_LEVEL: 'silent',
    LLM_PROVIDER: 'none',
  }),
  logger: {} as never,
  store: {} as never,
  queues,
  pdf: {} as never,
  ocr: {} as never,
  media: {} as never,
});
const names = Object.keys(all) as ActivityName[];

/** Every route a workflow can pass, but a named task queue (only the probe's step takes one: last test). */
const routes: Route[] = [];
for (const fair of [undefined, false, true])
  for (const priority of [undefined, 2, 3])
    for (const remoteEngine of [undefined, true])
      for (const model of [undefined, 'llm', 'io'] as const)
        for (const local of [undefined, false, true])
          for (const download of [undefined, false, true])
            routes.push({ jobId: 'job-1', fair, priority, remoteEngine, model, local, download });

/** The queues `name` can be scheduled on, over every route. */
function reachable(name: ActivityName): Set<QueueKind> {
  const kinds = new Set<QueueKind>();
  for (const route of routes) {
    let options;
    try {
      ({ options } = scheduledWith(name, route, queues.io));
    } catch {
      continue; // a route the step refuses (a model step without a model queue)
    }
    kinds.add(kindOf(options.taskQueue));
  }
  return kinds;
}

describe('activities are registered on the queue their workflows send them to', () => {
  it('the table names every activity createActivities builds, and nothing else', () => {
    expect(names.length).to.be.greaterThan(30);
    expect(Object.keys(ACTIVITY_TABLE).sort()).to.deep.equal([...names].sort());
  });

  it('every activity is registered on exactly the workers of the queues workflows can schedule it on', () => {
    const registered = (q: QueueKind) => new Set(Object.keys(registeredOn(q, all)));
    const byQueue = {
      io: registered('io'),
      media: registered('media'),
      llm: registered('llm'),
      download: registered('download'),
    };
    for (const name of names) {
      if (name === 'pingActivity') continue;
      const kinds = reachable(name);
      expect(kinds.size, name).to.be.greaterThan(0);
      for (const q of ['io', 'media', 'llm', 'download'] as const)
        expect(byQueue[q].has(name), `${name} on ${q}`).to.equal(kinds.has(q));
      expect(new Set(queuesOf(name)), name).to.deep.equal(kinds);
    }
    // The CPU-bound engines never run on the io or llm workers, and only model steps on the llm worker.
    expect([...byQueue.media].sort()).to.deep.equal(
      [
        'pingActivity',
        'preparePdf',
        'readPdfText',
        'extractPdfPages',
        'renderPdfImages',
        'readDocumentFile',
        'ocrImageBlob',
        'prepareAudio',
        'transcribeChunk',
        'detectAudioLanguage',
        'extractVideoFrames',
        'renderSessionPages',
      ].sort(),
    );
    expect([...byQueue.media].filter((n) => byQueue.io.has(n) || byQueue.llm.has(n))).to.deep.equal(['pingActivity']);
    // The download worker runs the downloads into jobs and nothing else (no bookkeeping waits behind them).
    expect([...byQueue.download].sort()).to.deep.equal(
      ['fetchImage', 'fetchVideoInput', 'fetchSessionPage', 'fetchSessionAttachments'].sort(),
    );
    expect([...byQueue.llm].sort()).to.deep.equal(
      [
        'pingActivity',
        'finishPdf',
        'finishDocument',
        'finishAudio',
        'finishVideo',
        'finishImageOcr',
        'runTransformerStep',
        'fillSessionTemplate',
        'summaryCall',
      ].sort(),
    );
  });

  it('the probe step is registered on every worker and goes to the queue it names; no other step takes a name', () => {
    for (const q of ['io', 'media', 'llm'] as const) expect(registeredOn(q, all)).to.have.property('pingActivity');
    for (const q of [queues.io, queues.media, queues.llm])
      expect(scheduledWith('pingActivity', { taskQueue: q }, queues.io).options).to.deep.equal({
        ...presets.probe,
        taskQueue: q,
      });
    expect(() => scheduledWith('preparePdf', { taskQueue: queues.io }, queues.io)).to.throw(/task queue/);
  });

  it('workflow code builds activity proxies only from the table (workflows/routing.ts)', () => {
    const sources = (dir: string): string[] =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((e) =>
          e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
        );
    const proxying = sources(path.resolve('workflows')).filter((f) =>
      /\bproxy(Local)?Activities\b/.test(fs.readFileSync(f, 'utf8')),
    );
    expect(proxying.map((f) => path.relative(process.cwd(), f))).to.deep.equal([path.join('workflows', 'routing.ts')]);
  });
});

describe('the options each route schedules a step with', () => {
  const jobId = 'job-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
  const key = jobId.slice(0, 64);
  const on = (name: ActivityName, route: Route = {}) => scheduledWith(name, route, queues.io);

  it('media steps: cpuBound on the media queue, with the job fairness key and priority only when fair', () => {
    expect(on('preparePdf')).to.deep.equal({ local: false, options: { ...presets.cpuBound, taskQueue: queues.media } });
    expect(on('preparePdf', { jobId, fair: false, priority: 2 }).options).to.deep.equal({
      ...presets.cpuBound,
      taskQueue: queues.media,
    });
    expect(on('extractPdfPages', { jobId, fair: true, priority: 3 }).options).to.deep.equal({
      ...presets.cpuBound,
      taskQueue: queues.media,
      priority: { fairnessKey: key, priorityKey: 3 },
    });
    expect(on('transcribeChunk', { jobId, fair: true }).options.priority).to.deep.equal({ fairnessKey: key });
    // A remote engine (a vision model, a hosted speech endpoint) waits out an outage.
    expect(on('extractPdfPages', { jobId, fair: true, priority: 2, remoteEngine: true }).options).to.deep.equal({
      ...presets.remoteMediaCall,
      taskQueue: queues.media,
      priority: { fairnessKey: key, priorityKey: 2 },
    });
    expect(() => on('preparePdf', { fair: true })).to.throw(/job id/);
  });

  it('model steps: on the llm queue keyed by job, on io for runs before the llm queue, their own preset without a model', () => {
    for (const name of ['finishPdf', 'finishAudio', 'finishVideo', 'finishImageOcr', 'summaryCall'] as const) {
      expect(on(name, { jobId, model: 'llm' }).options, name).to.deep.equal({
        ...presets.modelCall,
        taskQueue: queues.llm,
        priority: { fairnessKey: key },
      });
      expect(on(name, { jobId, model: 'io' }).options, name).to.equal(presets.modelCall);
    }
    for (const name of ['finishPdf', 'finishAudio', 'finishVideo', 'finishImageOcr'] as const)
      expect(on(name, { jobId }).options, name).to.equal(presets.storeHeavy);
    expect(on('runTransformerStep', { jobId }).options).to.equal(presets.quickTransform);
    // A small conversion in the job's workflow task: a local activity of one attempt; a model step never runs so.
    expect(on('runTransformerStep', { jobId, local: true })).to.deep.equal({
      local: true,
      options: presets.quickTransformInTask,
    });
    expect(presets.quickTransformInTask.retry?.maximumAttempts).to.equal(1);
    expect(on('runTransformerStep', { jobId, model: 'llm', local: true }).local).to.equal(false);
    for (const name of ['summaryCall', 'fillSessionTemplate'] as const)
      expect(() => on(name, { jobId }), name).to.throw(/always asks the model/);
  });

  it('io steps keep their presets; the bookkeeping ones run in-process where the table or the route says', () => {
    expect(on('writeJobRecord')).to.deep.equal({ local: true, options: presets.bookkeeping });
    expect(on('loadManifestSlice').local).to.equal(true);
    expect(on('appendWebhookLog').local).to.equal(true);
    expect(on('failPendingJobs')).to.deep.equal({ local: false, options: presets.bookkeepingRemote });
    expect(on('failPendingJobs', { local: true })).to.deep.equal({ local: true, options: presets.bookkeeping });
    expect(on('deliverWebhook').options).to.equal(presets.webhookDelivery);
    expect(on('writeSessionOutput').options).to.equal(presets.storeHeavy);
    expect(on('planSession').options).to.equal(presets.bookkeepingRemote);
    // No io step carries a task queue: it runs on the workflow's own.
    for (const name of names)
      if (ACTIVITY_TABLE[name].queue === 'io') expect(on(name).options.taskQueue, name).to.equal(undefined);
  });

  it('downloads: longProviderCall on the download queue, on io for runs recorded before that queue', () => {
    for (const name of ['fetchImage', 'fetchVideoInput', 'fetchSessionPage', 'fetchSessionAttachments'] as const) {
      expect(on(name, { download: true }), name).to.deep.equal({
        local: false,
        options: { ...presets.longProviderCall, taskQueue: queues.download },
      });
      expect(on(name).options, name).to.equal(presets.longProviderCall);
      expect(on(name, { download: false }).options.taskQueue, name).to.equal(undefined);
    }
  });

  it('a workflow on a queue without the -io suffix (a test queue) schedules every kind on its own queue', () => {
    expect(scheduledWith('preparePdf', {}, 'solo').options.taskQueue).to.equal('solo');
    expect(scheduledWith('summaryCall', { jobId, model: 'llm' }, 'solo').options.taskQueue).to.equal('solo');
  });
});
