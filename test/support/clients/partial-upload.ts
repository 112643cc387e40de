/**
 * A multipart upload over a raw socket that can stop half way: the request line, the headers (with the full
 * Content-Length) and the first part of the body are sent, the rest only on `sendRest()`. For tests that kill the API
 * while an upload is in flight: the client's view is `outcome`, an HTTP answer or a connection error.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface FormFile {
  name: string;
  type: string;
  bytes: Buffer;
}

/** A multipart/form-data body of `fields` and one `file` part. */
export function multipartBody(
  fields: Record<string, string>,
  file: FormFile,
  field = 'file',
): { body: Buffer; contentType: string } {
  const boundary = `----chaos${Math.random().toString(36).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields))
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`,
    ),
    file.bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** How the request ended for the client: an HTTP answer, or the connection failing without one. */
export type UploadOutcome =
  { kind: 'answer'; status: number; head: string; body: string } | { kind: 'connection-error'; code: string };

export interface PartialUpload {
  /** Bytes of the body sent so far. */
  sent: number;
  total: number;
  /** Sends the rest of the body. */
  sendRest(): void;
  /** Sends bytes of the client's choosing (a trickle of the rest). */
  write(bytes: Buffer): void;
  outcome: Promise<UploadOutcome>;
  destroy(): void;
}

/**
 * POSTs `body` to `baseUrl` + `urlPath` on a fresh connection, sending only the first `fraction` of it; the rest
 * waits for `sendRest()`.
 */
export function partialUpload(
  baseUrl: string,
  urlPath: string,
  form: { body: Buffer; contentType: string },
  opts: { fraction?: number; headers?: Record<string, string> } = {},
): Promise<PartialUpload> {
  const u = new URL(baseUrl);
  const first = Math.floor(form.body.length * (opts.fraction ?? 0.5));
  const head =
    `POST ${urlPath} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: ${form.contentType}\r\n` +
    `Content-Length: ${form.body.length}\r\nConnection: close\r\n` +
    Object.entries(opts.headers ?? {})
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    '\r\n';
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: u.hostname, port: Number(u.port) });
    const chunks: Buffer[] = [];
    let failure: string | undefined;
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', (err: NodeJS.ErrnoException) => (failure ??= err.code ?? err.message));
    const outcome = new Promise<UploadOutcome>((done) =>
      socket.once('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
        if (!m) return done({ kind: 'connection-error', code: failure ?? 'closed without an answer' });
        const at = text.indexOf('\r\n\r\n');
        done({ kind: 'answer', status: Number(m[1]), head: text.slice(0, at), body: text.slice(at + 4) });
      }),
    );
    let connected = false;
    socket.once('connect', () => {
      connected = true;
      socket.write(head);
      socket.write(form.body.subarray(0, first), () =>
        resolve({
          sent: first,
          total: form.body.length,
          sendRest: () => void socket.write(form.body.subarray(first)),
          write: (bytes) => void socket.write(bytes),
          outcome,
          destroy: () => socket.destroy(),
        }),
      );
    });
    socket.once('error', (err) => {
      if (!connected) reject(err);
    });
  });
}

/** Files (with their sizes) under `dir`, recursively; [] when it does not exist. */
export function filesUnder(dir: string): { file: string; size: number }[] {
  if (!fs.existsSync(dir)) return [];
  const out: { file: string; size: number }[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const file = path.join(e.parentPath, e.name);
    try {
      out.push({ file, size: fs.statSync(file).size });
    } catch {
      // removed meanwhile
    }
  }
  return out;
}
