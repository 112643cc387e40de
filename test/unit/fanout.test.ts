import { expect } from 'chai';
import { DEFAULT_MEDIA_FANOUT, mediaFanout, TEMPORAL_PENDING_LIMIT } from '../../core/jobs/fanout';
import { boundedMap, limiter } from '../../workflows/fanout';

/** A step the test finishes by hand, recording when it started. */
function manual() {
  const started: number[] = [];
  const finish = new Map<number, { resolve: (v: string) => void; reject: (e: Error) => void }>();
  const step = (i: number) =>
    new Promise<string>((resolve, reject) => {
      started.push(i);
      finish.set(i, { resolve, reject });
    });
  return { started, finish, step };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('bounded fan-out (workflows/fanout.ts)', () => {
  it('runs at most N steps at once, starts them in item order as slots free, and answers the results in item order', async () => {
    const m = manual();
    const all = boundedMap([0, 1, 2, 3, 4, 5], 2, (i) => m.step(i));
    await tick();
    expect(m.started).to.deep.equal([0, 1]);
    m.finish.get(1)!.resolve('r1');
    await tick();
    expect(m.started).to.deep.equal([0, 1, 2]);
    m.finish.get(0)!.resolve('r0');
    await tick();
    expect(m.started).to.deep.equal([0, 1, 2, 3]);
    for (const i of [3, 2]) m.finish.get(i)!.resolve(`r${i}`);
    await tick();
    expect(m.started).to.deep.equal([0, 1, 2, 3, 4, 5]);
    for (const i of [5, 4]) m.finish.get(i)!.resolve(`r${i}`);
    expect(await all).to.deep.equal(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
  });

  it('one limiter shared by nested maps bounds their leaf steps together, without a deadlock', async () => {
    const gate = limiter(3);
    let running = 0;
    let peak = 0;
    const leaf = async (v: number) => {
      const r = await gate.run(async () => {
        running += 1;
        peak = Math.max(peak, running);
        await tick();
        running -= 1;
        return v * 2;
      });
      return r;
    };
    // Outer items wait for their inner leaves; only the leaves take a slot.
    const out = await Promise.all([0, 1, 2, 3].map((o) => Promise.all([0, 1, 2, 3].map((i) => leaf(o * 10 + i)))));
    expect(out[3]).to.deep.equal([60, 62, 64, 66]);
    expect(peak).to.equal(3);
    expect(gate.active).to.equal(0);
  });

  it('rejects with the first failure and starts no item that was still waiting', async () => {
    const m = manual();
    const all = boundedMap([0, 1, 2, 3], 1, (i) => m.step(i));
    await tick();
    m.finish.get(0)!.reject(new Error('page 0 failed'));
    await all.then(
      () => expect.fail('should reject'),
      (e: Error) => expect(e.message).to.equal('page 0 failed'),
    );
    await tick();
    expect(m.started).to.deep.equal([0]);
  });

  it('bounds a job at twice the media slots of the worker that planned it, below the pending-activity limit', () => {
    expect(mediaFanout(2)).to.equal(4);
    expect(mediaFanout(undefined)).to.equal(DEFAULT_MEDIA_FANOUT);
    expect(mediaFanout(5000)).to.be.below(TEMPORAL_PENDING_LIMIT);
  });
});
