import { expect } from 'chai';
import { isThreadOutOfMemory, ThreadPool } from '../../providers/process/thread-pool';

// providers/process/thread-pool.ts with real worker threads running test/support/servers/pool-test.thread.mjs.

const ENTRY = new URL('../support/servers/pool-test.thread.mjs', import.meta.url);

describe('thread pool', function () {
  this.timeout(30_000);

  it('answers requests on long-lived threads, at most maxThreads at once, and passes thread errors on', async () => {
    const pool = new ThreadPool(ENTRY, { maxThreads: 2 });
    const running = [1, 2, 3, 4, 5].map((value) => pool.run<number>({ op: 'echo', value }));
    expect(pool.busy, 'threads started for five requests').to.equal(2);
    const answers = await Promise.all(running);
    expect(answers).to.deep.equal([1, 2, 3, 4, 5]);
    expect(pool.busy).to.equal(0);
    try {
      await pool.run({ op: 'fail', value: 'purpose' });
      expect.fail('should have been rejected');
    } catch (e) {
      expect((e as Error).message).to.equal('failed on purpose');
    }
    const coded = await pool.run({ op: 'coded', value: 7 }).then(
      () => expect.fail('should have been rejected'),
      (e: unknown) => e as Error & { code?: string; details?: unknown },
    );
    expect([coded.message, coded.code, coded.details]).to.deep.equal(['coded failure', 'SOME_CODE', { value: 7 }]);
    expect(pool.runs, 'requests answered, errors included').to.equal(7);
  });

  it('ends a thread that outgrows its heap limit, rejects with ERR_WORKER_OUT_OF_MEMORY and carries on with a fresh thread', async () => {
    const pool = new ThreadPool(ENTRY, {
      maxThreads: 1,
      resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8 },
    });
    const t0 = Date.now();
    const err = await pool.run({ op: 'hog' }).then(
      () => expect.fail('should have run out of memory'),
      (e: unknown) => e,
    );
    expect(isThreadOutOfMemory(err), String(err)).to.equal(true);
    expect(Date.now() - t0).to.be.lessThan(20_000);
    expect(pool.busy).to.equal(0);
    expect(await pool.run<string>({ op: 'echo', value: 'still here' })).to.equal('still here');
  });

  it('terminates a thread that never yields when the request is aborted', async () => {
    const pool = new ThreadPool(ENTRY, { maxThreads: 1 });
    const ac = new AbortController();
    const t0 = Date.now();
    setTimeout(() => ac.abort(new Error('enough')), 200);
    const err = await pool.run({ op: 'spin' }, ac.signal).then(
      () => expect.fail('should have been aborted'),
      (e: unknown) => e,
    );
    expect((err as Error).message).to.equal('enough');
    // The thread spins forever: any end well within the test's time is the abort.
    expect(Date.now() - t0).to.be.lessThan(10_000);
    expect(pool.busy).to.equal(0);
    expect(await pool.run<number>({ op: 'echo', value: 7 })).to.equal(7);
  });
});
