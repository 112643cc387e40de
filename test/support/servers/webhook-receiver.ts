import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { onBody } from './http-body';

/** One request as the receiver saw it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  /** Lower-case names, as Node gives them. */
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: any;
  receivedAt: number;
}

interface WebhookReceiverOptions {
  /** Status per successive request; 200 once they are used up. */
  responses?: number[];
  /**
   * Status for one request, decided from the request itself (its body, its headers); undefined falls back to
   * `responses`.
   */
  respond?: (req: ReceivedRequest) => number | undefined;
  /** Wait before answering. */
  delayMs?: number;
  /** Sent as `Retry-After` with every answer that is not 2xx. */
  retryAfter?: string;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hook` */
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Requests deduplicated by `X-Webhook-Id` (the first of each id), as a receiver that dedupes would see them. */
  uniqueById(): Map<string, ReceivedRequest>;
  /** Resolves once `predicate(requests)` holds; rejects after `timeoutMs`. */
  waitFor(predicate: (requests: ReceivedRequest[]) => boolean, timeoutMs?: number): Promise<void>;
  setResponses(codes: number[]): void;
  close(): Promise<void>;
}

/** A real HTTP webhook receiver on 127.0.0.1, port chosen by the OS. */
export async function startWebhookReceiver(opts: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  let responses = [...(opts.responses ?? [])];
  const requests: ReceivedRequest[] = [];
  const waiters = new Set<() => void>();

  const server = http.createServer((req, res) => {
    onBody(req, (body, json) => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        json,
        receivedAt: Date.now(),
      };
      const status = opts.respond?.(received) ?? (responses.length ? responses.shift()! : 200);
      requests.push(received);
      for (const w of waiters) w();
      const answer = () => {
        if (res.destroyed || res.writableEnded) return;
        const headers: http.OutgoingHttpHeaders = { 'Content-Type': 'application/json' };
        if ((status < 200 || status > 299) && opts.retryAfter !== undefined) headers['Retry-After'] = opts.retryAfter;
        res.writeHead(status, headers).end(JSON.stringify({ ok: status < 300 }));
      };
      if (opts.delayMs) setTimeout(answer, opts.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    requests,
    uniqueById() {
      const byId = new Map<string, ReceivedRequest>();
      for (const r of requests) {
        const id = r.headers['x-webhook-id'];
        if (typeof id === 'string' && !byId.has(id)) byId.set(id, r);
      }
      return byId;
    },
    waitFor(predicate, timeoutMs = 5000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!predicate(requests)) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`webhook receiver: condition not met within ${timeoutMs} ms (${requests.length} requests)`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    setResponses(codes) {
      responses = [...codes];
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
