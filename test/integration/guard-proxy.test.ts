import net, { type AddressInfo } from 'node:net';
import { expect } from 'chai';
import { startGuardProxy, type GuardProxy } from '../../providers/http/guard-proxy';

// providers/http/guard-proxy.ts on loopback, spoken to as a downloader does (CONNECT for https, absolute URIs for
// http), against two loopback TCP services: one the policy allows, one that stands for the private network.

/** Sends `request` on a fresh connection to the proxy; answers what came back until `until` matched or it closed. */
function exchange(proxy: GuardProxy, request: string, until: RegExp, then?: string): Promise<string> {
  const { port } = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), '127.0.0.1');
    let got = '';
    let sent = false;
    s.setTimeout(20_000, () => s.destroy(new Error(`no answer; got ${JSON.stringify(got)}`)));
    s.on('data', (d) => {
      got += d.toString('latin1');
      if (then && !sent && /\r\n\r\n/.test(got)) {
        sent = true;
        s.write(then);
      }
      if (until.test(got)) {
        s.destroy();
        resolve(got);
      }
    });
    s.on('error', reject);
    s.on('close', () => resolve(got));
    s.write(request);
  });
}

describe('the guard proxy of downloaders', () => {
  let allowed: net.Server;
  let privateService: net.Server;
  let privateHits = 0;
  let proxy: GuardProxy;
  const port = (s: net.Server) => (s.address() as AddressInfo).port;

  before(async () => {
    // An echo service (allowed), and one whose every connection is counted (refused by the policy).
    allowed = net.createServer((c) => c.pipe(c));
    privateService = net.createServer((c) => {
      privateHits++;
      c.end('HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nsecret');
    });
    await Promise.all([allowed, privateService].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
    proxy = await startGuardProxy({ allowPrivate: false, allowedHosts: [`127.0.0.1:${port(allowed)}`] });
  });
  after(async () => {
    await proxy?.close();
    await Promise.all([allowed, privateService].map((s) => new Promise((r) => s?.close(r))));
  });

  it('tunnels CONNECT to an allowed address, bytes both ways', async () => {
    const got = await exchange(
      proxy,
      `CONNECT 127.0.0.1:${port(allowed)} HTTP/1.1\r\n\r\n`,
      /ping-through/,
      'ping-through',
    );
    expect(got).to.match(/^HTTP\/1\.1 200 /);
    expect(got).to.include('ping-through');
  });

  it('refuses CONNECT and absolute-URI requests to a refused address, however spelt, with 403 and never connects', async () => {
    const p = port(privateService);
    for (const target of [`127.0.0.1:${p}`, `localhost.:${p}`, `LOCALHOST:${p}`, `[::ffff:127.0.0.1]:${p}`]) {
      const got = await exchange(proxy, `CONNECT ${target} HTTP/1.1\r\n\r\n`, /\r\n\r\n/);
      expect(got, target).to.match(/^HTTP\/1\.1 403 /);
    }
    for (const url of [`http://127.0.0.1:${p}/x`, `http://2130706433:${p}/x`, `http://localhost.:${p}/x`]) {
      const got = await exchange(proxy, `GET ${url} HTTP/1.1\r\nHost: x\r\n\r\n`, /\r\n\r\n/);
      expect(got, url).to.match(/^HTTP\/1\.1 403 /);
    }
    expect(proxy.refused()?.code).to.equal('FORBIDDEN');
    expect(privateHits).to.equal(0);
  });

  it('proxies nothing but absolute http URLs and CONNECT', async () => {
    const got = await exchange(proxy, 'GET /local HTTP/1.1\r\nHost: x\r\n\r\n', /\r\n\r\n/);
    expect(got).to.match(/^HTTP\/1\.1 400 /);
    const ftp = await exchange(proxy, `GET ftp://127.0.0.1:${port(allowed)}/ HTTP/1.1\r\nHost: x\r\n\r\n`, /\r\n\r\n/);
    expect(ftp).to.match(/^HTTP\/1\.1 400 /);
  });
});
