import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { startStack, type Stack } from '../support/servers/stack';
import { startDevServer, tempDir, type DevServer } from '../support/servers/engines';
import { waitFor } from '../support/wait';

// Temporal stopped (SIGSTOP: its connections hang instead of being refused) or dead (SIGKILL): the API notices within
// a couple of its one-second probes and answers every request that needs Temporal with 503 UNAVAILABLE at once,
// after validation, writing nothing; a finished job is still read from its record. When Temporal is back, the API
// serves again within seconds. A dev server of this suite's own, on a file database so a restart keeps its state.

const UNKNOWN_JOB = 'job-00000000-0000-4000-8000-000000000000';
/** Sends a signal to the dev server's process (if it runs). */
function signal(d: DevServer | undefined, sig: NodeJS.Signals): void {
  const pid = (d?.child as unknown as ChildProcess | undefined)?.pid;
  if (pid) {
    try {
      process.kill(pid, sig);
    } catch {
      // gone
    }
  }
}

const until = <T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> =>
  waitFor(fn, what, { timeoutMs, everyMs: 100 });

describe('Temporal stopped or gone: 503 UNAVAILABLE at once, and service again when it is back', function () {
  this.timeout(180_000);
  const dbFile = path.join(tempDir('docproc-outage-'), 'temporal.db');
  let server: DevServer;
  let port: number;
  let s: Stack;
  let finished: string;

  before(async function () {
    this.timeout(120_000);
    server = await startDevServer({ dbFile });
    port = server.port;
    s = await startStack({}, { temporal: server });
    const r = await s.call('POST', '/api/jobs/', {
      job_type: 'transformer',
      parameters: { operation: 'html-to-markdown', html: '<h1>Kept</h1>' },
    });
    finished = r.body.data.job_id;
    expect((await s.waitJob(finished)).status).to.equal('completed');
  });
  after(async () => {
    signal(server, 'SIGCONT');
    await s?.stop();
    await server?.stop();
  });

  /**
   * Every request that needs Temporal answers 503 UNAVAILABLE within 2 s; a bad request is still a 400; a finished job
   * is read.
   */
  async function expectUnavailable(): Promise<void> {
    await until(
      'the API to see Temporal unreachable',
      async () =>
        (
          await s.call('POST', '/api/jobs/', {
            job_type: 'transformer',
            parameters: { operation: 'html-to-markdown', html: '<p>x</p>' },
          })
        ).status === 503,
    );
    const requests: [string, string, unknown?][] = [
      // A job asked for (wait_ms) needs Temporal; a same-language translation is a job too (only a hit is not).
      ['POST', '/api/transformer/html-to-markdown?wait_ms=60000', { html: '<h1>Now</h1>' }],
      ['POST', '/api/transformer/text', { text: `Jetzt ${Date.now()}`, source_language: 'de', target_language: 'de' }],
      [
        'POST',
        '/api/jobs/',
        { job_type: 'transformer', parameters: { operation: 'html-to-markdown', html: '<p>y</p>' } },
      ],
      ['GET', `/api/jobs/${UNKNOWN_JOB}`],
      [
        'POST',
        '/api/jobs/batch',
        {
          batch_name: 'b',
          jobs: [{ job_type: 'transformer', parameters: { operation: 'html-to-markdown', html: '<p>z</p>' } }],
        },
      ],
    ];
    for (const [method, p, body] of requests) {
      const t0 = Date.now();
      const r = await s.call(method, p, body);
      const ms = Date.now() - t0;
      expect(r.status, `${method} ${p}: ${JSON.stringify(r.body)}`).to.equal(503);
      expect(r.body.error).to.deep.include({ code: 'UNAVAILABLE' });
      expect(r.headers.get('retry-after'), `${method} ${p}: Retry-After`).to.equal('1');
      expect(ms, `${method} ${p} answered in ${ms} ms`).to.be.below(2000);
    }
    expect(
      (await s.call('POST', '/api/jobs/', { job_type: 'transformer', parameters: {} })).status,
      'validation first',
    ).to.equal(400);
    // A small page is converted by the API itself: no Temporal needed.
    const inline = await s.call('POST', '/api/transformer/html-to-markdown', { html: '<h1>Inline</h1>' });
    expect(inline.status, JSON.stringify(inline.body)).to.equal(200);
    expect(inline.body.data.markdown).to.equal('# Inline');
    const kept = await s.call('GET', `/api/jobs/${finished}`);
    expect(kept.status).to.equal(200);
    expect(kept.body.data.status).to.equal('completed');
  }

  async function expectServing(): Promise<number> {
    const t0 = Date.now();
    await until(
      'the API to serve again',
      async () =>
        (await s.call('POST', '/api/transformer/html-to-markdown?wait_ms=60000', { html: '<h1>Back</h1>' })).status ===
        200,
      120_000,
    );
    return Date.now() - t0;
  }

  it('answers a job request sent the moment Temporal stops 503 within 2 s, from the probe, not a start deadline', async () => {
    // Served first: the API's reachability probe runs, and has just seen Temporal answer.
    await expectServing();
    const answers: number[] = [];
    const replies: Awaited<ReturnType<Stack['call']>>[] = [];
    signal(server, 'SIGSTOP');
    try {
      for (const body of [
        { job_type: 'transformer', parameters: { operation: 'html-to-markdown', html: '<p>first</p>' } },
        { job_type: 'transformer', parameters: { operation: 'html-to-markdown', html: '<p>second</p>' } },
      ]) {
        const t0 = Date.now();
        replies.push(await s.call('POST', '/api/jobs/', body));
        answers.push(Date.now() - t0);
      }
    } finally {
      signal(server, 'SIGCONT');
    }
    process.stdout.write(`      outage figures: job requests after SIGSTOP answered 503 in ${answers.join(', ')} ms\n`);
    expect(answers[0], 'the request in flight when Temporal stopped').to.be.below(2000);
    expect(answers[1], 'the next one, from the probe at once').to.be.below(500);
    for (const r of replies) {
      expect(r.status, JSON.stringify(r.body)).to.equal(503);
      expect(r.body.error).to.deep.include({ code: 'UNAVAILABLE' });
      expect(r.body.error.details).to.deep.include({ reason: 'temporal_unreachable' });
    }
    await expectServing();
  });

  it('answers 503 at once while Temporal is stopped (connections hang), and serves again after it continues', async () => {
    signal(server, 'SIGSTOP');
    try {
      await expectUnavailable();
    } finally {
      signal(server, 'SIGCONT');
    }
    const ms = await expectServing();
    process.stdout.write(
      `      outage figures: stopped Temporal continued, served again after ${(ms / 1000).toFixed(1)} s\n`,
    );
  });

  it('answers 503 at once while Temporal is dead, and serves again once it is started again', async () => {
    await server.stop(0);
    await expectUnavailable();
    server = await startDevServer({ dbFile, port });
    const ms = await expectServing();
    process.stdout.write(
      `      outage figures: dead Temporal restarted, served again after ${(ms / 1000).toFixed(1)} s\n`,
    );
  });
});
