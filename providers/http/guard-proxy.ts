/**
 * A forward proxy on loopback for a downloader that connects on its own (yt-dlp): every connection it asks for, the
 * first page, each redirect hop, each media or fragment URL named by a page, goes through here, is checked with the
 * SSRF classifier (`checkTarget`: every address the name resolves to) and is connected to the very address that was
 * checked (resolve and pin), so no DNS answer and no redirect reaches a private, loopback, link-local or metadata
 * address unless the policy allows it. https goes through `CONNECT host:port` (the tunnel carries TLS end to end:
 * certificates are checked by the downloader against the name), plain http as absolute-URI requests, forwarded
 * without following redirects (the downloader follows them, each hop through here again). Anything else is refused.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo, type LookupFunction, type Socket } from 'node:net';
import { checkTarget, ForbiddenTargetError, type CheckedTarget, type OutboundPolicy } from './ssrf';

export interface GuardProxy {
  /** `http://127.0.0.1:<port>`: what the downloader is given as its proxy. */
  url: string;
  /** The first target the policy refused, if any (the downloader sees a 403 and says so in its own words). */
  refused(): ForbiddenTargetError | undefined;
  /** Targets connected to, `host:port` as asked (for tests and logs). */
  connected: string[];
  /** Stops listening and cuts every connection. */
  close(): Promise<void>;
}

/** Connecting to an upstream address; the downloader's own socket timeout bounds the rest. */
const CONNECT_TIMEOUT_MS = 30_000;
/** Hop-by-hop and proxy headers, never forwarded. */
const HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
]);

/** Starts the proxy on 127.0.0.1 (a free port) for targets within `policy`. */
export async function startGuardProxy(policy: OutboundPolicy): Promise<GuardProxy> {
  let firstRefusal: ForbiddenTargetError | undefined;
  const connected: string[] = [];
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };

  /** The checked target, or null after answering the refusal (403 for the policy, 502 for a bad name or lookup). */
  const check = async (
    target: string,
    refuse: (status: number, why: string) => void,
  ): Promise<CheckedTarget | null> => {
    try {
      return await checkTarget(target, policy);
    } catch (err) {
      if (err instanceof ForbiddenTargetError) {
        firstRefusal ??= err;
        refuse(403, err.message);
      } else refuse(502, (err as Error).message);
      return null;
    }
  };

  const server = http.createServer((req, res) => void forward(req, res));
  server.on('connection', track);

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refuse = (status: number, why: string) => {
      res.writeHead(status, { 'content-type': 'text/plain', connection: 'close' });
      res.end(why);
    };
    if (!/^http:\/\//i.test(req.url ?? '')) return refuse(400, 'only absolute http URLs and CONNECT are proxied');
    const t = await check(req.url!, refuse);
    if (!t) return;
    connected.push(`${t.url.hostname}:${t.port}`);
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !HOP_HEADERS.has(k)));
    const upstream = http.request(
      {
        hostname: t.hostname,
        port: t.port,
        path: `${t.url.pathname}${t.url.search}`,
        method: req.method,
        headers: { ...headers, host: t.url.host },
        lookup: pinned(t),
        agent: false,
        timeout: CONNECT_TIMEOUT_MS,
      },
      (up) => {
        const back = Object.fromEntries(Object.entries(up.headers).filter(([k]) => !HOP_HEADERS.has(k)));
        res.writeHead(up.statusCode ?? 502, back);
        up.pipe(res);
        up.once('error', () => res.destroy());
      },
    );
    upstream.once('socket', track);
    // The downloader gave up (its own timeout, a size limit): the upstream request goes with it.
    res.once('close', () => upstream.destroy());
    upstream.once('timeout', () => upstream.destroy(new Error('upstream timeout')));
    upstream.once('error', (err) => (res.headersSent ? res.destroy() : refuse(502, err.message)));
    req.pipe(upstream);
  }

  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    track(client);
    client.once('error', () => client.destroy());
    const refuse = (status: number, why: string) =>
      client.end(
        `HTTP/1.1 ${status} ${status === 403 ? 'Forbidden' : 'Bad Gateway'}\r\nConnection: close\r\n\r\n${why}`,
      );
    if (!/^(\[[0-9a-f:.]+\]|[^\s/:@[\]]+):\d{1,5}$/i.test(req.url ?? '')) return refuse(502, 'bad CONNECT target');
    void check(`https://${req.url}/`, refuse).then((t) => {
      if (!t || client.destroyed) return;
      connected.push(`${t.url.hostname}:${t.port}`);
      const upstream = net.connect({ host: t.address, port: t.port, family: t.family });
      track(upstream);
      upstream.setTimeout(CONNECT_TIMEOUT_MS, () => upstream.destroy());
      upstream.once('connect', () => {
        upstream.setTimeout(0);
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.once('error', (err) =>
        upstream.readyState === 'opening' ? refuse(502, err.message) : client.destroy(),
      );
      upstream.once('close', () => client.destroy());
      client.once('close', () => upstream.destroy());
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refused: () => firstRefusal,
    connected,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

/** A `lookup` that answers the checked address whatever the name resolves to by now (no rebinding after the check). */
function pinned(t: CheckedTarget): LookupFunction {
  return ((_name: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address: t.address, family: t.family }]);
    else cb(null, t.address, t.family);
  }) as unknown as LookupFunction;
}
