import http from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../../core/config/config';
import type { Logger } from '../../core/runtime/logger';

/** Deadlines of a client's request: its head, and the pace of its body (`API_HEADERS_TIMEOUT_MS`, `API_BODY_*`). */
export interface ClientDeadlines {
  /** A connection must send a complete request head within this long (from the connection, or its head's start). */
  headersTimeoutMs: number;
  /** A body that sends no byte for this long is cut (a stalled upload). */
  bodyIdleTimeoutMs: number;
  /**
   * Over every window of `bodyIdleTimeoutMs`, a body must arrive at this many bytes per second on average (or be
   * finished within the window): a trickle that keeps the idle timeout at bay is cut too. 0: no floor.
   */
  bodyMinBytesPerSec: number;
}

/** The deadlines the configuration sets. */
export const clientDeadlines = (
  config: Pick<Config, 'API_HEADERS_TIMEOUT_MS' | 'API_BODY_IDLE_TIMEOUT_MS' | 'API_BODY_MIN_BYTES_PER_SEC'>,
): ClientDeadlines => ({
  headersTimeoutMs: config.API_HEADERS_TIMEOUT_MS,
  bodyIdleTimeoutMs: config.API_BODY_IDLE_TIMEOUT_MS,
  bodyMinBytesPerSec: config.API_BODY_MIN_BYTES_PER_SEC,
});

/** Idle keep-alive connections are kept this long after a response: above the usual load balancer's 60 s. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** A request whose body is being received, and how it moves. */
interface Receiving {
  req: http.IncomingMessage;
  socket: Socket;
  /** Body bytes still expected (Content-Length), Infinity for a chunked body. */
  expected: number;
  startBytes: number;
  lastBytes: number;
  lastProgressAt: number;
  windowAt: number;
  windowBytes: number;
}

export interface SlowClientGuard {
  /** Connections cut so far, by reason. */
  readonly cut: { idleConnection: number; stalledBody: number; slowBody: number };
  /** Requests whose bodies are being watched now. */
  watching(): number;
  stop(): void;
}

/**
 * The API's HTTP server with deadlines for slow clients: a connection that sends nothing, a head that never ends, a
 * body that stalls or trickles. Node's own `headersTimeout` (checked every `connectionsCheckingInterval`) ends a head
 * that started but did not finish (408); a connection that never starts one is ended after the same time (by its
 * socket's timer, silently, or by that check, which counts from the connection as well, with its 408); a body is
 * watched by its socket's byte count while it is received: no byte for `bodyIdleTimeoutMs`, or less than the minimum
 * rate over a window of that length, and the connection is destroyed (the body middleware then removes what it wrote
 * of the upload). Time the server itself does not read (its buffer full, the socket paused) never counts against the
 * client. A steady body, however slow above the floor, is never cut; nor is a response that takes long (a synchronous
 * wait), since only bodies being received are watched, and `requestTimeout` stays 0.
 */
export function createApiServer(
  listener: http.RequestListener,
  deadlines: ClientDeadlines,
  logger?: Logger,
): { server: http.Server; guard: SlowClientGuard } {
  const tickMs = Math.max(
    50,
    Math.min(1000, Math.floor(Math.min(deadlines.headersTimeoutMs, deadlines.bodyIdleTimeoutMs) / 4)),
  );
  const server = http.createServer(
    { headersTimeout: deadlines.headersTimeoutMs, requestTimeout: 0, connectionsCheckingInterval: tickMs },
    listener,
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  const cut = { idleConnection: 0, stalledBody: 0, slowBody: 0 };
  const receiving = new Set<Receiving>();
  const started = new WeakSet<Socket>();

  server.on('connection', (socket: Socket) => {
    // Until its first request head: Node's headersTimeout counts from the head's first byte only.
    socket.setTimeout(deadlines.headersTimeoutMs, () => {
      if (started.has(socket)) return;
      cut.idleConnection += 1;
      socket.destroy();
    });
  });
  server.on('request', (req: http.IncomingMessage) => {
    const socket = req.socket;
    if (!started.has(socket)) {
      started.add(socket);
      socket.setTimeout(0);
    }
    if (req.complete || !hasBody(req)) return;
    const now = Date.now();
    const declared = Number(req.headers['content-length']);
    const entry: Receiving = {
      req,
      socket,
      expected: Number.isFinite(declared) ? declared : Infinity,
      startBytes: socket.bytesRead,
      lastBytes: socket.bytesRead,
      lastProgressAt: now,
      windowAt: now,
      windowBytes: socket.bytesRead,
    };
    receiving.add(entry);
    const done = () => receiving.delete(entry);
    req.once('end', done).once('close', done);
  });

  let lastCheck = Date.now();
  const check = () => {
    const now = Date.now();
    // A check that comes late (this process's event loop was busy) saw no bytes that the kernel held for it
    // meanwhile: the lateness is not counted against any client.
    const late = now - lastCheck - tickMs;
    lastCheck = now;
    for (const e of receiving) {
      if (late > tickMs) {
        e.lastProgressAt += late;
        e.windowAt += late;
      }
      if (e.req.complete || e.socket.destroyed) {
        receiving.delete(e);
        continue;
      }
      const bytes = e.socket.bytesRead;
      // Not read by the server (the handler has not consumed its buffer): the client is not the slow one.
      if (e.socket.isPaused() || bytes > e.lastBytes) {
        e.lastBytes = bytes;
        e.lastProgressAt = now;
      }
      if (e.socket.isPaused()) {
        e.windowAt = now;
        e.windowBytes = bytes;
        continue;
      }
      let reason: 'stalledBody' | 'slowBody' | undefined;
      if (now - e.lastProgressAt >= deadlines.bodyIdleTimeoutMs) reason = 'stalledBody';
      else if (deadlines.bodyMinBytesPerSec > 0 && now - e.windowAt >= deadlines.bodyIdleTimeoutMs) {
        const left = e.expected - (e.windowBytes - e.startBytes);
        const needed = Math.min(left, (deadlines.bodyMinBytesPerSec * (now - e.windowAt)) / 1000);
        if (bytes - e.windowBytes < needed) reason = 'slowBody';
        e.windowAt = now;
        e.windowBytes = bytes;
      }
      if (!reason) continue;
      receiving.delete(e);
      cut[reason] += 1;
      logger?.info(
        {
          reason,
          received: bytes - e.startBytes,
          expected: Number.isFinite(e.expected) ? e.expected : undefined,
          path: e.req.url?.split('?')[0],
        },
        'request body too slow: connection closed',
      );
      e.socket.destroy();
    }
  };
  const timer = setInterval(check, tickMs);
  timer.unref();
  server.once('close', () => clearInterval(timer));
  return {
    server,
    guard: { cut, watching: () => receiving.size, stop: () => clearInterval(timer) },
  };
}

function hasBody(req: http.IncomingMessage): boolean {
  const len = req.headers['content-length'];
  if (len !== undefined) return Number(len) > 0;
  return req.headers['transfer-encoding'] !== undefined;
}
