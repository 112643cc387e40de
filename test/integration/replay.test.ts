import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { Worker } from '@temporalio/worker';
import type { HistoryEntry } from '../fixtures/record-histories';
import { historyFromJson } from '../support/history-json';
import { quietRuntime, sharedBundle } from '../support/worker';

// Histories recorded from real runs (test/fixtures/record-histories.ts). Replaying them with today's workflow
// code proves that jobs and batches running now would survive a deploy of this code: a reordered, added or
// removed command makes the replay fail with a DeterminismViolationError.

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/histories');
const index = JSON.parse(fs.readFileSync(path.join(DIR, 'index.json'), 'utf8')) as HistoryEntry[];

describe('recorded workflow histories replay on the current workflow code', function () {
  this.timeout(60_000);

  before(async function () {
    this.timeout(120_000);
    quietRuntime();
    await sharedBundle();
  });

  it('lists every recorded history in the index, covering both workflows and continue-as-new', () => {
    const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.json') && f !== 'index.json');
    expect(index.map((e) => e.file).sort()).to.deep.equal(files.sort());
    expect(new Set(index.map((e) => e.workflowType))).to.deep.equal(new Set(['jobWorkflow', 'batchWorkflow']));
    expect(index.filter((e) => e.scenario === 'batch-continued').length).to.be.at.least(2);
  });

  for (const entry of index) {
    it(`replays ${entry.file} (${entry.workflowType}) without a determinism violation`, async () => {
      const history = historyFromJson(JSON.parse(fs.readFileSync(path.join(DIR, entry.file), 'utf8')));
      expect(history.events!.length).to.be.greaterThan(3);
      await Worker.runReplayHistory({ workflowBundle: await sharedBundle() }, history, entry.workflowId);
    });
  }
});
