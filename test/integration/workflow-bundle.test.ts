import { expect } from 'chai';
import { createRequire } from 'node:module';
import pino from 'pino';
import { bundleWorkflows, bundleWorkflowsApart } from '../../worker/workflow-bundle';

const require = createRequire(import.meta.url);

/**
 * worker/main.ts builds its workflow bundle in a child process (`bundleWorkflowsApart`), so webpack's memory never
 * stays with the worker (issue 33: an idle io worker 368 → 253 MB RSS): the code it gets is the in-process bundle.
 */
describe('workflow bundle built in a child process', function () {
  this.timeout(180_000);
  const logger = pino({ level: 'silent' });

  it('is the bundle webpack builds in process, and webpack runs in the child only', async () => {
    const compiler = () =>
      Object.keys(require.cache).filter((k) => /node_modules\/webpack\/lib\/Compiler\.js$/.test(k));
    const loadedBefore = compiler().length;
    const apart = await bundleWorkflowsApart(logger);
    // Building apart loads no webpack compiler here (when no test in this process bundled before, none is loaded).
    expect(compiler().length).to.equal(loadedBefore);
    const here = await bundleWorkflows(logger);
    expect(apart.code.length).to.be.greaterThan(100_000);
    expect(apart.code).to.equal(here.code);
    expect(compiler().length).to.equal(1);
  });
});
