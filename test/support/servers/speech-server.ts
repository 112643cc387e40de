import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { wavInfo } from '../../../providers/media/audio';
import { languageName } from '../../../providers/speech/openai';

/**
 * A test double for an OpenAI-compatible transcription endpoint, speaking the real wire protocol over HTTP on
 * 127.0.0.1: `POST /v1/audio/transcriptions` (and `/audio/transcriptions`), a `multipart/form-data` body parsed with
 * the platform's `Request.formData()`.
 *
 * Each request takes the next scripted reply (`script`; a delay without `then` delays the default), else the default:
 * the answer built from the request. The
 * uploaded file must be a PCM WAV (else 400, as a real endpoint that cannot decode it); its header gives the
 * duration, cut into segments of `segmentSeconds` whose texts name the segment and the file. `language` is answered
 * as OpenAI does, by name (`de` → `german`); without one the `detectedLanguage` option (default `english`).
 * `response_format`: `verbose_json` (language, duration, text, segments), `json` or absent (`{text}`), `text`.
 */
interface SpeechRequest {
  method: string;
  path: string;
  /** Lower-case names, `authorization` included. */
  headers: http.IncomingHttpHeaders;
  /** Text fields by name, each with every value sent (`timestamp_granularities[]` may repeat). */
  fields: Record<string, string[]>;
  file?: { name: string; type: string; size: number; sha256: string };
  receivedAt: number;
}

type SpeechReply =
  /** A raw answer: `body` as JSON unless it is a string (sent as is). */
  | { status: number; body?: unknown; headers?: Record<string, string> }
  /** Wait, then answer `then` (or the default). */
  | { delayMs: number; then?: SpeechReply }
  /** Never answer; the connection stays open until the client gives up. */
  | { hang: true };

export interface SpeechServer {
  /** Base URL for the client: `http://127.0.0.1:<port>/v1`. */
  url: string;
  requests: SpeechRequest[];
  /** Answers the next `times` requests with `reply`. */
  script(reply: SpeechReply, times?: number): void;
  /** Clears the script and the recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

interface SpeechServerOptions {
  /** When set, requests without `Authorization: Bearer <apiKey>` get 401 (whose message echoes the key sent). */
  apiKey?: string;
  /** The language name answered when the request gives none; default `english`. */
  detectedLanguage?: string;
  /** Length of the default answer's segments; default 2 s. */
  segmentSeconds?: number;
}

/** An error body as OpenAI sends it. */
export const speechError = (status: number, message: string, headers?: Record<string, string>): SpeechReply => ({
  status,
  body: { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null } },
  headers,
});

async function readMultipart(
  req: http.IncomingMessage,
  body: Buffer,
): Promise<{ fields: Record<string, string[]>; file?: File }> {
  const headers = { 'content-type': req.headers['content-type'] ?? '' };
  const form = await new Request('http://127.0.0.1/', {
    method: 'POST',
    headers,
    body: new Uint8Array(body),
  }).formData();
  const fields: Record<string, string[]> = {};
  let file: File | undefined;
  form.forEach((value, name) => {
    if (typeof value === 'string') (fields[name] ??= []).push(value);
    else if (name === 'file') file = value;
  });
  return { fields, file };
}

/** Starts the server on 127.0.0.1 with an OS-chosen port; uploads are kept in a temporary folder until `close`. */
export async function startSpeechServer(opts: SpeechServerOptions = {}): Promise<SpeechServer> {
  const requests: SpeechRequest[] = [];
  const queue: SpeechReply[] = [];
  const dir = await mkdtemp(path.join(os.tmpdir(), 'speech-server-'));
  let uploads = 0;

  /** The answer a Whisper endpoint would give, built from the request. */
  const heard = async (fields: Record<string, string[]>, file: File, bytes: Buffer): Promise<SpeechReply> => {
    const saved = path.join(dir, `${++uploads}.bin`);
    await writeFile(saved, bytes);
    let duration: number;
    try {
      duration = (await wavInfo(saved)).duration;
    } catch {
      return speechError(400, 'Invalid file format. The audio could not be decoded.');
    }
    const step = opts.segmentSeconds ?? 2;
    const segments = [];
    for (let start = 0, id = 0; start < duration; start += step, id++) {
      const end = Math.min(duration, start + step);
      segments.push({
        id,
        seek: 0,
        start,
        end,
        text: ` Segment ${id + 1} of ${file.name}.`,
        tokens: [],
        temperature: 0,
      });
    }
    const text = segments.map((s) => s.text).join('');
    const format = fields.response_format?.[0] ?? 'json';
    if (format === 'text') return { status: 200, body: text, headers: { 'Content-Type': 'text/plain' } };
    if (format !== 'verbose_json') return { status: 200, body: { text } };
    const given = fields.language?.[0];
    const language = given ? (languageName(given) ?? given) : (opts.detectedLanguage ?? 'english');
    // Word timings as OpenAI gives them: one top-level list, without probabilities, only when asked for.
    const words = (fields['timestamp_granularities[]'] ?? []).includes('word')
      ? segments.flatMap((seg) => {
          const parts = seg.text.trim().split(/\s+/);
          const step = (seg.end - seg.start) / parts.length;
          return parts.map((word, i) => ({ word, start: seg.start + i * step, end: seg.start + (i + 1) * step }));
        })
      : undefined;
    return {
      status: 200,
      body: { task: 'transcribe', language, duration, text, segments, ...(words ? { words } : {}) },
    };
  };

  const answer = async (req: http.IncomingMessage, record: SpeechRequest, body: Buffer): Promise<SpeechReply> => {
    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      const sent = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
      return speechError(401, `Incorrect API key provided: ${sent}.`);
    }
    if (!/^multipart\/form-data/i.test(req.headers['content-type'] ?? ''))
      return speechError(400, 'Expected multipart/form-data.');
    const { fields, file } = await readMultipart(req, body);
    const bytes = file ? Buffer.from(await file.arrayBuffer()) : undefined;
    record.fields = fields;
    if (file && bytes)
      record.file = {
        name: file.name,
        type: file.type,
        size: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      };
    const scripted = queue.shift();
    if (scripted && !('delayMs' in scripted && !scripted.then)) return scripted;
    let reply: SpeechReply;
    if (!file || !bytes) reply = speechError(400, "Missing required parameter: 'file'.");
    else if (!fields.model?.[0]) reply = speechError(400, "Missing required parameter: 'model'.");
    else reply = await heard(fields, file, bytes);
    return scripted ? { delayMs: scripted.delayMs, then: reply } : reply;
  };

  const send = (res: http.ServerResponse, reply: SpeechReply): void => {
    if (res.destroyed || res.writableEnded || 'hang' in reply) return;
    if ('delayMs' in reply) {
      setTimeout(() => send(res, reply.then ?? speechError(500, 'no reply after the delay')), reply.delayMs);
      return;
    }
    const raw = typeof reply.body === 'string';
    res.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers });
    res.end(raw ? (reply.body as string) : JSON.stringify(reply.body ?? {}));
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = (req.url ?? '').split('?')[0];
      const record: SpeechRequest = {
        method: req.method ?? '',
        path: url,
        headers: req.headers,
        fields: {},
        receivedAt: Date.now(),
      };
      requests.push(record);
      if (req.method !== 'POST' || !/^(\/v1)?\/audio\/transcriptions$/.test(url)) {
        send(res, speechError(404, `Unknown route ${req.method} ${url}`));
        return;
      }
      answer(req, record, Buffer.concat(chunks)).then(
        (reply) => send(res, reply),
        (err: unknown) => send(res, speechError(500, `test server failed: ${String(err)}`)),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    script(reply, times = 1) {
      for (let i = 0; i < times; i++) queue.push(reply);
    },
    reset() {
      queue.length = 0;
      requests.length = 0;
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await rm(dir, { recursive: true, force: true });
    },
  };
}
