import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Koa from 'koa';
import pino from 'pino';
import { expect } from 'chai';
import type { BlobStore } from '../../core/stores/blob-store';
import { bodyParsers } from '../../api/middleware/body';
import { edgeMiddleware } from '../../api/middleware/error-envelope';
import { createRegistry, z } from '../../api/openapi';
import { ApiRouter } from '../../api/api-router';
import { storeUpload, uploadedFile } from '../../api/uploads';
import { LocalBlobStore } from '../../providers/storage';
import { S3BlobStore } from '../../providers/storage/s3.store';
import { sharedMinioServer, tempDir } from '../support/servers/engines';
import { holds } from '../support/wait';

const KB = 1024;
const MB = 1024 * KB;
const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
/** uploads/<date>/<job id><.ext>: generated (named after the job it may become the input of), never the client's name. */
const UPLOAD_KEY =
  /^uploads\/\d{4}-\d{2}-\d{2}\/job-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(\.[a-z0-9]{1,8})?$/;

interface UploadApp {
  url: string;
  port: number;
  store: BlobStore;
  uploadRoot: string;
  close(): Promise<void>;
}

/** The real edge middleware and ApiRouter with one multipart route that stores its file, on a real socket. */
async function startUploadApp(opts: { uploadBytes: number; store?: BlobStore }): Promise<UploadApp> {
  const dir = tempDir('docproc-uploads-');
  const uploadRoot = path.join(dir, 'tmp', 'uploads');
  fs.mkdirSync(uploadRoot, { recursive: true });
  const store = opts.store ?? (await new LocalBlobStore(path.join(dir, 'blobs')).init());
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

  const koa = new Koa({ proxy: false });
  koa.silent = true;
  const api = new ApiRouter(
    createRegistry(),
    bodyParsers({ jsonBytes: 64 * KB, uploadBytes: opts.uploadBytes, uploadRoot }),
  );
  api.add({
    method: 'post',
    path: '/upload',
    summary: 'Store one uploaded file',
    tags: ['test'],
    auth: false,
    body: z.object({ file: uploadedFile }),
    bodyTypes: ['multipart'],
    responses: { 200: { description: 'The stored blob' } },
    handler: async (ctx, { body }) => {
      ctx.body = { status: 'success', data: await storeUpload(store, body.file) };
    },
  });
  koa.use(edgeMiddleware(logger, 'test'));
  koa.use(api.router.routes());

  const handle = koa.callback();
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    store,
    uploadRoot,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Everything under a directory, recursively (relative paths). */
function contents(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true }).map(String);
}

async function readAll(s: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function form(fields: Record<string, string | { data: Buffer; name: string; type?: string }>): FormData {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) {
    if (typeof v === 'string') fd.append(k, v);
    else fd.append(k, new Blob([new Uint8Array(v.data)], { type: v.type ?? 'application/octet-stream' }), v.name);
  }
  return fd;
}

interface Envelope {
  status: string;
  data?: { key: string; sha256: string; size: number; mime: string; originalName: string };
  error?: { code: string; message: string; details: Record<string, unknown> };
}

/** A raw request whose body is written as given; resolves with the status and parsed JSON body. */
function rawPost(
  port: number,
  headers: Record<string, string | number>,
  body: Buffer,
): Promise<{ status: number; body: Envelope }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/upload', headers }, (res) => {
      readAll(res).then((b) => {
        try {
          resolve({ status: res.statusCode!, body: JSON.parse(b.toString('utf8')) as Envelope });
        } catch (e) {
          reject(new Error(`not JSON (${res.statusCode}): ${b.toString('utf8').slice(0, 200)}`, { cause: e }));
        }
      }, reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('uploads: multipart route with the real middleware and blob store', function () {
  this.timeout(60_000);

  describe('within the limit', () => {
    let app: UploadApp;
    before(async () => {
      app = await startUploadApp({ uploadBytes: 10 * MB });
    });
    after(async () => app?.close());

    it('stores the file under a generated uploads/ key with the matching sha256, whatever the client calls it', async () => {
      for (const [name, ext] of [
        ['../../etc/passwd', ''],
        ['ümlaut name.pdf', '.pdf'],
        ['..\\..\\windows\\system.ini', '.ini'],
        ['/abs/path/evil.sh', '.sh'],
      ] as const) {
        const data = randomBytes(200 * KB + 17);
        const res = await fetch(`${app.url}/upload`, {
          method: 'POST',
          body: form({ file: { data, name, type: 'application/pdf' } }),
        });
        const body = (await res.json()) as Envelope;
        expect(res.status, JSON.stringify(body)).to.equal(200);
        const ref = body.data!;
        expect(ref.key, name).to.match(UPLOAD_KEY);
        expect(ref.key.endsWith(ext) && (ext !== '' || !/\.[^/]*$/.test(ref.key.split('/').pop()!)), ref.key).to.equal(
          true,
        );
        for (const fragment of ['..', 'etc', 'passwd', 'ümlaut', 'name', 'windows', 'system', 'abs', 'evil', ' ']) {
          expect(ref.key, `${name} -> ${ref.key}`).to.not.include(fragment);
        }
        expect(ref).to.include({ sha256: sha256(data), size: data.length, mime: 'application/pdf' });
        // The client's name is kept only as data.
        expect(ref.originalName).to.be.a('string');

        const stored = await readAll(await app.store.get(ref.key));
        expect(sha256(stored)).to.equal(sha256(data));
        expect(await app.store.stat(ref.key)).to.include({ sha256: sha256(data), size: data.length });
        // The per-request directory is gone by the time the response is sent.
        expect(contents(app.uploadRoot), `uploadRoot after ${name}`).to.deep.equal([]);
      }
      const keys = (await app.store.list('uploads/')).map((s) => s.key);
      expect(keys).to.have.length(4);
      expect(new Set(keys).size).to.equal(4);
    });

    it('keeps the UTF-8 client file name as data only', async () => {
      const data = Buffer.from('%PDF-1.4 tiny');
      const res = await fetch(`${app.url}/upload`, {
        method: 'POST',
        body: form({ file: { data, name: 'ümlaut name.pdf' } }),
      });
      const body = (await res.json()) as Envelope;
      expect(res.status).to.equal(200);
      expect(body.data!.originalName).to.equal('ümlaut name.pdf');
      expect(body.data!.key)
        .to.match(/\.pdf$/)
        .and.match(UPLOAD_KEY);
    });

    it('stores an empty file', async () => {
      const res = await fetch(`${app.url}/upload`, {
        method: 'POST',
        body: form({ file: { data: Buffer.alloc(0), name: 'empty.txt' } }),
      });
      const body = (await res.json()) as Envelope;
      expect(res.status, JSON.stringify(body)).to.equal(200);
      expect(body.data).to.include({ size: 0, sha256: sha256('') });
      expect(contents(app.uploadRoot)).to.deep.equal([]);
    });

    it('a multipart body without the file field is a 400 VALIDATION_ERROR and leaves nothing behind', async () => {
      const res = await fetch(`${app.url}/upload`, {
        method: 'POST',
        body: form({ note: 'no file here', other: 'x' }),
      });
      const body = (await res.json()) as Envelope;
      expect(res.status).to.equal(400);
      expect(body.status).to.equal('error');
      expect(body.error!.code).to.equal('VALIDATION_ERROR');
      const issues = body.error!.details.issues as { path: string }[];
      expect(issues.map((i) => i.path)).to.include('file');
      expect(contents(app.uploadRoot)).to.deep.equal([]);

      // The file under another field name is not the file either, and its temp file is removed too.
      const res2 = await fetch(`${app.url}/upload`, {
        method: 'POST',
        body: form({ document: { data: randomBytes(50 * KB), name: 'a.pdf' } }),
      });
      expect(res2.status).to.equal(400);
      expect(((await res2.json()) as Envelope).error!.code).to.equal('VALIDATION_ERROR');
      expect(contents(app.uploadRoot)).to.deep.equal([]);
    });

    it('JSON sent to the multipart-only route is a 415 UNSUPPORTED_MEDIA_TYPE', async () => {
      const res = await fetch(`${app.url}/upload`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ file: { filepath: '/etc/passwd' } }),
      });
      const body = (await res.json()) as Envelope;
      expect(res.status).to.equal(415);
      expect(body).to.deep.include({ status: 'error' });
      expect(body.error!.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
      expect(body.error!.details.accepted).to.deep.equal(['multipart/form-data']);
      expect(contents(app.uploadRoot)).to.deep.equal([]);
      // A body-less POST is not JSON either.
      const empty = await fetch(`${app.url}/upload`, { method: 'POST' });
      expect(empty.status).to.equal(415);
    });

    it('a malformed multipart body is a 400 envelope, not a 500', async () => {
      const part = Buffer.from(
        '--realboundary\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n' +
          'hello\r\n--realboundary--\r\n',
      );
      const cases: { label: string; type: string; body: Buffer }[] = [
        {
          label: 'boundary in header differs from body',
          type: 'multipart/form-data; boundary=otherboundary',
          body: part,
        },
        { label: 'no boundary parameter', type: 'multipart/form-data', body: part },
        {
          label: 'truncated body (no closing boundary)',
          type: 'multipart/form-data; boundary=realboundary',
          body: part.subarray(0, part.indexOf('hello') + 3),
        },
        { label: 'garbage body', type: 'multipart/form-data; boundary=realboundary', body: randomBytes(4 * KB) },
      ];
      for (const c of cases) {
        const res = await rawPost(app.port, { 'Content-Type': c.type, 'Content-Length': c.body.length }, c.body);
        expect(res.status, `${c.label}: ${JSON.stringify(res.body)}`).to.equal(400);
        expect(res.body.status, c.label).to.equal('error');
        expect(res.body.error!.code, c.label).to.equal('VALIDATION_ERROR');
        expect(contents(app.uploadRoot), c.label).to.deep.equal([]);
      }
    });

    it('a client that aborts mid-upload leaves the upload root empty', async () => {
      const storedBefore = (await app.store.list('uploads/')).length;
      const boundary = 'abortboundary' + randomBytes(8).toString('hex');
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      );
      const declared = 8 * MB;
      const req = http.request({
        host: '127.0.0.1',
        port: app.port,
        method: 'POST',
        path: '/upload',
        headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': declared },
      });
      req.on('error', () => undefined);
      req.write(head);
      // Enough bytes that the server has created its per-request directory and temp file.
      for (let i = 0; i < 8; i++) req.write(randomBytes(64 * KB));
      const started = await holds(() => contents(app.uploadRoot).some((p) => p.includes(path.sep)), 5000, 20);
      expect(started, 'the server never started writing the upload').to.equal(true);
      req.destroy();
      const clean = await holds(() => contents(app.uploadRoot).length === 0, 2000, 20);
      expect(clean, `left behind: ${contents(app.uploadRoot).join(', ')}`).to.equal(true);
      expect((await app.store.list('uploads/')).length, 'an aborted upload is not stored').to.equal(storedBefore);
    });

    it('many concurrent uploads all land and leave nothing behind', async () => {
      const files = Array.from({ length: 12 }, (_, i) => randomBytes(30 * KB + i));
      const refs = await Promise.all(
        files.map(async (data, i) => {
          const res = await fetch(`${app.url}/upload`, {
            method: 'POST',
            body: form({ file: { data, name: `f${i}.bin` } }),
          });
          expect(res.status).to.equal(200);
          return ((await res.json()) as Envelope).data!;
        }),
      );
      refs.forEach((r, i) => expect(r.sha256).to.equal(sha256(files[i]!)));
      expect(new Set(refs.map((r) => r.key)).size).to.equal(files.length);
      expect(contents(app.uploadRoot)).to.deep.equal([]);
    });
  });

  describe('over the limit', () => {
    let app: UploadApp;
    before(async () => {
      app = await startUploadApp({ uploadBytes: 64 * KB });
    });
    after(async () => app?.close());

    it('an oversized upload is a 413 PAYLOAD_TOO_LARGE with limit_bytes, and leaves nothing behind', async () => {
      const before = (await app.store.list('uploads/')).length;
      const res = await fetch(`${app.url}/upload`, {
        method: 'POST',
        body: form({ file: { data: randomBytes(1 * MB), name: 'big.pdf' } }),
      });
      const body = (await res.json()) as Envelope;
      expect(res.status, JSON.stringify(body)).to.equal(413);
      expect(body.status).to.equal('error');
      expect(body.error!.code).to.equal('PAYLOAD_TOO_LARGE');
      expect(body.error!.details.limit_bytes).to.equal(64 * KB);
      const clean = await holds(() => contents(app.uploadRoot).length === 0, 2000, 20);
      expect(clean, `left behind: ${contents(app.uploadRoot).join(', ')}`).to.equal(true);
      expect((await app.store.list('uploads/')).length).to.equal(before);
    });

    it('an upload just under the limit is accepted', async () => {
      const data = randomBytes(60 * KB);
      const res = await fetch(`${app.url}/upload`, { method: 'POST', body: form({ file: { data, name: 'ok.bin' } }) });
      expect(res.status).to.equal(200);
      expect(((await res.json()) as Envelope).data!.sha256).to.equal(sha256(data));
      expect(contents(app.uploadRoot)).to.deep.equal([]);
    });
  });

  describe('into an S3 store (real MinIO)', () => {
    let app: UploadApp;
    before(async () => {
      const minio = await sharedMinioServer();
      const store = await new S3BlobStore({
        endpoint: minio.endpoint,
        accessKey: minio.accessKey,
        secretKey: minio.secretKey,
        bucket: `docproc-test-${randomBytes(6).toString('hex')}`,
      }).init();
      app = await startUploadApp({ uploadBytes: 32 * MB, store });
    });
    after(async () => app?.close());

    it('streams the upload from its temp file into the bucket', async () => {
      const data = randomBytes(9 * MB + 3);
      const res = await fetch(`${app.url}/upload`, {
        method: 'POST',
        body: form({ file: { data, name: '../../etc/passwd', type: 'video/mp4' } }),
      });
      const body = (await res.json()) as Envelope;
      expect(res.status, JSON.stringify(body)).to.equal(200);
      expect(body.data!.key).to.match(UPLOAD_KEY);
      expect(body.data).to.include({ sha256: sha256(data), size: data.length, mime: 'video/mp4' });
      expect(await app.store.stat(body.data!.key)).to.include({
        sha256: sha256(data),
        size: data.length,
        mime: 'video/mp4',
      });
      expect(contents(app.uploadRoot)).to.deep.equal([]);
    });
  });
});
