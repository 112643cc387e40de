import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { onBody } from './http-body';
import { keyedWork } from './llm-keyed';

/**
 * A test double for an OpenAI-compatible endpoint that speaks the real wire protocol over HTTP on 127.0.0.1.
 *
 * Routes: `POST /v1/chat/completions` (and `/chat/completions`), `GET /v1/models` (and `/models`).
 * Each chat request takes, in order: the next scripted reply (`fail429`, `fail500`, `invalidJson`, `hang`,
 * `latency`, `reply`, `enqueue`), else the `respond` handler (when it returns something), else the default.
 *
 * Default answer: in JSON mode (`response_format.type` `json_object`, or `json_schema` as the local model server takes
 * it) a JSON object whose keys are the field names
 * listed under a line starting `Fields:` in the latest user message that has one (names on that line, comma-separated,
 * and/or one
 * per following line as `- name: description` or `name: description`, up to an empty line), each valued
 * `"<name> value"`; with no `Fields:` line, `{"echo": "<user text, 200 chars>"}`. In text mode: `Echo: <user text>`,
 * plus ` [N image(s)]` when the message carried images. Tokens are counted roughly: characters / 4, 85 per image.
 * With `contextTokens`, a request whose messages and `max_tokens` (1 when absent) count more tokens than that is
 * refused with 400 `context_length_exceeded`, as the local model server refuses it.
 *
 * With `idempotencyKeys`, the server honours `Idempotency-Key` as the local model server does: the first request with
 * a key is computed (its reply, delays included, runs on whether or not its client stays), a request with the same key
 * and body while it computes or after it answered gets that answer (`Idempotent-Replayed: true`), one with the same
 * key and another body 422. Without it, every request is computed. `paidRequests()` lists the computed ones: what an
 * endpoint would charge for.
 */
export interface LlmRequest {
  method: string;
  path: string;
  /** Lower-case names, `authorization` included. */
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The parsed JSON body, or undefined. */
  json: any;
  receivedAt: number;
}

export type LlmReply =
  /** A normal completion with this content (usage counted unless given). */
  | { content: string; usage?: { prompt_tokens: number; completion_tokens: number }; model?: string }
  /**
   * A raw answer: `body` as JSON unless it is a string (sent as is, `application/json` unless headers say otherwise).
   */
  | { status: number; body?: unknown; headers?: Record<string, string> }
  /** Wait, then answer `then` (or the default). */
  | { delayMs: number; then?: LlmReply }
  /** Never answer; the connection stays open until the client gives up. */
  | { hang: true };

type LlmHandler = (req: LlmRequest) => LlmReply | undefined | Promise<LlmReply | undefined>;

export interface LlmServer {
  /** Base URL for the client: `http://127.0.0.1:<port>/v1`. */
  url: string;
  port: number;
  /** Every request received, models listing included. */
  requests: LlmRequest[];
  /** Chat-completion requests only. */
  chatRequests(): LlmRequest[];
  /** Chat-completion requests the server computed (all of them unless `idempotencyKeys`: see the module comment). */
  paidRequests(): LlmRequest[];
  respond(handler: LlmHandler | null): void;
  enqueue(...replies: LlmReply[]): void;
  fail429(retryAfterSeconds?: number, times?: number): void;
  fail500(times?: number): void;
  /** A 200 completion whose content is not JSON. */
  invalidJson(times?: number, content?: string): void;
  hang(times?: number): void;
  /** Delay the next answer (the default one) by `ms`. */
  latency(ms: number, times?: number): void;
  reply(content: string): void;
  /** Clears the queue, the handler and the recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

interface LlmServerOptions {
  /** When set, requests without `Authorization: Bearer <apiKey>` get 401 (whose message echoes the key sent). */
  apiKey?: string;
  /** Listed by `GET /v1/models`. */
  models?: string[];
  /** The model's context in tokens (see the module comment); unlimited when absent. */
  contextTokens?: number;
  /** The port to listen on (default: one the OS chooses); a restarted double takes its predecessor's. */
  port?: number;
  /**
   * Called with every chat completion as it is sent: `delivered` is false when the client's connection was gone by
   * then (the answer reached nobody).
   */
  onReply?: (req: LlmRequest, content: string, delivered: boolean) => void;
  /** Called when a chat request's connection closes before its answer was sent (the client went away). */
  onClientGone?: (req: LlmRequest) => void;
  /** Honour `Idempotency-Key` (see the module comment). */
  idempotencyKeys?: boolean;
}

type Message = { role: string; content: unknown };

const openAiError = (status: number, message: string, type: string): LlmReply => ({
  status,
  body: { error: { message, type, param: null, code: null } },
});

function textOf(content: unknown): { text: string; images: number } {
  if (typeof content === 'string') return { text: content, images: 0 };
  if (!Array.isArray(content)) return { text: '', images: 0 };
  let text = '';
  let images = 0;
  for (const p of content as { type?: string; text?: string }[]) {
    if (p?.type === 'text' && typeof p.text === 'string') text += (text ? '\n' : '') + p.text;
    if (p?.type === 'image_url') images++;
  }
  return { text, images };
}

/** Field names under a `Fields:` line (see the module comment). */
export function fieldsIn(text: string): string[] {
  const lines = text.split(/\r?\n/);
  const at = lines.findIndex((l) => /^\s*fields\s*:/i.test(l));
  if (at < 0) return [];
  const names: string[] = [];
  const add = (n: string) => {
    const m = /^[A-Za-z][A-Za-z0-9_]*/.exec(n.trim().replace(/^[-*]\s*/, ''));
    if (m && !names.includes(m[0])) names.push(m[0]);
  };
  const rest = lines[at].replace(/^\s*fields\s*:/i, '').trim();
  if (rest) rest.split(',').forEach(add);
  for (const l of lines.slice(at + 1)) {
    if (l.trim() === '') break;
    add(l);
  }
  return names;
}

const tokens = (s: string) => Math.ceil(s.length / 4);

function defaultContent(json: any): string {
  const messages: Message[] = Array.isArray(json?.messages) ? json.messages : [];
  const users = messages.filter((m) => m.role === 'user').reverse();
  const { text, images } = textOf(users[0]?.content);
  if (['json_object', 'json_schema'].includes(json?.response_format?.type)) {
    // The latest user message with a `Fields:` line, so corrective follow-ups still get the same object.
    const fields = users.map((m) => fieldsIn(textOf(m.content).text)).find((f) => f.length) ?? [];
    const obj = fields.length ? Object.fromEntries(fields.map((f) => [f, `${f} value`])) : { echo: text.slice(0, 200) };
    return JSON.stringify(obj);
  }
  return `Echo: ${text}${images ? ` [${images} image${images === 1 ? '' : 's'}]` : ''}`;
}

/** The tokens of a request's messages, as this server counts them. */
function promptTokens(json: any): number {
  const messages: Message[] = Array.isArray(json?.messages) ? json.messages : [];
  let prompt = 0;
  for (const m of messages) {
    const { text, images } = textOf(m.content);
    prompt += tokens(text) + 85 * images;
  }
  return prompt;
}

function completion(json: any, reply: Extract<LlmReply, { content: string }>) {
  const prompt = promptTokens(json);
  const usage = reply.usage ?? { prompt_tokens: prompt, completion_tokens: tokens(reply.content) };
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: reply.model ?? json?.model ?? 'test-model',
    choices: [{ index: 0, message: { role: 'assistant', content: reply.content }, finish_reason: 'stop' }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

/** Starts the server on 127.0.0.1 with an OS-chosen port. */
export async function startLlmServer(opts: LlmServerOptions = {}): Promise<LlmServer> {
  const requests: LlmRequest[] = [];
  let queue: LlmReply[] = [];
  let handler: LlmHandler | null = null;
  const seenModels = new Set(opts.models ?? ['test-model', 'test-vision-model']);

  const send = (res: http.ServerResponse, json: any, reply: LlmReply, req?: LlmRequest): void => {
    if (res.destroyed || res.writableEnded) {
      if (req && 'content' in reply) opts.onReply?.(req, reply.content, false);
      return;
    }
    if ('hang' in reply) return;
    if ('delayMs' in reply) {
      const next = reply.then ?? { content: defaultContent(json) };
      setTimeout(() => send(res, json, next, req), reply.delayMs);
      return;
    }
    if ('content' in reply) {
      if (req) opts.onReply?.(req, reply.content, true);
      const replayed = (reply as { replayed?: boolean }).replayed ? { 'Idempotent-Replayed': 'true' } : {};
      res
        .writeHead(200, { 'Content-Type': 'application/json', ...replayed })
        .end(JSON.stringify(completion(json, reply)));
      return;
    }
    const raw = typeof reply.body === 'string';
    const body = raw ? (reply.body as string) : JSON.stringify(reply.body ?? {});
    res.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers }).end(body);
  };

  const chat = async (req: LlmRequest): Promise<LlmReply> => {
    if (opts.apiKey !== undefined) {
      const auth = req.headers.authorization ?? '';
      if (auth !== `Bearer ${opts.apiKey}`) {
        return openAiError(
          401,
          `Incorrect API key provided: ${auth.replace(/^Bearer\s+/i, '')}.`,
          'invalid_request_error',
        );
      }
    }
    if (!req.json || !Array.isArray(req.json.messages) || typeof req.json.model !== 'string') {
      return openAiError(400, 'model and messages are required', 'invalid_request_error');
    }
    if (req.json.stream)
      return openAiError(400, 'stream is not supported by this test server', 'invalid_request_error');
    if (typeof req.json.model === 'string') seenModels.add(req.json.model);
    if (opts.contextTokens !== undefined) {
      const wanted = promptTokens(req.json) + (Number(req.json.max_tokens) || 1);
      if (wanted > opts.contextTokens) {
        return {
          status: 400,
          body: {
            error: {
              message: `This model's maximum context length is ${opts.contextTokens} tokens. However, you requested ${wanted} tokens.`,
              type: 'invalid_request_error',
              param: 'messages',
              code: 'context_length_exceeded',
            },
          },
        };
      }
    }
    const scripted = queue.shift();
    if (scripted) return scripted;
    const handled = handler ? await handler(req) : undefined;
    return handled ?? { content: defaultContent(req.json) };
  };

  const keyed = keyedWork({ honour: opts.idempotencyKeys === true, chat, defaultContent });

  const server = http.createServer((req, res) => {
    onBody(req, (body, json) => {
      const path = (req.url ?? '').split('?')[0];
      const record: LlmRequest = {
        method: req.method ?? '',
        path,
        headers: req.headers,
        body,
        json,
        receivedAt: Date.now(),
      };
      requests.push(record);
      if (req.method === 'POST' && /^(\/v1)?\/chat\/completions$/.test(path)) {
        res.once('close', () => {
          if (!res.writableFinished) opts.onClientGone?.(record);
        });
        keyed.work(record).then(
          (reply) => send(res, json, reply, record),
          (err: unknown) => send(res, json, openAiError(500, `test handler failed: ${String(err)}`, 'server_error')),
        );
      } else if (req.method === 'GET' && /^(\/v1)?\/models$/.test(path)) {
        const data = [...seenModels].map((id) => ({ id, object: 'model', created: 0, owned_by: 'test' }));
        send(res, json, { status: 200, body: { object: 'list', data } });
      } else {
        send(res, json, openAiError(404, `Unknown route ${req.method} ${path}`, 'invalid_request_error'));
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const times = (n: number, reply: LlmReply) => Array.from({ length: n }, () => reply);

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    chatRequests: () => requests.filter((r) => r.path.endsWith('/chat/completions')),
    paidRequests: () => [...keyed.paid],
    respond(h) {
      handler = h;
    },
    enqueue(...replies) {
      queue.push(...replies);
    },
    fail429(retryAfterSeconds = 1, n = 1) {
      const reply = openAiError(429, 'Rate limit reached, please retry later.', 'rate_limit_exceeded') as {
        status: number;
        body: unknown;
      };
      queue.push(...times(n, { ...reply, headers: { 'Retry-After': String(retryAfterSeconds) } }));
    },
    fail500(n = 1) {
      queue.push(
        ...times(n, openAiError(500, 'The server had an error while processing your request.', 'server_error')),
      );
    },
    invalidJson(n = 1, content = 'Sure! The name is Ada and the city is Paris.') {
      queue.push(...times(n, { content }));
    },
    hang(n = 1) {
      queue.push(...times(n, { hang: true }));
    },
    latency(ms, n = 1) {
      queue.push(...times(n, { delayMs: ms }));
    },
    reply(content) {
      queue.push({ content });
    },
    reset() {
      queue = [];
      handler = null;
      requests.length = 0;
      keyed.clear();
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
