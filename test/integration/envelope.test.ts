import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { readFileSync, rmSync } from 'node:fs';
import Koa from 'koa';
import pino from 'pino';
import { expect } from 'chai';
import { bodyParsers } from '../../api/middleware/body';
import { edgeMiddleware } from '../../api/middleware/error-envelope';
import { createRegistry, z } from '../../api/openapi';
import { ApiRouter } from '../../api/api-router';
import { loadConfig } from '../../core/config/config';
import { AppError } from '../../core/errors';
import { startTestApi, type TestApi } from '../support/servers/api';
import { rawRequest, type RawReply } from '../support/clients/raw-http';
import { tempDir } from '../support/servers/engines';
import { noLlmUnlessAsked } from '../support/servers/llm-default';

const VERSION: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SECRET = 'db-password-hunter2';

type Reply = RawReply;
const send = rawRequest;

function expectError(r: Reply, status: number, code: string): any {
  expect(r.status, r.text).to.equal(status);
  expect(r.headers['content-type']).to.match(/^application\/json/);
  const body = r.json();
  expect(body.status).to.equal('error');
  expect(body.error.code).to.equal(code);
  expect(body.error.message).to.be.a('string').and.not.equal('');
  expect(body.error.details).to.be.an('object');
  return body;
}

function expectStandardHeaders(r: Reply, what: string): void {
  expect(r.headers['x-request-id'], what).to.be.a('string').and.not.equal('');
  expect(r.headers['x-service-version'], what).to.equal(VERSION);
}

/**
 * A small app built from the real machinery (ApiRouter, bodyParsers, edgeMiddleware) in the same order as
 * createApp, with routes that take a body: the service itself has none yet.
 */
async function startBodyApp(env: Record<string, string>): Promise<{ url: string; close: () => Promise<void> }> {
  const config = loadConfig(noLlmUnlessAsked({ LOG_LEVEL: 'silent', ...env, DATA_DIR: tempDir('docproc-envelope-') }));
  const api = new ApiRouter(
    createRegistry(),
    bodyParsers({
      jsonBytes: config.MAX_JSON_MB * 1024 * 1024,
      uploadBytes: config.MAX_UPLOAD_MB * 1024 * 1024,
      uploadRoot: path.join(config.dataDir, 'tmp', 'uploads'),
    }),
  );
  const item = z.object({
    name: z.string().min(1),
    nested: z.object({ n: z.number().int() }).optional(),
    tags: z.array(z.string()).optional(),
    blob: z.string().optional(),
  });
  api.add({
    method: 'post',
    path: '/t/items',
    summary: 'Echo an item',
    tags: ['Test'],
    body: item,
    responses: { 200: { description: 'ok' } },
    handler: (ctx, { body }) => {
      ctx.body = { status: 'success', data: { name: body.name, tags: body.tags ?? [], size: body.blob?.length ?? 0 } };
    },
  });
  api.add({
    method: 'post',
    path: '/t/upload',
    summary: 'Multipart only',
    tags: ['Test'],
    body: z.object({ note: z.string().optional() }),
    bodyTypes: ['multipart'],
    responses: { 200: { description: 'ok' } },
    handler: (ctx) => {
      ctx.body = { status: 'success', data: {} };
    },
  });
  api.add({
    method: 'get',
    path: '/t/items/{item_id}',
    summary: 'Validated params and query',
    tags: ['Test'],
    params: z.object({ item_id: z.string().regex(/^item-\d+$/) }),
    query: z.object({ limit: z.coerce.number().int().max(100).optional() }),
    responses: { 200: { description: 'ok' } },
    handler: (ctx, { params, query }) => {
      ctx.body = { status: 'success', data: { id: params.item_id, limit: query.limit ?? null } };
    },
  });
  api.add({
    method: 'get',
    path: '/t/boom',
    summary: 'Throws a plain Error',
    tags: ['Test'],
    responses: { 200: { description: 'never' } },
    handler: (ctx) => {
      ctx.set('Content-Disposition', 'attachment; filename="x.bin"');
      throw new Error(`connection to postgres://admin:${SECRET}@10.0.0.5/db failed`);
    },
  });
  api.add({
    method: 'get',
    path: '/t/gone',
    summary: 'Throws an AppError',
    tags: ['Test'],
    responses: { 200: { description: 'never' } },
    handler: () => {
      throw new AppError('TEMPLATE_NOT_FOUND', 'No template named gone.', { name: 'gone' });
    },
  });
  const koa = new Koa({ proxy: false });
  koa.silent = true;
  koa.use(edgeMiddleware(pino({ level: 'silent' }), VERSION));
  koa.use(api.router.routes());
  koa.use(api.router.allowedMethods());
  const handle = koa.callback();
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(config.dataDir, { recursive: true, force: true });
    },
  };
}

describe('Response envelope and request handling (contract §1)', function () {
  this.timeout(30_000);

  describe('on the service', () => {
    let api: TestApi;
    before(async () => {
      api = await startTestApi({});
    });
    after(() => api?.close());

    it('puts X-Request-Id and X-Service-Version (the package version) on every response', async () => {
      const replies: [string, Reply][] = [
        ['200 json', await send(api.url, '/api/health/live')],
        ['200 html', await send(api.url, '/api/doc')],
        ['200 asset stream', await send(api.url, '/api/doc/swagger-ui.css')],
        ['200 openapi', await send(api.url, '/api/openapi.json')],
        ['404', await send(api.url, '/api/nope')],
        ['405', await send(api.url, '/api/health/live', { method: 'DELETE' })],
      ];
      for (const [what, r] of replies) expectStandardHeaders(r, what);
    });

    it('generates a fresh UUID request id when the client sends none', async () => {
      const a = await send(api.url, '/api/health/live');
      const b = await send(api.url, '/api/health/live');
      expect(a.headers['x-request-id']).to.match(UUID);
      expect(b.headers['x-request-id']).to.match(UUID);
      expect(a.headers['x-request-id']).to.not.equal(b.headers['x-request-id']);
    });

    it('echoes a sane client X-Request-Id', async () => {
      for (const id of ['abc-123', 'req_1.2:3-x', 'A'.repeat(128), '3f2b8a1e-0c4d-4e5f-9a6b-7c8d9e0f1a2b']) {
        const r = await send(api.url, '/api/health/live', { headers: { 'X-Request-Id': id } });
        expect(r.headers['x-request-id']).to.equal(id);
      }
    });

    it('echoes the client id on error responses too', async () => {
      const r = await send(api.url, '/api/nope', { headers: { 'X-Request-Id': 'trace-404' } });
      expect(r.status).to.equal(404);
      expect(r.headers['x-request-id']).to.equal('trace-404');
    });

    it('replaces an insane client X-Request-Id (too long, spaces, punctuation) with its own', async () => {
      for (const id of [
        'x'.repeat(129),
        'y'.repeat(300),
        'has spaces in it',
        'semi;colon',
        '<script>',
        'a/b',
        '"quoted"',
      ]) {
        const r = await send(api.url, '/api/health/live', { headers: { 'X-Request-Id': id } });
        expect(r.headers['x-request-id'], id).to.not.equal(id);
        expect(r.headers['x-request-id'], id).to.match(UUID);
      }
    });

    it('answers an unknown route with a 404 NOT_FOUND envelope', async () => {
      for (const p of ['/api/nope', '/', '/api/common/extra', '/api/health/live/deeper']) {
        expectError(await send(api.url, p), 404, 'NOT_FOUND');
      }
    });

    it('answers a wrong method with a 405 envelope and an Allow header', async () => {
      for (const [method, p] of [
        ['DELETE', '/api/health/live'],
        ['POST', '/api/common/'],
        ['PUT', '/api/openapi.json'],
      ]) {
        const r = await send(api.url, p, { method });
        const body = expectError(r, 405, 'METHOD_NOT_ALLOWED');
        expect(body.error.details).to.deep.equal({});
        expect(r.headers.allow, `${method} ${p}`).to.match(/\bGET\b/);
      }
    });

    it('answers a method no route uses (PROPFIND, TRACE) with a 405 envelope on a known path, not a 500', async () => {
      for (const method of ['PROPFIND', 'TRACE']) {
        const r = await send(api.url, '/api/health/live', { method });
        expectError(r, 405, 'METHOD_NOT_ALLOWED');
        expect(r.headers.allow, method).to.match(/\bGET\b/);
      }
    });

    it('answers any method on an unknown path with a 404 envelope and no Allow header', async () => {
      for (const method of ['GET', 'DELETE', 'PROPFIND']) {
        const r = await send(api.url, '/api/nope', { method });
        expectError(r, 404, 'NOT_FOUND');
        expect(r.headers.allow, method).to.equal(undefined);
      }
    });

    it('answers a wrong method with 405 even when a body is sent', async () => {
      const r = await send(api.url, '/api/common/', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{bad',
      });
      expectError(r, 405, 'METHOD_NOT_ALLOWED');
    });
  });

  describe('on routes that take a body (real ApiRouter, bodyParsers and edgeMiddleware), MAX_JSON_MB=1', () => {
    let app: { url: string; close: () => Promise<void> };
    before(async () => {
      app = await startBodyApp({ MAX_JSON_MB: '1' });
    });
    after(() => app?.close());

    const json = { 'Content-Type': 'application/json' };

    it('accepts a valid JSON body', async () => {
      const r = await send(app.url, '/t/items', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ name: 'a', tags: ['x'] }),
      });
      expect(r.status, r.text).to.equal(200);
      expect(r.json()).to.deep.equal({ status: 'success', data: { name: 'a', tags: ['x'], size: 0 } });
      expectStandardHeaders(r, 'body route');
    });

    it('accepts application/json with a charset parameter', async () => {
      const r = await send(app.url, '/t/items', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ name: 'é' }),
      });
      expect(r.status, r.text).to.equal(200);
      expect(r.json().data.name).to.equal('é');
    });

    it('answers malformed JSON with 400 VALIDATION_ERROR', async () => {
      for (const body of ['{"name": "a",', '{name: a}', "{'name':'a'}", '{"name":"a"}}']) {
        const r = await send(app.url, '/t/items', { method: 'POST', headers: json, body });
        const b = expectError(r, 400, 'VALIDATION_ERROR');
        expect(b.error.details.issues, body).to.be.an('array').that.is.not.empty;
        expectStandardHeaders(r, 'malformed');
      }
    });

    it('answers a JSON scalar (not an object or array) with 400 VALIDATION_ERROR', async () => {
      for (const body of ['"just a string"', '42', 'null', 'true']) {
        expectError(await send(app.url, '/t/items', { method: 'POST', headers: json, body }), 400, 'VALIDATION_ERROR');
      }
    });

    it('answers a JSON body over MAX_JSON_MB with 413 PAYLOAD_TOO_LARGE and the limit in details', async () => {
      const body = JSON.stringify({ name: 'big', blob: 'x'.repeat(1.5 * 1024 * 1024) });
      const r = await send(app.url, '/t/items', { method: 'POST', headers: json, body });
      const b = expectError(r, 413, 'PAYLOAD_TOO_LARGE');
      expect(b.error.details.limit_bytes).to.equal(1024 * 1024);
      expectStandardHeaders(r, '413');
    });

    it('answers a chunked JSON body over MAX_JSON_MB (no Content-Length) with 413', async () => {
      const body = JSON.stringify({ name: 'big', blob: 'x'.repeat(1.5 * 1024 * 1024) });
      const r = await send(app.url, '/t/items', { method: 'POST', headers: json, body, chunked: true });
      expectError(r, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('accepts a JSON body just under MAX_JSON_MB', async () => {
      const body = JSON.stringify({ name: 'fits', blob: 'x'.repeat(1024 * 1024 - 100) });
      const r = await send(app.url, '/t/items', { method: 'POST', headers: json, body });
      expect(r.status, r.text.slice(0, 300)).to.equal(200);
      expect(r.json().data.size).to.equal(1024 * 1024 - 100);
    });

    it('answers text/plain sent to a JSON route with 415 UNSUPPORTED_MEDIA_TYPE naming what it accepts', async () => {
      const r = await send(app.url, '/t/items', {
        method: 'POST',
        headers: { 'Content-Type': 'text/plain' },
        body: '{"name":"a"}',
      });
      const b = expectError(r, 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(b.error.details.accepted).to.deep.equal(['application/json']);
      expectStandardHeaders(r, '415');
    });

    it('answers a body without a Content-Type with 415', async () => {
      const r = await send(app.url, '/t/items', { method: 'POST', body: '{"name":"a"}' });
      expectError(r, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('answers multipart sent to a JSON route, and JSON sent to a multipart route, with 415', async () => {
      const boundary = 'XyZ123';
      const multipartBody = `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\na\r\n--${boundary}--\r\n`;
      const a = await send(app.url, '/t/items', {
        method: 'POST',
        headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
        body: multipartBody,
      });
      expectError(a, 415, 'UNSUPPORTED_MEDIA_TYPE');
      const b = await send(app.url, '/t/upload', { method: 'POST', headers: json, body: '{"note":"x"}' });
      const body = expectError(b, 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(body.error.details.accepted).to.deep.equal(['multipart/form-data']);
    });

    it('answers a zod validation failure with 400 and details.issues listing each path', async () => {
      const r = await send(app.url, '/t/items', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ nested: { n: 1.5 }, tags: ['ok', 7] }),
      });
      const b = expectError(r, 400, 'VALIDATION_ERROR');
      const issues = b.error.details.issues as { path: string; message: string }[];
      expect(issues.map((i) => i.path)).to.have.members(['name', 'nested.n', 'tags.1']);
      for (const i of issues) expect(i.message).to.be.a('string').and.not.equal('');
    });

    it('treats a POST without a body as an empty object and reports the missing fields', async () => {
      const r = await send(app.url, '/t/items', { method: 'POST' });
      const b = expectError(r, 400, 'VALIDATION_ERROR');
      expect(b.error.details.issues.map((i: { path: string }) => i.path)).to.deep.equal(['name']);
    });

    it('validates path parameters and the query string with the same envelope', async () => {
      const p = expectError(await send(app.url, '/t/items/nope'), 400, 'VALIDATION_ERROR');
      expect(p.error.details.issues.map((i: { path: string }) => i.path)).to.deep.equal(['item_id']);
      const q = expectError(await send(app.url, '/t/items/item-1?limit=1000'), 400, 'VALIDATION_ERROR');
      expect(q.error.details.issues.map((i: { path: string }) => i.path)).to.deep.equal(['limit']);
      const ok = await send(app.url, '/t/items/item-1?limit=10');
      expect(ok.status).to.equal(200);
      expect(ok.json().data).to.deep.equal({ id: 'item-1', limit: 10 });
    });

    it('answers a plain Error thrown in a handler with 500 INTERNAL_ERROR and no message text or stack', async () => {
      const r = await send(app.url, '/t/boom', { headers: { 'X-Request-Id': 'trace-500' } });
      const b = expectError(r, 500, 'INTERNAL_ERROR');
      expect(r.text).to.not.contain(SECRET);
      expect(r.text).to.not.contain('postgres');
      expect(r.text).to.not.contain('10.0.0.5');
      expect(r.text).to.not.match(/\bat .*\.(ts|js):\d+/);
      expect(r.text).to.not.contain('envelope.test');
      expect(b.error.details).to.deep.equal({});
      expect(r.headers['x-request-id']).to.equal('trace-500');
      expect(r.headers['x-service-version']).to.equal(VERSION);
      expect(r.headers['content-disposition'], 'headers set before the error are dropped').to.equal(undefined);
    });

    it('passes an AppError thrown in a handler through with its code, message and details', async () => {
      const b = expectError(await send(app.url, '/t/gone'), 404, 'TEMPLATE_NOT_FOUND');
      expect(b.error).to.deep.equal({
        code: 'TEMPLATE_NOT_FOUND',
        message: 'No template named gone.',
        details: { name: 'gone' },
      });
    });

    it('answers a wrong method on a body route with 405', async () => {
      const r = await send(app.url, '/t/items', { method: 'GET' });
      expectError(r, 405, 'METHOD_NOT_ALLOWED');
      expect(r.headers.allow).to.match(/\bPOST\b/);
    });
  });
});
