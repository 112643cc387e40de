import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../core/config/config';
import type { Logger } from '../core/runtime/logger';
import type { ApiEngines } from './engines';

/** A small page the warm-up converts: a heading, a paragraph with markup and a link, a list and a table. */
const PAGE =
  '<h2>Warm-up</h2><p>A <b>short</b> page with <i>markup</i> and a <a href="https://example.org/">link</a>.</p>' +
  '<ul><li>one</li><li>two</li></ul><table><tr><th>Name</th><th>Value</th></tr><tr><td>a</td><td>1</td></tr></table>';
const MARKDOWN = '# Warm-up\n\nA paragraph of a few words. Another sentence.\n\n- one\n- two\n';

/** Requests of the warm-up, in this order: each `[method, path, JSON body, how many, at once]`. */
const REQUESTS: [string, string, unknown, number, number][] = [
  // The first converts in a thread and writes its cache entry; the rest are hits (auth, validation, cache, envelope).
  ['POST', '/api/transformer/html-to-markdown', { html: PAGE }, 1, 1],
  ['POST', '/api/transformer/html-to-markdown', { html: PAGE }, 300, 8],
  // In the threads each time (use_cache=false skips the read).
  ['POST', '/api/transformer/html-to-markdown', { html: PAGE, use_cache: false }, 40, 4],
  ['POST', '/api/chunks', { text: MARKDOWN, chunk_max_tokens: 16 }, 40, 4],
  // Temporal, storage and the workers' pollers, as a caller with the key sees them.
  ['GET', '/api/health', undefined, 3, 1],
];

/** One request to `base`; its status (a failed request is a status of 0: the warm-up goes on). */
function send(base: string, method: string, path: string, body: unknown, key: string | undefined): Promise<number> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve) => {
    const req = http.request(
      `${base}${path}`,
      {
        method,
        headers: {
          ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
          ...(key ? { 'x-api-key': key } : {}),
          'x-request-id': 'warm-up',
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      },
    );
    req.on('error', () => resolve(0));
    req.end(payload);
  });
}

/**
 * Ready means warm (issue 38), the API's part, run before it listens on its port (so `npm start` and a health probe
 * see it only warm): the HTML and PDF Markdown threads started with their modules loaded, the tool launcher running
 * one tool, then the API's own stack run on a handful of real requests (auth, validation, the direct answers in the
 * threads and from the cache, chunks, the envelope, metrics, and the health checks, which reach Temporal, storage and
 * the workers) through its listener on a loopback port of its own, closed after. The requests are logged at `warn`
 * only (their lines would bury the start), carry `X-Request-Id: warm-up`, and count in the metrics like any others;
 * the one cache entry they write is that of their small page. A step that fails is logged; the API starts anyway.
 */
export async function warmApi(deps: {
  listener: http.RequestListener;
  engines: Pick<ApiEngines, 'transformHtml'>;
  warmMarkdownThread: () => Promise<void>;
  /** One tool run through the process's tool launcher (it starts the launcher). */
  warmLauncher: () => Promise<unknown>;
  config: Pick<Config, 'SERVICE_API_KEY' | 'INLINE_TRANSFORM_MAX_BYTES' | 'INLINE_PDF_MAX_PAGES' | 'PDF_TEXT_ENGINE'>;
  logger: Logger;
}): Promise<void> {
  const { config, logger } = deps;
  const t0 = performance.now();
  const step = async (name: string, run: () => Promise<unknown>) => {
    try {
      await run();
    } catch (err) {
      logger.warn({ err }, `${name}: warm-up failed (it starts on first use)`);
    }
  };
  await Promise.all([
    config.INLINE_TRANSFORM_MAX_BYTES > 0 &&
      step('html thread', () => deps.engines.transformHtml('html-to-markdown', '')),
    config.INLINE_PDF_MAX_PAGES > 0 &&
      config.PDF_TEXT_ENGINE === 'poppler' &&
      step('PDF Markdown thread', deps.warmMarkdownThread),
    step('tool launcher', deps.warmLauncher),
  ]);
  const server = http.createServer(deps.listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const level = logger.level;
  logger.level = 'warn';
  const statuses = new Map<number, number>();
  try {
    for (const [method, path, body, count, parallel] of REQUESTS) {
      let left = count;
      await Promise.all(
        Array.from({ length: parallel }, async () => {
          while (left-- > 0) {
            const status = await send(base, method, path, body, config.SERVICE_API_KEY || undefined);
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
          }
        }),
      );
    }
  } finally {
    logger.level = level;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  logger.info(
    { ms: Math.round(performance.now() - t0), statuses: Object.fromEntries(statuses) },
    'api warm: threads, launcher and its own stack',
  );
}
