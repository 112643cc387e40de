/**
 * The bare server the cold-start bench sets beside the service (issue 38): node:http on one thread, the service's own
 * HTML-to-Markdown operation (`runHtmlOperation`, the converter and its depth check) on each JSON body `{html}`, the
 * answer as JSON. No auth, validation, envelope, logging or metrics: the limit the service's small answers are
 * compared with. Prints `listening <port>` when it listens.
 *
 *   node --import tsx bench/bare-html-server.ts <port>
 */
import http from 'node:http';
import { runHtmlOperation } from '../core/html/run';

const port = Number(process.argv[2] ?? 0);
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const { html } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { html: string };
    const body = JSON.stringify({ data: runHtmlOperation('html-to-markdown', html) });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
