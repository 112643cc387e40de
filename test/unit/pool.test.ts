import { expect } from 'chai';
import { mapPool } from '../../core/runtime/pool';

describe('mapPool (core/runtime/pool.ts)', () => {
  it('keeps the order of the items and never runs more than the concurrency at once', async () => {
    let running = 0;
    let peak = 0;
    const out = await mapPool([50, 10, 30, 5, 20, 1], 2, async (ms, i) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, ms));
      running--;
      return i * 10;
    });
    expect(out).to.deep.equal([0, 10, 20, 30, 40, 50]);
    expect(peak).to.equal(2);
  });

  it('starts no new item after a failure and rejects once the running ones are done', async () => {
    const started: number[] = [];
    let finished = 0;
    const work = mapPool([1, 2, 3, 4, 5], 2, async (n) => {
      started.push(n);
      await new Promise((r) => setTimeout(r, n === 1 ? 5 : 30));
      finished++;
      if (n === 1) throw new Error('page 1 failed');
      return n;
    });
    await work.then(
      () => expect.fail('should reject'),
      (err: Error) => expect(err.message).to.equal('page 1 failed'),
    );
    expect(started).to.deep.equal([1, 2]);
    expect(finished).to.equal(2);
  });

  it('returns an empty list for no items', async () => {
    expect(await mapPool([], 4, async () => 1)).to.deep.equal([]);
  });
});
