import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { onBody } from './http-body';

const run = promisify(execFile);

/**
 * A test double for a Mistral-OCR-compatible endpoint that speaks the real wire protocol over HTTP on 127.0.0.1:
 * `POST /v1/ocr` with `{model, document: {type: 'document_url', document_url} | {type: 'image_url', image_url},
 * include_image_base64?, pages?}`.
 *
 * A PDF is decoded from its `data:` URL, its pages counted with `pdfinfo` and its text read with `pdftotext` (once per
 * distinct document); each requested page (0-based `pages`, default all) answers `# Page <n>\n\n<text of that page>`
 * (n 1-based) and, with `include_image_base64`, one image entry holding a real 1×1 PNG. An image document answers
 * one page, index 0, `# Image\n\n<mime>, <bytes> bytes`. Pages out of range → 400; a bad body → 422; a wrong key
 * (when `apiKey` is set) → 401 whose message echoes the key sent, as some real servers do.
 *
 * Each OCR request takes the next scripted fault first (`fail429`, `fail500`, `fail`, `malformed`, `hang`,
 * `latency`), else the normal answer.
 */
interface OcrRequest {
  path: string;
  /** Lower-case names, `authorization` included. */
  headers: http.IncomingHttpHeaders;
  /** The parsed JSON body, or undefined. */
  json: any;
  /** `document.type`, the `data:` URL's media type and the decoded document size. */
  documentType?: string;
  mime?: string;
  docBytes?: number;
  /** The `pages` field as sent. */
  pages?: number[];
  includeImages: boolean;
  receivedAt: number;
}

type OcrFault =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { malformed: 'not-json' | 'wrong-shape' }
  | { hang: true }
  | { delayMs: number };

export interface OcrServer {
  /** Base URL: `http://127.0.0.1:<port>` (the client appends `/v1/ocr`). */
  url: string;
  port: number;
  requests: OcrRequest[];
  /** OCR requests only (`POST /v1/ocr`). */
  ocrRequests(): OcrRequest[];
  fail429(retryAfterSeconds?: number, times?: number): void;
  fail500(times?: number): void;
  fail(status: number, times?: number, body?: unknown): void;
  /** A 200 whose body is not a valid OCR answer: HTML (`not-json`, default) or JSON of the wrong shape. */
  malformed(times?: number, kind?: 'not-json' | 'wrong-shape'): void;
  /** Never answer; the connection stays open until the client gives up. */
  hang(times?: number): void;
  /** Delay the next answer(s) by `ms`. */
  latency(ms: number, times?: number): void;
  reset(): void;
  close(): Promise<void>;
}

interface OcrServerOptions {
  apiKey?: string;
  /** The `model` of every answer; default `mistral-ocr-2503-completion`. */
  model?: string;
  /** Run `pdftotext` for the page text; default true. Without it pages say `Text of page <n>.` */
  extractText?: boolean;
  /** Number the answer's pages from 0 within each request instead of by document page (some compatible servers do). */
  relativeIndexes?: boolean;
}

/** A real 1×1 PNG. */
const TINY_PNG_DATA_URL =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s;

type Pdf = { pageCount: number; texts: string[] };

async function readPdf(bytes: Buffer, extractText: boolean): Promise<Pdf> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocr-server-'));
  try {
    const file = path.join(dir, 'doc.pdf');
    await fs.writeFile(file, bytes);
    const info = await run('pdfinfo', [file], { timeout: 30_000 });
    const pageCount = Number(/^Pages:\s+(\d+)/m.exec(info.stdout)?.[1] ?? NaN);
    if (!Number.isInteger(pageCount)) throw new Error('pdfinfo found no page count');
    if (!extractText) return { pageCount, texts: [] };
    const text = await run('pdftotext', ['-enc', 'UTF-8', file, '-'], { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
    return { pageCount, texts: text.stdout.split('\f').map((t) => t.trim()) };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

const mistralError = (status: number, message: string): OcrFault => ({
  status,
  body: { object: 'error', message, type: status === 429 ? 'rate_limited' : 'invalid_request_error', code: null },
});

/** Starts the server on 127.0.0.1 with an OS-chosen port. */
export async function startOcrServer(opts: OcrServerOptions = {}): Promise<OcrServer> {
  const requests: OcrRequest[] = [];
  let queue: OcrFault[] = [];
  const pdfs = new Map<string, Promise<Pdf>>();
  const model = opts.model ?? 'mistral-ocr-2503-completion';

  const pdfOf = (bytes: Buffer) => {
    const key = createHash('sha256').update(bytes).digest('hex');
    let p = pdfs.get(key);
    if (!p) {
      p = readPdf(bytes, opts.extractText ?? true);
      pdfs.set(key, p);
      p.catch(() => pdfs.delete(key));
    }
    return p;
  };

  const answer = async (rec: OcrRequest): Promise<{ status: number; body: unknown }> => {
    if (opts.apiKey !== undefined && rec.headers.authorization !== `Bearer ${opts.apiKey}`) {
      const sent = (rec.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
      return { status: 401, body: { message: `Unauthorized: invalid api key ${sent}` } };
    }
    const j = rec.json;
    const doc = j?.document;
    const url = doc?.type === 'document_url' ? doc.document_url : doc?.type === 'image_url' ? doc.image_url : undefined;
    const m = typeof url === 'string' ? DATA_URL.exec(url) : null;
    if (typeof j?.model !== 'string' || !m) {
      return {
        status: 422,
        body: { detail: [{ loc: ['body', 'document'], msg: 'model and a base64 data URL are required' }] },
      };
    }
    const bytes = Buffer.from(m[2], 'base64');
    const images = (n: number) =>
      rec.includeImages
        ? [
            {
              id: `img-${n}.png`,
              top_left_x: 10,
              top_left_y: 20,
              bottom_right_x: 110,
              bottom_right_y: 220,
              image_base64: TINY_PNG_DATA_URL,
            },
          ]
        : [
            {
              id: `img-${n}.png`,
              top_left_x: 10,
              top_left_y: 20,
              bottom_right_x: 110,
              bottom_right_y: 220,
              image_base64: null,
            },
          ];
    const dimensions = { dpi: 200, height: 2200, width: 1700 };
    if (doc.type === 'image_url') {
      const pages = [
        { index: 0, markdown: `# Image\n\n${m[1]}, ${bytes.length} bytes`, images: images(0), dimensions },
      ];
      return { status: 200, body: { pages, model, usage_info: { pages_processed: 1, doc_size_bytes: bytes.length } } };
    }
    if (m[1] !== 'application/pdf')
      return { status: 422, body: { detail: [{ loc: ['body', 'document'], msg: `unsupported ${m[1]}` }] } };
    let pdf: Pdf;
    try {
      pdf = await pdfOf(bytes);
    } catch {
      return { status: 400, body: { message: 'The document could not be read as a PDF' } };
    }
    const wanted = rec.pages ?? Array.from({ length: pdf.pageCount }, (_, i) => i);
    const bad = wanted.find((p) => !Number.isInteger(p) || p < 0 || p >= pdf.pageCount);
    if (bad !== undefined)
      return { status: 400, body: { message: `Page ${bad} out of range (document has ${pdf.pageCount})` } };
    const pages = wanted.map((i, n) => ({
      index: opts.relativeIndexes ? n : i,
      markdown: `# Page ${i + 1}\n\n${pdf.texts[i] ?? `Text of page ${i + 1}.`}`,
      images: images(i),
      dimensions,
    }));
    return {
      status: 200,
      body: { pages, model, usage_info: { pages_processed: pages.length, doc_size_bytes: bytes.length } },
    };
  };

  const reply = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.destroyed || res.writableEnded) return;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(text);
  };

  const handle = async (rec: OcrRequest, res: http.ServerResponse): Promise<void> => {
    const fault = queue.shift();
    if (fault && 'hang' in fault) return;
    if (fault && 'delayMs' in fault) await new Promise((r) => setTimeout(r, fault.delayMs));
    if (fault && 'status' in fault) return reply(res, fault.status, fault.body ?? {}, fault.headers);
    if (fault && 'malformed' in fault) {
      const body =
        fault.malformed === 'not-json'
          ? '<html>Bad gateway</html>'
          : { pages: [{ index: 'first', text: 'no markdown' }] };
      return reply(res, 200, body);
    }
    const a = await answer(rec);
    reply(res, a.status, a.body);
  };

  const server = http.createServer((req, res) => {
    onBody(req, (_body, json) => {
      const doc = json?.document;
      const url = doc?.document_url ?? doc?.image_url;
      const m = typeof url === 'string' ? DATA_URL.exec(url) : null;
      const rec: OcrRequest = {
        path: (req.url ?? '').split('?')[0],
        headers: req.headers,
        json,
        documentType: typeof doc?.type === 'string' ? doc.type : undefined,
        mime: m?.[1],
        docBytes: m ? Buffer.from(m[2], 'base64').length : undefined,
        pages: Array.isArray(json?.pages) ? json.pages : undefined,
        includeImages: json?.include_image_base64 === true,
        receivedAt: Date.now(),
      };
      requests.push(rec);
      if (req.method !== 'POST' || rec.path !== '/v1/ocr') return reply(res, 404, { detail: 'Not Found' });
      handle(rec, res).catch((err: unknown) => reply(res, 500, { message: `test server failed: ${String(err)}` }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const times = (n: number, f: OcrFault) => Array.from({ length: n }, () => f);

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    ocrRequests: () => requests.filter((r) => r.path === '/v1/ocr'),
    fail429(retryAfterSeconds = 1, n = 1) {
      const f = mistralError(429, 'Requests rate limit exceeded') as { status: number; body: unknown };
      queue.push(...times(n, { ...f, headers: { 'Retry-After': String(retryAfterSeconds) } }));
    },
    fail500(n = 1) {
      queue.push(...times(n, mistralError(500, 'Internal server error')));
    },
    fail(status, n = 1, body) {
      queue.push(...times(n, body === undefined ? mistralError(status, `Error ${status}`) : { status, body }));
    },
    malformed(n = 1, kind = 'not-json') {
      queue.push(...times(n, { malformed: kind }));
    },
    hang(n = 1) {
      queue.push(...times(n, { hang: true }));
    },
    latency(ms, n = 1) {
      queue.push(...times(n, { delayMs: ms }));
    },
    reset() {
      queue = [];
      requests.length = 0;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
