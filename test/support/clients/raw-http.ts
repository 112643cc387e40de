import http from 'node:http';

/** A raw HTTP answer. */
export interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: () => any;
}

export interface RawRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body in 64 KB writes without a Content-Length. */
  chunked?: boolean;
  /** Source address of the connection (loopback tests of the auth rules). */
  localAddress?: string;
}

/**
 * Raw HTTP against `baseUrl`: the path is sent as given (no normalisation), on a fresh connection. With a body, a
 * server that answers early (413) and closes is not an error: its answer is.
 */
export function rawRequest(baseUrl: string, path: string, opts: RawRequestOptions = {}): Promise<RawReply> {
  const u = new URL(baseUrl);
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.body !== undefined && !opts.chunked) headers['Content-Length'] = String(Buffer.byteLength(opts.body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname.replace(/^\[|\]$/g, ''),
        port: Number(u.port),
        path,
        method: opts.method ?? 'GET',
        headers,
        localAddress: opts.localAddress,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode!, headers: res.headers, text, json: () => JSON.parse(text) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      opts.body !== undefined && (err.code === 'EPIPE' || err.code === 'ECONNRESET') ? undefined : reject(err),
    );
    if (opts.body !== undefined) {
      if (opts.chunked) {
        const buf = Buffer.from(opts.body);
        for (let i = 0; i < buf.length; i += 64 * 1024) req.write(buf.subarray(i, i + 64 * 1024));
      } else req.write(opts.body);
    }
    req.end();
  });
}
