import type { LlmReply, LlmRequest } from './llm-server';

/** What the OpenAI-compatible test server computes for its chat requests, and which it computed (paid). */
export interface KeyedWork {
  /** The reply to a chat request: computed, or (keys honoured) the computation of its key that it repeats. */
  work(req: LlmRequest): Promise<LlmReply>;
  /** The requests computed: what an endpoint would charge for. */
  readonly paid: LlmRequest[];
  clear(): void;
}

/**
 * Requests by `Idempotency-Key` for the test server (test/support/servers/llm-server.ts), as the local model server takes
 * them when `honour` is set: the first request of a key is computed, its delays waited out whether or not its client
 * stays; the same key and body while it computes or after it answered gets that answer (`replayed`); the same key
 * with another body 422; a failure is not kept. Without `honour`, or without a key, every request is computed.
 */
export function keyedWork(opts: {
  honour: boolean;
  chat: (req: LlmRequest) => Promise<LlmReply>;
  defaultContent: (json: any) => string;
}): KeyedWork {
  const paid: LlmRequest[] = [];
  const keyed = new Map<string, { body: string; work: Promise<LlmReply> }>();
  const settle = async (json: any, reply: LlmReply): Promise<LlmReply> => {
    let r = reply;
    while ('delayMs' in r) {
      const { delayMs, then } = r;
      await new Promise((done) => setTimeout(done, delayMs));
      r = then ?? { content: opts.defaultContent(json) };
    }
    return r;
  };
  return {
    paid,
    clear: () => {
      paid.length = 0;
      keyed.clear();
    },
    work: (req) => {
      const header = req.headers['idempotency-key'];
      const key = opts.honour ? (Array.isArray(header) ? header[0] : header) : undefined;
      if (!key) {
        paid.push(req);
        return opts.chat(req);
      }
      const found = keyed.get(key);
      if (found)
        return found.body === req.body
          ? found.work.then((r) => ('content' in r ? { ...r, replayed: true } : r))
          : Promise.resolve({
              status: 422,
              body: {
                error: {
                  message: 'This Idempotency-Key was used with a different request.',
                  type: 'invalid_request_error',
                  param: null,
                  code: null,
                },
              },
            });
      paid.push(req);
      const computed = opts.chat(req).then((r) => settle(req.json, r));
      keyed.set(key, { body: req.body, work: computed });
      computed.then(
        (r) => ('content' in r ? undefined : keyed.delete(key)),
        () => keyed.delete(key),
      );
      return computed;
    },
  };
}
