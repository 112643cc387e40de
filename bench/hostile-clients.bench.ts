/**
 * Hostile clients (issue 33 item 6): 20 clients sending small requests to the real `api/main.ts`, alone and beside
 * 200 hostile connections held open the whole time (idle ones, heads trickled a byte at a time, bodies trickled far
 * below the rate floor; each one the server closes is opened again at once), printed as the clients' p50/p99 and the
 * ratio of the p99s (goal ≤ 1.5×). Rounds of alone, then hostile (the machine's drift shows between rounds); the
 * median of the rounds' ratios is the figure.
 * Asserts nothing about timing.
 *
 *   npx tsx bench/hostile-clients.bench.ts   (or `npm run bench -- hostile-clients`)
 *
 * On 127.0.0.1, the API with its default deadlines unless set (API_HEADERS_TIMEOUT_MS, API_BODY_IDLE_TIMEOUT_MS,
 * API_BODY_MIN_BYTES_PER_SEC pass through), no Temporal (the small requests need none: liveness, and small HTML
 * conversions the API answers in its worker threads). Knobs (env): BENCH_PHASE_S (30), BENCH_CLIENTS (20),
 * BENCH_HOSTILE (200), BENCH_ROUNDS (3).
 */
import http from 'node:http';
import net from 'node:net';
import { freePort } from '../scripts/services.mjs';
import { spawnService } from '../test/support/servers/processes';
import { waitFor } from '../test/support/wait';
import { tempDir } from '../test/support/servers/engines';
import { envInt, ms, out, ratio, sleep } from './support';

const PHASE_S = envInt('BENCH_PHASE_S', 30);
const CLIENTS = envInt('BENCH_CLIENTS', 20);
const HOSTILE = envInt('BENCH_HOSTILE', 200);
const ROUNDS = envInt('BENCH_ROUNDS', 3);

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
};

/** One small request on a keep-alive agent: liveness, or a small HTML conversion answered by the API itself. */
function small(agent: http.Agent, port: number, i: number): Promise<number> {
  const body = i % 2 ? JSON.stringify({ html: `<h1>T${i}</h1><p>small <b>page</b></p>` }) : undefined;
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        agent,
        method: body ? 'POST' : 'GET',
        path: body ? '/api/transformer/html-to-markdown' : '/api/health/live',
        headers: body ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } : {},
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** CLIENTS clients in a loop for `seconds`: every latency. */
async function load(port: number, seconds = PHASE_S): Promise<number[]> {
  const times: number[] = [];
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      for (let i = c; performance.now() < end; i++) times.push(await small(agent, port, i));
      agent.destroy();
    }),
  );
  return times;
}

type Kind = 'idle' | 'head' | 'body';

/** HOSTILE connections of the three kinds, each reopened when the server closes it; `stop()` ends them. */
function hostile(port: number): { stop: () => void; closed: Record<Kind, number> } {
  const closed: Record<Kind, number> = { idle: 0, head: 0, body: 0 };
  const sockets = new Set<net.Socket>();
  let stopping = false;
  const open = (kind: Kind) => {
    if (stopping) return;
    const s = net.connect({ host: '127.0.0.1', port });
    sockets.add(s);
    let timer: NodeJS.Timeout | undefined;
    s.on('error', () => undefined);
    s.on('data', () => undefined);
    s.once('connect', () => {
      if (kind === 'head') {
        s.write('GET /api/health/live HTTP/1.1\r\nHost: x\r\nX-Slow: ');
        timer = setInterval(() => s.write('a'), 1000);
      } else if (kind === 'body') {
        s.write('POST /api/transformer/html-to-markdown HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n');
        s.write('Content-Length: 10000000\r\n\r\n{"html":"');
        timer = setInterval(() => s.write('<p>'), 1000);
      }
    });
    s.once('close', () => {
      clearInterval(timer);
      sockets.delete(s);
      if (stopping) return;
      closed[kind] += 1;
      open(kind);
    });
  };
  for (let i = 0; i < HOSTILE; i++) open(i % 2 ? 'idle' : i % 4 ? 'head' : 'body');
  return {
    closed,
    stop: () => {
      stopping = true;
      for (const s of sockets) s.destroy();
    },
  };
}

async function main(): Promise<void> {
  const port = await freePort();
  const api = spawnService('api', {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: tempDir('docproc-bench-hostile-'),
    TEMPORAL_ADDRESS: '127.0.0.1:1',
    LOG_LEVEL: 'warn',
  });
  try {
    await waitFor(
      async () => ((await fetch(`http://127.0.0.1:${port}/api/health/live`)).ok ? true : undefined),
      'the API to listen',
      60_000,
    );
    await load(port, 5).catch(() => undefined); // warm-up of the HTML threads (first phase discarded)
    out(
      `hostile clients: ${CLIENTS} clients × ${PHASE_S} s per phase, ${HOSTILE} hostile connections, ${ROUNDS} rounds`,
    );
    const ratios: number[] = [];
    const closed: Record<Kind, number> = { idle: 0, head: 0, body: 0 };
    for (let r = 1; r <= ROUNDS; r++) {
      const alone = await load(port);
      const h = hostile(port);
      await sleep(1000);
      const beside = await load(port);
      h.stop();
      for (const k of Object.keys(closed) as Kind[]) closed[k] += h.closed[k];
      await sleep(1000);
      const row = (name: string, t: number[]) =>
        `${name} ${String(t.length).padStart(6)} requests, p50 ${ms(quantile(t, 0.5))}, p99 ${ms(quantile(t, 0.99))}`;
      ratios.push(quantile(beside, 0.99) / quantile(alone, 0.99));
      out(
        `  round ${r}: ${row('alone', alone)} | ${row('beside hostile', beside)} | p99 ${ratio(quantile(beside, 0.99), quantile(alone, 0.99))}`,
      );
    }
    out(`  p99 beside hostile / alone, median of the rounds: ${quantile(ratios, 0.5).toFixed(2)}× (goal ≤ 1.5×)`);
    out(`  hostile connections the server closed (each reopened at once): ${JSON.stringify(closed)}`);
  } finally {
    api.child.kill('SIGTERM');
    await sleep(500);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
