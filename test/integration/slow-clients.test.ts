import net from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { startTestApi, type TestApi } from '../support/servers/api';
import { filesUnder, multipartBody, partialUpload } from '../support/clients/partial-upload';
import { holds } from '../support/wait';

// Slow clients at the edge of the real API app (issue 33 item 6): a connection that sends nothing, a head that never
// ends, an upload that stalls half way and one that trickles below the rate floor are closed within their configured
// deadlines, and what the upload wrote is removed, while other clients are served; a slow but steady body is not cut.
// Deadlines are small here; the defaults scale them up.

const HEADERS_MS = 2000;
const BODY_IDLE_MS = 3000;
const MIN_RATE = 2000;
/** Slack above a deadline for the server's check (at most a second) and a busy 2-core machine. */
const SLACK_MS = 4000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A raw connection to the API: when it closed (ms after `t0`) and what the server sent on it. */
interface RawConn {
  socket: net.Socket;
  t0: number;
  received: () => string;
  closed: Promise<number>;
}

function connect(url: string): Promise<RawConn> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: u.hostname, port: Number(u.port) });
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      const t0 = Date.now();
      const closed = new Promise<number>((done) => socket.once('close', () => done(Date.now() - t0)));
      resolve({ socket, t0, received: () => Buffer.concat(chunks).toString('latin1'), closed });
    });
    socket.once('error', reject);
  });
}

/** Resolves with the close time, or fails the test when the connection is still open `withinMs` after it opened. */
async function closedWithin(c: RawConn, withinMs: number, what: string): Promise<number> {
  const late = sleep(Math.max(0, c.t0 + withinMs - Date.now())).then(() => -1);
  const ms = await Promise.race([c.closed, late]);
  if (ms < 0) {
    c.socket.destroy();
    throw new Error(`${what}: still open after ${withinMs} ms`);
  }
  return ms;
}

/** GET /api/health/live `n` times in a row while hostile connections are held: each must answer at once. */
async function servedMeanwhile(api: TestApi, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = Date.now();
    const res = await fetch(`${api.url}/api/health/live`);
    expect(res.status).to.equal(200);
    await res.arrayBuffer();
    times.push(Date.now() - t0);
  }
  return times;
}

describe('slow clients: idle, unfinished, stalled and trickling requests are closed within their deadlines', function () {
  this.timeout(120_000);
  let api: TestApi;
  let uploads: string;

  before(async () => {
    api = await startTestApi({
      API_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
      API_BODY_IDLE_TIMEOUT_MS: String(BODY_IDLE_MS),
      API_BODY_MIN_BYTES_PER_SEC: String(MIN_RATE),
    });
    uploads = path.join(api.config.dataDir, 'tmp', 'uploads');
  });
  after(async () => api?.close());

  it('closes a connection that sends nothing, and one whose head never ends, while others are served', async () => {
    const idle = await connect(api.url);
    const head = await connect(api.url);
    head.socket.write('GET /api/health/live HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    // One more byte of the head every 300 ms: a trickle keeps no head alive past its deadline.
    const trickle = setInterval(() => head.socket.write('a'), 300);
    try {
      const served = await servedMeanwhile(api, 10);
      expect(Math.max(...served), `answers meanwhile: ${served.join(', ')} ms`).to.be.below(2000);
      const idleMs = await closedWithin(idle, HEADERS_MS + SLACK_MS, 'an idle connection');
      const headMs = await closedWithin(head, HEADERS_MS + SLACK_MS, 'an unfinished head');
      expect(idleMs, 'not before its deadline').to.be.at.least(HEADERS_MS - 100);
      expect(headMs, 'not before its deadline').to.be.at.least(HEADERS_MS - 100);
      expect(head.received()).to.match(/^HTTP\/1\.1 408 /);
      // Ended by the socket's own timer (silently) or by Node's head check, which counts from the connection too and
      // answers 408: whichever fires first at the same deadline, as the machine's load has it. Either ends it.
      expect(idle.received()).to.match(/^(|HTTP\/1\.1 408 [^]*)$/);
    } finally {
      clearInterval(trickle);
      idle.socket.destroy();
      head.socket.destroy();
    }
  });

  it('closes an upload that stalls half way and removes what it wrote', async () => {
    const form = multipartBody(
      {},
      { name: 'big.pdf', type: 'application/pdf', bytes: Buffer.alloc(2 * 1024 * 1024, 7) },
    );
    const upload = await partialUpload(api.url, '/api/pdf/process', form, { fraction: 0.5 });
    const t0 = Date.now();
    try {
      // The half sent is on disk while the client stalls (what the cut must remove).
      await holds(() => filesUnder(uploads).some((f) => f.size > 0), 10_000, 50);
      expect(
        filesUnder(uploads).some((f) => f.size > 0),
        'the partial upload on disk',
      ).to.equal(true);
      const served = await servedMeanwhile(api, 5);
      expect(Math.max(...served), `answers meanwhile: ${served.join(', ')} ms`).to.be.below(2000);
      const outcome = await Promise.race([upload.outcome, sleep(BODY_IDLE_MS + SLACK_MS).then(() => undefined)]);
      const ms = Date.now() - t0;
      expect(outcome, `still open after ${ms} ms`).to.not.equal(undefined);
      expect(outcome!.kind, JSON.stringify(outcome)).to.equal('connection-error');
      expect(ms, 'not before its deadline').to.be.at.least(BODY_IDLE_MS - 100);
      await holds(() => filesUnder(uploads).length === 0, 10_000, 50);
      expect(filesUnder(uploads), 'no partial upload left').to.deep.equal([]);
    } finally {
      upload.destroy();
    }
  });

  it('closes an upload that trickles below the rate floor, however often it sends', async () => {
    const form = multipartBody({}, { name: 'slow.pdf', type: 'application/pdf', bytes: Buffer.alloc(256 * 1024, 7) });
    const upload = await partialUpload(api.url, '/api/pdf/process', form, { fraction: 0.1 });
    const t0 = Date.now();
    // 20 bytes every 250 ms (80 B/s): never idle, far below the floor.
    const rest = form.body.subarray(upload.sent);
    let at = 0;
    const trickle = setInterval(() => {
      if (at >= rest.length) return;
      upload.write(rest.subarray(at, at + 20));
      at += 20;
    }, 250);
    try {
      const outcome = await Promise.race([upload.outcome, sleep(2 * BODY_IDLE_MS + SLACK_MS).then(() => undefined)]);
      const ms = Date.now() - t0;
      expect(outcome, `still open after ${ms} ms`).to.not.equal(undefined);
      expect(outcome!.kind).to.equal('connection-error');
      expect(ms, 'not before one window').to.be.at.least(BODY_IDLE_MS - 100);
      await holds(() => filesUnder(uploads).length === 0, 10_000, 50);
      expect(filesUnder(uploads), 'no partial upload left').to.deep.equal([]);
    } finally {
      clearInterval(trickle);
      upload.destroy();
    }
  });

  it('serves a slow but steady body above the floor to the end, however long it takes', async () => {
    const html = `<h1>Steady</h1>${'<p>slow and steady</p>'.repeat(3000)}`;
    const body = Buffer.from(JSON.stringify({ html }));
    const c = await connect(api.url);
    c.socket.write(
      `POST /api/transformer/html-to-markdown HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    );
    // 1 KB every 100 ms (10 KB/s, five times the floor): about 7 s, more than two body windows.
    for (let i = 0; i < body.length; i += 1024) {
      c.socket.write(body.subarray(i, i + 1024));
      await sleep(100);
    }
    const ms = await closedWithin(c, 60_000, 'the steady request');
    expect(ms, 'longer than a body window').to.be.above(2 * BODY_IDLE_MS);
    expect(c.received()).to.match(/^HTTP\/1\.1 200 /);
    expect(c.received()).to.include('# Steady');
  });
});
