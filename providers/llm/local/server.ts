import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../../core/runtime/logger';
import { ContextOverflowError, SchemaError, type LocalCompletion, type LocalCompletionRequest } from './engine';
import { DEFAULT_KEYED, KeyedRuns, KeyReuseError, type KeyedOptions } from './idempotency';
import { QueueFullError } from './queue';

/** What the server needs of the engine (the real one, or anything speaking the same; tests use the real one). */
export interface CompletionEngine {
  readonly id: string;
  readonly contextSize: number;
  readonly queue: { slots: number; size: number; active: number; queued: number };
  complete(req: LocalCompletionRequest): Promise<LocalCompletion>;
}

/** An error in OpenAI's shape: `{error: {message, type, param, code}}`. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;
const invalid = (message: string, param: string | null = null, code: string | null = null) =>
  new HttpError(400, message, 'invalid_request_error', code, param);

/** The request body of `POST /v1/chat/completions`, checked; anything this server cannot honour is a 400. */
export function parseChatRequest(body: unknown, modelId: string): Omit<LocalCompletionRequest, 'signal'> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalid('The body must be a JSON object.');
  const b = body as Record<string, unknown>;
  if (typeof b.model !== 'string') throw invalid('model is required.', 'model');
  if (b.model !== modelId)
    throw new HttpError(
      404,
      `The model '${b.model}' does not exist; this server has '${modelId}'.`,
      'invalid_request_error',
      'model_not_found',
      'model',
    );
  if (b.stream === true) throw invalid('stream is not supported by this server.', 'stream');
  if (typeof b.n === 'number' && b.n !== 1) throw invalid('Only n=1 is supported.', 'n');
  if (!Array.isArray(b.messages) || b.messages.length === 0)
    throw invalid('messages must be a non-empty array.', 'messages');
  const messages = b.messages.map((m: unknown, i: number): LocalCompletionRequest['messages'][number] => {
    const msg = (m ?? {}) as { role?: unknown; content?: unknown };
    if (msg.role !== 'system' && msg.role !== 'user' && msg.role !== 'assistant' && msg.role !== 'developer') {
      throw invalid(`messages[${i}].role must be system, user or assistant.`, `messages[${i}].role`);
    }
    const role = msg.role === 'developer' ? 'system' : msg.role;
    if (typeof msg.content === 'string') return { role, content: msg.content };
    if (!Array.isArray(msg.content))
      throw invalid(`messages[${i}].content must be a string or an array of text parts.`, `messages[${i}].content`);
    const texts = msg.content.map((p: { type?: unknown; text?: unknown }) => {
      if (p?.type === 'text' && typeof p.text === 'string') return p.text;
      throw invalid(
        `messages[${i}].content: only text parts are supported (this model reads no images).`,
        `messages[${i}].content`,
      );
    });
    return { role, content: texts.join('\n') };
  });
  const maxTokens = b.max_completion_tokens ?? b.max_tokens;
  if (maxTokens !== undefined && maxTokens !== null && !(Number.isInteger(maxTokens) && (maxTokens as number) >= 1)) {
    throw invalid('max_tokens must be a positive integer.', 'max_tokens');
  }
  const t = b.temperature;
  if (t !== undefined && t !== null && !(typeof t === 'number' && t >= 0 && t <= 2))
    throw invalid('temperature must be a number from 0 to 2.', 'temperature');
  return {
    messages,
    maxTokens: (maxTokens as number | null) ?? undefined,
    temperature: (t as number | null) ?? undefined,
    format: parseFormat(b.response_format),
  };
}

function parseFormat(rf: unknown): LocalCompletionRequest['format'] {
  if (rf === undefined || rf === null) return undefined;
  const f = rf as { type?: unknown; json_schema?: { schema?: unknown } };
  if (f.type === 'text') return undefined;
  if (f.type === 'json_object') return { type: 'json_object' };
  if (f.type === 'json_schema') {
    const schema = f.json_schema?.schema;
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
      throw invalid('response_format.json_schema.schema must be a JSON schema object.', 'response_format');
    }
    return { type: 'json_schema', schema: schema as Record<string, unknown> };
  }
  throw invalid('response_format.type must be text, json_object or json_schema.', 'response_format');
}

function readBody(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpError(413, `The body is larger than ${MAX_BODY_BYTES} bytes.`, 'invalid_request_error'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(invalid('The body is not valid JSON.'));
      }
    });
    req.on('error', reject);
  });
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.writableEnded || res.destroyed) return;
  res
    .writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...headers })
    .end(JSON.stringify(body));
}

function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof QueueFullError) {
    return new HttpError(503, err.message, 'server_busy', 'queue_full', null, {
      'Retry-After': String(err.retryAfterSeconds),
    });
  }
  if (err instanceof ContextOverflowError) return invalid(err.message, 'messages', 'context_length_exceeded');
  if (err instanceof SchemaError) return invalid(err.message, 'response_format');
  if (err instanceof KeyReuseError)
    return new HttpError(422, err.message, 'invalid_request_error', 'idempotency_key_reused', 'Idempotency-Key');
  return new HttpError(500, 'The local model failed to answer.', 'server_error');
}

export interface LocalLlmServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A completion as the protocol answers it. */
type ChatCompletion = Record<string, unknown>;

/** An `Idempotency-Key` header: printable ASCII, at most 255 characters; absent or empty: none. */
function idempotencyKey(req: http.IncomingMessage): string | undefined {
  const raw = req.headers['idempotency-key'];
  const key = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!key) return undefined;
  if (key.length > 255 || !/^[\x21-\x7e]+$/.test(key))
    throw invalid('Idempotency-Key must be 1 to 255 printable ASCII characters.', 'Idempotency-Key');
  return key;
}

/**
 * The OpenAI chat-completions protocol over the local engine: `POST /v1/chat/completions`, `GET /v1/models`,
 * `GET /health`. A client that goes away leaves the queue or stops its generation, unless its request carries an
 * `Idempotency-Key`: then the same key while it computes waits for it, after it answered gets the same answer
 * (`Idempotent-Replayed: true`), and it goes on for `keyed.orphanMs` after its clients left (see `KeyedRuns`).
 */
export async function startLocalLlmServer(opts: {
  engine: CompletionEngine;
  host: string;
  port: number;
  logger: Logger;
  keyed?: Partial<KeyedOptions>;
}): Promise<LocalLlmServer> {
  const { engine, logger } = opts;
  const keyed = new KeyedRuns<ChatCompletion>({ ...DEFAULT_KEYED, ...opts.keyed });
  const server = http.createServer((req, res) => {
    const route = `${req.method} ${(req.url ?? '').split('?')[0].replace(/\/+$/, '')}`;
    const fail = (err: unknown) => {
      const e = toHttpError(err);
      if (e.status >= 500 && !(err instanceof QueueFullError)) logger.error({ err }, 'local model request failed');
      send(res, e.status, { error: { message: e.message, type: e.type, param: e.param, code: e.code } }, e.headers);
    };
    if (route === 'GET /health') {
      const q = engine.queue;
      send(res, 200, {
        status: 'ok',
        model: engine.id,
        context_size: engine.contextSize,
        slots: q.slots,
        active: q.active,
        queued: q.queued,
        queue_size: q.size,
        idempotency: { ...keyed.counts, entries: keyed.size },
      });
    } else if (route === 'GET /v1/models' || route === 'GET /models') {
      send(res, 200, {
        object: 'list',
        data: [{ id: engine.id, object: 'model', created: 0, owned_by: 'docproc-local' }],
      });
    } else if (route === 'POST /v1/chat/completions' || route === 'POST /chat/completions') {
      const gone = new AbortController();
      res.on('close', () => {
        if (!res.writableEnded) gone.abort(new Error('client closed the connection'));
      });
      readBody(req)
        .then(async (body) => {
          const key = idempotencyKey(req);
          const parsed = parseChatRequest(body, engine.id);
          const compute = async (signal: AbortSignal): Promise<ChatCompletion> => {
            const t0 = Date.now();
            const r = await engine.complete({ ...parsed, signal });
            logger.debug(
              { prompt_tokens: r.promptTokens, completion_tokens: r.completionTokens, ms: Date.now() - t0, key },
              'completion',
            );
            return {
              id: `chatcmpl-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`,
              object: 'chat.completion',
              created: Math.floor(Date.now() / 1000),
              model: engine.id,
              choices: [
                { index: 0, message: { role: 'assistant', content: r.content }, finish_reason: r.finishReason },
              ],
              usage: {
                prompt_tokens: r.promptTokens,
                completion_tokens: r.completionTokens,
                total_tokens: r.promptTokens + r.completionTokens,
              },
            };
          };
          if (!key) return send(res, 200, await compute(gone.signal));
          const fingerprint = createHash('sha256').update(JSON.stringify(parsed)).digest('hex');
          const { value, outcome } = await keyed.run(key, fingerprint, gone.signal, compute);
          send(res, 200, value, outcome === 'computed' ? {} : { 'Idempotent-Replayed': 'true' });
        })
        .catch((err) => (gone.signal.aborted ? undefined : fail(err)));
    } else {
      fail(new HttpError(404, `Unknown route ${route}.`, 'invalid_request_error'));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}/v1`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        keyed.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
