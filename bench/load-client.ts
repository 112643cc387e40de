/**
 * The HTTP load client of the benchmarks that drive the API (bench/fastpath.bench.ts, bench/cold-start.bench.ts):
 * keep-alive POSTs from this process (node:http, one socket per client), a load of many clients for some seconds,
 * percentiles, and 1 KB HTML inputs no request has sent before.
 */
import http from 'node:http';

export function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] : NaN;
}

let seq = 0;
/** About 1 KB of HTML no request has sent before: a heading, a paragraph with markup and links, a list, a table. */
export function htmlKb(): string {
  const n = `${process.pid}-${Date.now()}-${++seq}`;
  const head =
    `<h2>Abschnitt ${n}</h2><p>Absatz mit <b>Fettdruck</b>, <i>Kursivem</i>, <code>code()</code> und einem ` +
    `<a href="https://example.com/${n}">Verweis</a>.</p><ul><li>eins</li><li>zwei</li></ul>` +
    `<table><tr><th>Name</th><th>Wert</th></tr>`;
  let rows = '';
  for (let i = 0; head.length + rows.length < 980; i++) rows += `<tr><td>Zeile ${i}</td><td>${i * 7}</td></tr>`;
  return `${head}${rows}</table>`;
}

export const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** One POST over the keep-alive agent: its status, X-Cache, time and body. */
export function post(url: string, body: string): Promise<{ status: number; cache: string; ms: number; text: string }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            cache: String(res.headers['x-cache'] ?? ''),
            ms: performance.now() - t0,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** `clients` loops posting `body()` for `seconds`: requests per second, latencies, and answers that were not `want`. */
export async function load(
  url: string,
  clients: number,
  seconds: number,
  body: () => string,
  want: (r: { status: number; cache: string }) => boolean,
) {
  const deadline = performance.now() + seconds * 1000;
  const times: number[] = [];
  let bad = 0;
  let firstBad = '';
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) {
        const r = await post(url, body());
        times.push(r.ms);
        if (!want(r)) {
          bad++;
          firstBad ||= `${r.status} X-Cache ${r.cache} ${r.text.slice(0, 200)}`;
        }
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  return { rps: times.length / wall, times, bad, firstBad };
}
