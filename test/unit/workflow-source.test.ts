import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { exportedWorkflows, patchSites, pipelineJobTypes } from '../support/workflows/workflow-source';

// What replay.test.ts asks histories of, read from workflow source: a patch or pipeline it cannot see would go
// without a recorded history, so these readers are checked on small sources of each shape.

describe('reading patches, pipelines and workflows from workflow source', () => {
  let dir: string;
  const write = (name: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  };

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'workflow-source-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('finds every patch id: a literal, a constant of the file, the `patch` properties a property read may take, and deprecatePatch', () => {
    write(
      'a.workflow.ts',
      "const ID = 'by-constant';\nexport async function a() { if (patched('literal')) return; deprecatePatch(ID); }\n",
    );
    write(
      'pipelines/index.ts',
      "const T = { pdf: { patch: 'p-one', pipeline: x }, session: { patch: 'p-two', pipeline: y } };\nexport function run(t: string) { const added = T[t]; return added && patched(added.patch); }\n",
    );
    const sites = patchSites(dir);
    expect(sites.map((s) => [s.id, s.call]).sort()).to.deep.equal([
      ['by-constant', 'deprecatePatch'],
      ['literal', 'patched'],
      ['p-one', 'patched'],
      ['p-two', 'patched'],
    ]);
    expect(sites.find((s) => s.id === 'literal')!.at).to.equal(`${path.join(dir, 'a.workflow.ts')}:2`);
  });

  it('refuses a patch id it cannot tell, naming the call', () => {
    write('b.workflow.ts', "export async function b() {\n  if (patched(idOf('x'))) return;\n}\n");
    expect(() => patchSites(dir)).to.throw(
      `cannot tell the patch id of patched(idOf('x')) at ${path.join(dir, 'b.workflow.ts')}:2`,
    );
  });

  it('lists the job types of every table typed with Pipeline, and refuses a file without one', () => {
    write(
      'index.ts',
      "const P: Partial<Record<JobType, Pipeline>> = { transformer: t, 'video_frames': v };\n" +
        "const Q: Partial<Record<JobType, { patch: string; pipeline: Pipeline }>> = { pdf: { patch: 'p', pipeline: p } };\nconst other = { audio: 1 };\n",
    );
    expect(pipelineJobTypes(path.join(dir, 'index.ts'))).to.deep.equal(['transformer', 'video_frames', 'pdf']);
    write('none.ts', 'const other = { audio: 1 };\n');
    expect(() => pipelineJobTypes(path.join(dir, 'none.ts'))).to.throw('no pipeline table');
  });

  it('lists the workflows an index exports', () => {
    write(
      'index.ts',
      "export { jobWorkflow } from './job.workflow';\nexport { a as batchWorkflow } from './b';\nexport async function pingWorkflow() {}\n",
    );
    expect(exportedWorkflows(path.join(dir, 'index.ts'))).to.deep.equal([
      'jobWorkflow',
      'batchWorkflow',
      'pingWorkflow',
    ]);
  });

  it('reads this project: the four patches, the eleven job types of the pipeline table, the four workflows', () => {
    const root = path.join(path.dirname(new URL(import.meta.url).pathname), '../../workflows');
    expect([...new Set(patchSites(root).map((s) => s.id))].sort()).to.include.members([
      'fail-all-counts-outcomes',
      'pdf-native-one-step',
      'pdf-pipeline',
      'session-pipeline',
    ]);
    expect(pipelineJobTypes(path.join(root, 'pipelines/index.ts'))).to.include.members([
      'pdf',
      'session',
      'transformer',
      'imageocr',
      'external_ocr',
      'video_frames',
      'audio',
      'video',
      'track_summary',
      'event_summary',
      'story',
    ]);
    expect(exportedWorkflows(path.join(root, 'index.ts'))).to.include.members([
      'jobWorkflow',
      'batchWorkflow',
      'jobCloseoutWorkflow',
      'pingWorkflow',
    ]);
  });
});
