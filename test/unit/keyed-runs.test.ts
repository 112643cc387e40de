import { expect } from 'chai';
import { KeyedRuns, KeyReuseError } from '../../providers/llm/local/idempotency';
import { holds } from '../support/wait';

// The local model server's requests by Idempotency-Key (providers/llm/local/idempotency.ts), as pure logic: the
// computations are promises the test resolves, the clients' connections abort signals.

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('keyed model requests (Idempotency-Key)', () => {
  it('computes the first request of a key once: a repeat while it runs joins it, one after it answered is replayed', async () => {
    const runs = new KeyedRuns<string>({ orphanMs: 1000, keepMs: 60_000, maxKept: 10 });
    const work = deferred<string>();
    let computed = 0;
    const compute = () => {
      computed++;
      return work.promise;
    };
    const first = runs.run('k', 'body', new AbortController().signal, compute);
    const second = runs.run('k', 'body', new AbortController().signal, compute);
    work.resolve('answer');
    expect(await first).to.deep.equal({ value: 'answer', outcome: 'computed' });
    expect(await second).to.deep.equal({ value: 'answer', outcome: 'joined' });
    expect(await runs.run('k', 'body', new AbortController().signal, compute)).to.deep.equal({
      value: 'answer',
      outcome: 'replayed',
    });
    expect(computed).to.equal(1);
    expect(runs.counts).to.deep.equal({ computed: 1, joined: 1, replayed: 1 });
    await runs.run('k', 'another body', new AbortController().signal, compute).then(
      () => expect.fail('a key reused with another request'),
      (err: unknown) => expect(err).to.be.instanceOf(KeyReuseError),
    );
  });

  it('goes on after its client left, and a client that comes back within orphanMs gets the answer', async () => {
    const runs = new KeyedRuns<string>({ orphanMs: 2000, keepMs: 60_000, maxKept: 10 });
    const work = deferred<string>();
    let signal: AbortSignal | undefined;
    const gone = new AbortController();
    const first = runs.run('k', 'b', gone.signal, (s) => ((signal = s), work.promise));
    gone.abort(new Error('client went away'));
    await first.then(
      () => expect.fail('the client that left gets no answer'),
      (err: Error) => expect(err.message).to.equal('client went away'),
    );
    await wait(50);
    expect(signal!.aborted, 'the computation goes on').to.equal(false);
    const back = runs.run('k', 'b', new AbortController().signal, () => expect.fail('computed again'));
    work.resolve('late answer');
    expect(await back).to.deep.equal({ value: 'late answer', outcome: 'joined' });
  });

  it('stops a computation nobody came back for after orphanMs, and computes the key again afterwards', async () => {
    const runs = new KeyedRuns<string>({ orphanMs: 100, keepMs: 60_000, maxKept: 10 });
    const gone = new AbortController();
    let first: AbortSignal | undefined;
    const p = runs.run(
      'k',
      'b',
      gone.signal,
      (s) =>
        new Promise<string>((_, reject) => {
          first = s;
          s.addEventListener('abort', () => reject(s.reason));
        }),
    );
    gone.abort(new Error('gone'));
    await p.catch(() => undefined);
    await holds(() => first!.aborted, 10_000, 20);
    expect(first!.aborted, 'stopped once orphaned').to.equal(true);
    await wait(20);
    const again = await runs.run('k', 'b', new AbortController().signal, async () => 'fresh');
    expect(again).to.deep.equal({ value: 'fresh', outcome: 'computed' });
  });

  it('keeps no failure, and at most maxKept answers (the oldest go first)', async () => {
    const runs = new KeyedRuns<string>({ orphanMs: 1000, keepMs: 60_000, maxKept: 2 });
    const signal = new AbortController().signal;
    await runs.run('f', 'b', signal, async () => Promise.reject(new Error('queue full'))).catch(() => undefined);
    expect((await runs.run('f', 'b', signal, async () => 'ok')).outcome, 'a failure is computed again').to.equal(
      'computed',
    );
    for (const k of ['a', 'b', 'c']) await runs.run(k, 'b', signal, async () => k);
    await wait(0);
    expect(runs.size).to.equal(2);
    expect((await runs.run('c', 'b', signal, async () => 'again')).outcome).to.equal('replayed');
    expect((await runs.run('f', 'b', signal, async () => 'again')).outcome, 'the oldest went').to.equal('computed');
  });
});
