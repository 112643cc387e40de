import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * HTTP side of the docproc CLI: the base URL (`DOCPROC_URL`), the key (`DOCPROC_API_KEY`, else `SERVICE_API_KEY`;
 * sent as a bearer token, never printed), JSON and multipart requests, and the error envelope turned into an
 * `ApiError` that carries its code.
 */

export class ApiError extends Error {
  /** @param {number} status @param {string} code @param {string} message @param {unknown} [details] */
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

export function createClient(env = process.env) {
  const base = (env.DOCPROC_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
  const key = env.DOCPROC_API_KEY || env.SERVICE_API_KEY || '';
  const headers = (extra = {}) => ({ ...(key ? { Authorization: `Bearer ${key}` } : {}), ...extra });

  /** Sends a request; answers the Response, or throws an ApiError for an error answer or an unreachable server. */
  async function send(method, urlPath, { json, form, accept, lastEventId, prefer } = {}) {
    const init = {
      method,
      headers: headers({
        ...(accept ? { Accept: accept } : {}),
        ...(lastEventId ? { 'Last-Event-ID': String(lastEventId) } : {}),
        ...(prefer ? { Prefer: prefer } : {}),
      }),
    };
    if (form) init.body = form;
    else if (json !== undefined) {
      init.body = JSON.stringify(json);
      init.headers['Content-Type'] = 'application/json';
    }
    let res;
    try {
      res = await fetch(base + urlPath, init);
    } catch (err) {
      throw new ApiError(0, 'UNREACHABLE', `cannot reach ${base}: ${err?.cause?.code ?? err?.message ?? err}`);
    }
    if (res.status >= 400) throw await toApiError(res);
    return res;
  }

  return {
    base,
    send,
    /** A request whose answer is the JSON envelope: answers `{ status, body }`. */
    async call(method, urlPath, opts) {
      const res = await send(method, urlPath, opts);
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? parseJson(text) : null };
    },
    /** Streams a binary answer into `out` (a file path, or '-' for stdout); a 202 (still running) answers its JSON. */
    async download(urlPath, out) {
      const res = await send('GET', urlPath);
      if (res.status === 202) return { status: 202, body: parseJson(await res.text()) };
      const target = out ?? fileNameOf(res, urlPath);
      const sink = target === '-' ? process.stdout : fs.createWriteStream(target);
      await pipeline(Readable.fromWeb(res.body), sink);
      const size = target === '-' ? null : fs.statSync(target).size;
      return { status: res.status, file: target, bytes: size, type: res.headers.get('content-type') };
    },
  };
}

async function toApiError(res) {
  const text = await res.text().catch(() => '');
  const body = parseJson(text);
  const e = body && typeof body === 'object' ? body.error : undefined;
  if (e && typeof e.code === 'string') return new ApiError(res.status, e.code, String(e.message ?? ''), e.details);
  return new ApiError(res.status, `HTTP_${res.status}`, text.slice(0, 200) || res.statusText);
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The name the server gave (Content-Disposition), else the last path segment. */
function fileNameOf(res, urlPath) {
  const cd = res.headers.get('content-disposition') ?? '';
  const star = /filename\*=UTF-8''([^;]+)/i.exec(cd);
  const plain = /filename="?([^";]+)"?/i.exec(cd);
  const name = star
    ? decodeURIComponent(star[1])
    : plain
      ? plain[1]
      : decodeURIComponent(urlPath.split('?')[0].split('/').pop() || 'download');
  return path.basename(name);
}

/** A multipart form: fields as strings (objects as JSON text), files by path. */
export async function multipart(fields, files) {
  const form = new FormData();
  for (const [name, p] of files) {
    const bytes = await fs.promises.readFile(p);
    form.append(name, new Blob([bytes]), path.basename(p));
  }
  for (const [k, v] of fields) form.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  return form;
}
