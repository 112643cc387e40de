import http from 'node:http';
import { lookup } from 'node:dns/promises';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { progressBody, retryDelayMs } from '../../core/jobs/webhooks';
import { ForbiddenTargetError, guardedFetch, OutboundError, type OutboundPolicy } from '../../providers/http/ssrf';
import { deliverWebhook } from '../../providers/webhook/deliver';
import { verifyWebhookSignature } from '../../providers/webhook/signature';
import { startWebhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver';

// Loopback only: every server here listens on 127.0.0.1 and every URL points at one of them.

const TOKEN = 'tok-7f3a9c-never-leak';
const open: OutboundPolicy = { allowPrivate: true };
const strict: OutboundPolicy = { allowPrivate: false };

interface LocalServer {
  port: number;
  url: string;
  connections: number;
  requests: { method: string; path: string; headers: http.IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
}

/** A plain local HTTP server whose handler decides the answer; counts connections and requests. */
async function startServer(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<LocalServer> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      s.requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      handler(req, res);
    });
  });
  server.on('connection', () => s.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const s: LocalServer = {
    port,
    url: `http://127.0.0.1:${port}`,
    connections: 0,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return s;
}

async function closedPort(): Promise<number> {
  const s = await startServer((_q, r) => r.end());
  await s.close();
  return s.port;
}

const redirectTo =
  (location: string, status = 302) =>
  (_q: http.IncomingMessage, res: http.ServerResponse) =>
    res.writeHead(status, { Location: location }).end();

async function rejection(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'expected a rejection').to.be.instanceOf(Error);
  return err as Error;
}

describe('webhook delivery over loopback', () => {
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await startWebhookReceiver();
  });
  afterEach(() => receiver.close());

  const body = progressBody('job-1', 'client-42', 40, 'OCR page 4 of 10');

  it('delivers with every header, a signature the token verifies, and the exact body', async () => {
    const before = Math.floor(Date.now() / 1000);
    const r = await deliverWebhook({ url: receiver.url, body, id: 'evt_job-1_1', token: TOKEN, policy: open });
    const after = Math.floor(Date.now() / 1000);
    expect(r).to.include({ outcome: 'delivered', status: 200 });
    expect(r.error).to.equal(undefined);
    expect(r.durationMs).to.be.a('number').and.at.least(0);
    expect(receiver.requests).to.have.length(1);
    const req = receiver.requests[0];
    expect(req.method).to.equal('POST');
    expect(req.path).to.equal('/hook');
    expect(req.headers).to.include({
      'content-type': 'application/json',
      'user-agent': 'docproc-webhooks/1',
      'x-webhook-id': 'evt_job-1_1',
      authorization: `Bearer ${TOKEN}`,
      'x-callback-token': TOKEN,
      'content-length': String(Buffer.byteLength(req.body)),
    });
    const ts = Number(req.headers['x-webhook-timestamp']);
    expect(ts, 'timestamp taken at the attempt').to.be.within(before, after);
    expect(
      verifyWebhookSignature(TOKEN, 'evt_job-1_1', ts, req.body, req.headers['x-webhook-signature'] as string),
    ).to.equal(true);
    expect(req.body).to.equal(JSON.stringify(body));
    expect(req.json).to.deep.equal(body);
  });

  it('signs with the signing secret when there is no token, and sends no token headers', async () => {
    const r = await deliverWebhook({
      url: receiver.url,
      body,
      id: 'evt_2',
      signingSecret: 'whsec-local',
      policy: open,
    });
    expect(r.outcome).to.equal('delivered');
    const req = receiver.requests[0];
    expect(req.headers).to.not.have.any.keys('authorization', 'x-callback-token');
    const ts = Number(req.headers['x-webhook-timestamp']);
    expect(Math.abs(ts - Date.now() / 1000)).to.be.lessThan(60);
    expect(
      verifyWebhookSignature('whsec-local', 'evt_2', ts, req.body, req.headers['x-webhook-signature'] as string),
    ).to.equal(true);
  });

  it('asks for a retry on 500 and keeps the event id stable across attempts', async () => {
    receiver.setResponses([500]);
    const first = await deliverWebhook({ url: receiver.url, body, id: 'evt_3', token: TOKEN, policy: open });
    expect(first).to.include({ outcome: 'retry', status: 500, error: 'HTTP 500' });
    const second = await deliverWebhook({ url: receiver.url, body, id: 'evt_3', token: TOKEN, policy: open });
    expect(second.outcome).to.equal('delivered');
    expect(receiver.requests).to.have.length(2);
    expect(receiver.uniqueById().size).to.equal(1);
  });

  it('asks for a retry on 429 and exposes Retry-After', async () => {
    await receiver.close();
    receiver = await startWebhookReceiver({ responses: [429], retryAfter: '120' });
    const r = await deliverWebhook({ url: receiver.url, body, id: 'evt_4', policy: open });
    expect(r).to.include({ outcome: 'retry', status: 429, retryAfter: '120' });
    expect(retryDelayMs(1, r.retryAfter)).to.equal(120_000);
  });

  it('gives up on 400, 410 and a redirect', async () => {
    receiver.setResponses([400, 410, 302]);
    for (const status of [400, 410, 302]) {
      const r = await deliverWebhook({ url: receiver.url, body, id: `evt_${status}`, policy: open });
      expect(r, String(status)).to.include({ outcome: 'give-up', status, error: `HTTP ${status}` });
    }
  });

  it('classifies by status even when the answer is too long to read', async () => {
    const big = await startServer((_q, res) => res.writeHead(200).end(Buffer.alloc(200_000, 'x')));
    try {
      const r = await deliverWebhook({ url: `${big.url}/hook`, body, id: 'evt_big', policy: open });
      expect(r).to.include({ outcome: 'delivered', status: 200 });
    } finally {
      await big.close();
    }
  });

  it('asks for a retry when the connection is refused', async () => {
    const r = await deliverWebhook({
      url: `http://127.0.0.1:${await closedPort()}/hook`,
      body,
      id: 'evt_5',
      token: TOKEN,
      policy: open,
    });
    expect(r.outcome).to.equal('retry');
    expect(r.error).to.match(/ECONNREFUSED/);
    expect(r.error).to.not.include(TOKEN);
  });

  it('asks for a retry when the receiver answers after the timeout', async () => {
    await receiver.close();
    receiver = await startWebhookReceiver({ delayMs: 3000 });
    const r = await deliverWebhook({
      url: receiver.url,
      body,
      id: 'evt_6',
      token: TOKEN,
      timeoutMs: 300,
      policy: open,
    });
    expect(r.outcome).to.equal('retry');
    expect(r.error).to.match(/timeout/);
    expect(r.durationMs).to.be.within(250, 2500);
  });

  it('refuses loopback targets in every spelling when private targets are not allowed, sending nothing', async () => {
    const p = receiver.port;
    for (const url of [
      receiver.url,
      `http://[::1]:${p}/hook`,
      `http://localhost:${p}/hook`,
      `http://2130706433:${p}/hook`,
      `http://0x7f.1:${p}/hook`,
      `http://[::ffff:127.0.0.1]:${p}/hook`,
    ]) {
      const r = await deliverWebhook({ url, body, id: 'evt_7', token: TOKEN, policy: strict });
      expect(r.outcome, url).to.equal('give-up');
      expect(r.error, url).to.match(/^forbidden target: /);
      expect(r.error, url).to.not.include(TOKEN);
    }
    expect(receiver.requests).to.have.length(0);
  });
});

describe('guardedFetch over loopback', () => {
  const servers: LocalServer[] = [];
  const serve = async (h: Parameters<typeof startServer>[0]) => {
    const s = await startServer(h);
    servers.push(s);
    return s;
  };
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  const ok = (_q: http.IncomingMessage, res: http.ServerResponse) =>
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end('target');

  it('follows a redirect to another allowed server and reports the final URL', async () => {
    const b = await serve(ok);
    const a = await serve(redirectTo(`${b.url}/final?x=1`));
    const r = await guardedFetch(`${a.url}/start`, {}, open);
    expect(r.status).to.equal(200);
    expect(r.body.toString()).to.equal('target');
    expect(r.url).to.equal(`${b.url}/final?x=1`);
  });

  it('turns a POST into a GET without body on 303 and keeps it on 307', async () => {
    const b = await serve(ok);
    const a303 = await serve(redirectTo(`${b.url}/after-303`, 303));
    const a307 = await serve(redirectTo(`${b.url}/after-307`, 307));
    const init = { method: 'POST', body: '{"a":1}', headers: { 'Content-Type': 'application/json' } };
    await guardedFetch(a303.url, init, open);
    await guardedFetch(a307.url, init, open);
    expect(b.requests.map((r) => [r.method, r.path, r.body, r.headers['content-type']])).to.deep.equal([
      ['GET', '/after-303', '', undefined],
      ['POST', '/after-307', '{"a":1}', 'application/json'],
    ]);
  });

  it('drops credentials when a redirect leaves the origin', async () => {
    const b = await serve(ok);
    const a = await serve(redirectTo(`${b.url}/elsewhere`, 307));
    await guardedFetch(
      a.url,
      { headers: { Authorization: `Bearer ${TOKEN}`, 'X-Callback-Token': TOKEN, 'X-Other': 'kept' } },
      open,
    );
    expect(a.requests[0].headers.authorization).to.equal(`Bearer ${TOKEN}`);
    expect(b.requests[0].headers).to.not.have.any.keys('authorization', 'x-callback-token');
    expect(b.requests[0].headers['x-other']).to.equal('kept');
  });

  it('re-checks every hop: a redirect to a target outside the policy is refused before connecting', async () => {
    const b = await serve(ok);
    for (const location of [
      `${b.url}/internal`,
      `http://localhost:${b.port}/internal`,
      `http://[::ffff:127.0.0.1]:${b.port}/`,
      `http://2130706433:${b.port}/`,
    ]) {
      const a = await serve(redirectTo(location));
      const policy: OutboundPolicy = { allowPrivate: false, allowedHosts: [`127.0.0.1:${a.port}`] };
      const err = await rejection(
        guardedFetch(`${a.url}/start`, { headers: { Authorization: `Bearer ${TOKEN}` } }, policy),
      );
      expect(err, location).to.be.instanceOf(ForbiddenTargetError);
      expect(err.message).to.not.include(TOKEN);
      expect(a.requests, location).to.have.length(1);
    }
    expect(b.connections).to.equal(0);
    expect(b.requests).to.have.length(0);
  });

  it('refuses redirects to other schemes', async () => {
    const a = await serve(redirectTo('file:///etc/passwd'));
    expect(await rejection(guardedFetch(a.url, {}, open))).to.be.instanceOf(ForbiddenTargetError);
  });

  it('stops after maxRedirects', async () => {
    const a = await serve((req, res) => res.writeHead(302, { Location: `/loop${req.url}` }).end());
    const err = await rejection(guardedFetch(a.url, { maxRedirects: 3 }, open));
    expect(err).to.be.instanceOf(OutboundError).with.property('code', 'too_many_redirects');
    expect(a.requests).to.have.length(4);
    expect(await rejection(guardedFetch(a.url, { maxRedirects: 0 }, open))).to.have.property(
      'code',
      'too_many_redirects',
    );
  });

  it('returns a redirect as it is with redirect: manual', async () => {
    const a = await serve(redirectTo('http://127.0.0.1:9/never'));
    const r = await guardedFetch(a.url, { redirect: 'manual' }, open);
    expect(r.status).to.equal(302);
    expect(r.headers.location).to.equal('http://127.0.0.1:9/never');
  });

  it('refuses a response over maxBytes, declared or streamed', async () => {
    const declared = await serve((_q, res) => res.writeHead(200, { 'Content-Length': '5000' }).end(Buffer.alloc(5000)));
    const streamed = await serve((_q, res) => {
      res.writeHead(200);
      let n = 0;
      const tick = setInterval(() => {
        if (res.destroyed || n++ > 50) {
          clearInterval(tick);
          return void res.end();
        }
        res.write(Buffer.alloc(500));
      }, 5);
    });
    for (const s of [declared, streamed]) {
      const err = await rejection(guardedFetch(s.url, { maxBytes: 1000 }, open));
      expect(err).to.be.instanceOf(OutboundError).with.property('code', 'too_large');
      expect((err as OutboundError).status).to.equal(200);
    }
    expect((await guardedFetch(declared.url, { maxBytes: 5000 }, open)).body).to.have.length(5000);
  });

  it('times out as a whole', async () => {
    // The server answers far later than the bound below, so the bound tells a whole-request timeout from none.
    const slow = await serve((_q, res) => void setTimeout(() => res.destroyed || res.end('late'), 30_000).unref());
    const started = Date.now();
    const err = await rejection(
      guardedFetch(slow.url, { timeoutMs: 200, headers: { Authorization: `Bearer ${TOKEN}` } }, open),
    );
    expect(err).to.be.instanceOf(OutboundError).with.property('code', 'timeout');
    expect(err.message).to.match(/timeout/);
    expect(Date.now() - started).to.be.lessThan(10_000);
  });

  it('keeps the host name in the Host header when it connects to the resolved address', async function () {
    const first = await lookup('localhost');
    if (first.address !== '127.0.0.1') this.skip();
    const s = await serve(ok);
    const r = await guardedFetch(`http://localhost:${s.port}/named`, {}, open);
    expect(r.status).to.equal(200);
    expect(s.requests[0].headers.host).to.equal(`localhost:${s.port}`);
  });

  it('reaches a bracketed IPv6 literal with the bracketed Host header', async function () {
    const server = http.createServer((req, res) => res.end(String(req.headers.host)));
    const listening = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(0, '::1', () => resolve(true));
    });
    if (!listening) this.skip();
    try {
      const port = (server.address() as AddressInfo).port;
      const r = await guardedFetch(`http://[::1]:${port}/v6`, {}, open);
      expect(r.body.toString()).to.equal(`[::1]:${port}`);
      expect(r.url).to.equal(`http://[::1]:${port}/v6`);
    } finally {
      server.close();
    }
  });

  it('never puts the token in an error message', async () => {
    const slow = await serve((_q, res) => setTimeout(() => res.destroyed || res.end(), 3000));
    const big = await serve((_q, res) => res.end(Buffer.alloc(5000)));
    const loop = await serve((req, res) => res.writeHead(307, { Location: `/again${req.url}` }).end());
    const headers = { Authorization: `Bearer ${TOKEN}`, 'X-Callback-Token': TOKEN };
    const attempts: [string, OutboundPolicy, number?][] = [
      [`http://127.0.0.1:${await closedPort()}/hook?token=${TOKEN}`, open],
      [`http://127.0.0.1:${slow.port}/hook?token=${TOKEN}`, open, 150],
      [`${big.url}/?token=${TOKEN}`, open],
      [`${loop.url}/?token=${TOKEN}`, open],
      [`http://127.0.0.1:1/hook?token=${TOKEN}`, strict],
      [`http://user:${TOKEN}@127.0.0.1:1/hook`, open],
    ];
    for (const [url, policy, timeoutMs] of attempts) {
      const err = await rejection(
        guardedFetch(url, { method: 'POST', headers, body: TOKEN, timeoutMs, maxBytes: 100 }, policy),
      );
      expect(err.message, url).to.not.include(TOKEN);
      expect(String((err as ForbiddenTargetError).host ?? ''), url).to.not.include(TOKEN);
    }
  });
});
