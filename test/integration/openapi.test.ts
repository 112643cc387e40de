import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestApi, type TestApi } from '../support/servers/api';
import { responseChecker } from '../support/clients/openapi-schemas';

const VERSION: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
const KEY = 'openapi-test-key-0123456789abcdef';
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

/** Exempt operations of contract §2 that the document shows (the docs UI assets are hidden). */
const EXEMPT_OPERATIONS = ['GET /api/health', 'GET /api/health/live', 'GET /api/doc', 'GET /api/openapi.json'];

interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
  parameters?: { name: string; in: string }[];
}
type Doc = {
  openapi: string;
  info: { version: string; title: string };
  security?: Record<string, string[]>[];
  components: { securitySchemes: Record<string, Record<string, unknown>>; schemas?: Record<string, unknown> };
  paths: Record<string, Partial<Record<(typeof METHODS)[number], Operation>>>;
};

type Schema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: unknown;
} & Record<string, unknown>;

/**
 * Why a documented answer schema says nothing (empty, or an object open to anything), or null when it says something.
 */
function vacuous(doc: Doc, schema: Schema | undefined, where: string): string | null {
  if (!schema) return `${where}: no schema`;
  if (schema.$ref)
    schema = schema.$ref
      .slice(2)
      .split('/')
      .reduce<any>((n, k) => n?.[k], doc) as Schema;
  if (Object.keys(schema).length === 0) return `${where}: empty schema`;
  if (schema.type === 'object' && Object.keys(schema.properties ?? {}).length === 0)
    return `${where}: an object with no properties`;
  // The success envelope: its `data` must say something too.
  if (schema.properties?.status && schema.properties.data) return vacuous(doc, schema.properties.data, `${where}.data`);
  return null;
}

const toOpenApiPath = (koaPath: string) =>
  koaPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\{\*([A-Za-z0-9_]+)\}/g, '{$1}');
const isHiddenAsset = (p: string) => p.startsWith('/api/doc/');

function operations(doc: Doc): { key: string; path: string; method: string; op: Operation }[] {
  const out: { key: string; path: string; method: string; op: Operation }[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const m of METHODS) {
      const op = item[m];
      if (op) out.push({ key: `${m.toUpperCase()} ${p}`, path: p, method: m.toUpperCase(), op });
    }
  }
  return out;
}

describe('OpenAPI document (GET /api/openapi.json)', function () {
  this.timeout(30_000);
  let api: TestApi;
  let doc: Doc;
  let contentType: string | null;

  before(async () => {
    api = await startTestApi({ SERVICE_API_KEY: KEY, ALLOW_LOCALHOST_NO_AUTH: 'false' });
    const res = await fetch(`${api.url}/api/openapi.json`);
    expect(res.status).to.equal(200);
    contentType = res.headers.get('content-type');
    doc = (await res.json()) as Doc;
  });
  after(() => api?.close());

  it('is served as JSON without a key', () => {
    expect(contentType).to.match(/^application\/json/);
  });

  it('validates against the OpenAPI 3.1 schema', async () => {
    const validator = new Validator();
    const res = await validator.validate(structuredClone(doc) as Record<string, unknown>);
    expect(res.errors, JSON.stringify(res.errors, null, 2)).to.satisfy(
      (e: unknown) => e === undefined || (Array.isArray(e) && e.length === 0),
    );
    expect(res.valid).to.equal(true);
    expect(validator.version).to.match(/^3\.1/);
  });

  it('has only resolvable $refs', async () => {
    const validator = new Validator();
    await validator.validate(structuredClone(doc) as Record<string, unknown>);
    expect(() => validator.resolveRefs()).to.not.throw();
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    for (const ref of refs) {
      const target = JSON.parse(`{${ref}}`).$ref as string;
      expect(target, ref).to.match(/^#\//);
      let node: unknown = doc;
      for (const part of target.slice(2).split('/'))
        node = (node as Record<string, unknown>)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
      expect(node, target).to.be.an('object');
    }
  });

  it('declares version 3.1 in its openapi field', () => {
    expect(doc.openapi).to.match(/^3\.1\./);
  });

  it('carries the package version in info.version', () => {
    expect(doc.info.version).to.equal(VERSION);
  });

  it('is the same document the app generates in process', () => {
    expect(doc).to.deep.equal(JSON.parse(JSON.stringify(api.app.openapi())));
  });

  it('declares the ApiKeyHeader (X-Service-Api-Key) and BearerAuth security schemes', () => {
    const schemes = doc.components.securitySchemes;
    expect(schemes.ApiKeyHeader).to.include({ type: 'apiKey', in: 'header', name: 'X-Service-Api-Key' });
    expect(schemes.BearerAuth).to.include({ type: 'http', scheme: 'bearer' });
  });

  it('requires either scheme by default at the top level', () => {
    expect(doc.security).to.deep.include({ ApiKeyHeader: [] });
    expect(doc.security).to.deep.include({ BearerAuth: [] });
  });

  it('documents every route the app registers, with its method (docs UI assets excepted)', () => {
    const routes = api.app.routes.filter((r) => !isHiddenAsset(r.path));
    expect(routes.length).to.be.greaterThan(0);
    const documented = new Set(operations(doc).map((o) => o.key));
    const missing = routes.map((r) => `${r.method} ${toOpenApiPath(r.path)}`).filter((k) => !documented.has(k));
    expect(missing, 'routes missing from the document').to.deep.equal([]);
  });

  it('documents only routes the app registers', () => {
    const registered = new Set(api.app.routes.map((r) => `${r.method} ${toOpenApiPath(r.path)}`));
    const extra = operations(doc)
      .map((o) => o.key)
      .filter((k) => !registered.has(k));
    expect(extra, 'operations with no route').to.deep.equal([]);
  });

  it('hides the docs UI assets', () => {
    expect(Object.keys(doc.paths).filter(isHiddenAsset)).to.deep.equal([]);
    expect(doc.paths['/api/doc']?.get, '/api/doc itself is documented').to.be.an('object');
  });

  it('gives every operation a unique operationId', () => {
    const ids = operations(doc).map((o) => o.op.operationId);
    for (const id of ids) expect(id).to.be.a('string').and.not.equal('');
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('marks exactly the exempt operations with security: []', () => {
    for (const { key, op } of operations(doc)) {
      if (EXEMPT_OPERATIONS.includes(key)) expect(op.security, key).to.deep.equal([]);
      else expect(op.security === undefined || op.security.length > 0, `${key} must require a key`).to.equal(true);
    }
    for (const key of EXEMPT_OPERATIONS)
      expect(
        operations(doc).some((o) => o.key === key),
        key,
      ).to.equal(true);
  });

  it('documents a 401 on every operation that needs a key and a 500 on every operation', () => {
    for (const { key, op } of operations(doc)) {
      expect(op.responses, key).to.have.property('500');
      if (!EXEMPT_OPERATIONS.includes(key)) expect(op.responses, key).to.have.property('401');
    }
  });

  it('documents 413 and 415 (the error envelope) on every operation that takes a body, and only there', () => {
    const withBody = operations(doc).filter((o) => (o.op as { requestBody?: unknown }).requestBody);
    expect(withBody.length).to.be.greaterThan(10);
    for (const { key, op } of operations(doc)) {
      const takesBody = withBody.some((o) => o.key === key);
      for (const status of ['413', '415']) {
        const res = op.responses?.[status];
        if (!takesBody) expect(res, `${key} ${status}`).to.equal(undefined);
        else
          expect(res?.content?.['application/json']?.schema?.$ref, `${key} ${status}`).to.equal(
            '#/components/schemas/Error',
          );
      }
    }
  });

  it('the 413 and 415 answers of a JSON and a multipart operation validate against the document', async () => {
    const check = responseChecker(doc as unknown as Record<string, unknown>);
    const key = { 'X-Service-Api-Key': KEY };
    const big = 'x'.repeat(api.config.MAX_JSON_MB * 1024 * 1024 + 1);
    const cases: [string, RequestInit, number][] = [
      [
        '/api/transformer/html-to-markdown',
        { body: JSON.stringify({ html: big }), headers: { ...key, 'Content-Type': 'application/json' } },
        413,
      ],
      ['/api/transformer/html-to-markdown', { body: 'html=x', headers: { ...key, 'Content-Type': 'text/plain' } }, 415],
      [
        '/api/transformer/html-to-markdown',
        { body: '{}', headers: { ...key, 'Content-Type': 'application/json', 'Content-Encoding': 'zstd' } },
        415,
      ],
      ['/api/pdf/process', { body: '{}', headers: { ...key, 'Content-Type': 'application/json' } }, 415],
    ];
    const fields = new FormData();
    for (let i = 0; i < 201; i++) fields.append(`f${i}`, 'x');
    cases.push(['/api/pdf/process', { body: fields, headers: key }, 413]);
    for (const [path, init, status] of cases) {
      const res = await fetch(api.url + path, { method: 'POST', ...init });
      expect(res.status, path).to.equal(status);
      expect(check('POST', path, status, await res.json()), `${path} ${status}`).to.deep.equal([]);
    }
  });

  it('gives every 2xx answer of every operation a schema, binary downloads their media type', () => {
    const problems: string[] = [];
    for (const { key, op } of operations(doc)) {
      for (const [status, res] of Object.entries(op.responses ?? {})) {
        if (!/^2/.test(status)) continue;
        const content = Object.entries(res.content ?? {});
        if (content.length === 0) problems.push(`${key} ${status}: no content`);
        for (const [type, media] of content) {
          if (type.includes('*')) problems.push(`${key} ${status}: media range ${type} instead of a media type`);
          else if (/json|event-stream/.test(type)) {
            // JSON, or an event stream whose schema describes each event (OpenAPI 3.1 has no itemSchema).
            const why = vacuous(doc, media.schema, `${key} ${status} ${type}`);
            if (why) problems.push(why);
          } else if (media.schema?.type !== 'string')
            problems.push(`${key} ${status} ${type}: not a string (binary or text) schema`);
        }
      }
    }
    expect(problems).to.deep.equal([]);
  });

  it('documents both answers of GET /api/health: the whole report with the key, the status alone without it', () => {
    for (const code of ['200', '503']) {
      const schema = (doc.paths['/api/health'].get!.responses as Record<string, any>)[code].content['application/json']
        .schema as { anyOf?: { $ref?: string }[]; oneOf?: { $ref?: string }[] };
      const refs = (schema.anyOf ?? schema.oneOf ?? []).map((s) => s.$ref);
      expect(refs, code).to.have.members(['#/components/schemas/Health', '#/components/schemas/HealthStatus']);
    }
    const alone = (doc.components as { schemas: Record<string, any> }).schemas.HealthStatus;
    expect(Object.keys(alone.properties)).to.deep.equal(['status']);
    expect(alone.additionalProperties).to.equal(false);
  });

  it('documents that the path of GET /api/event-job/files/{path} may contain slashes', () => {
    const param = doc.paths['/api/event-job/files/{path}']?.get?.parameters?.find((p) => p.name === 'path') as
      { in: string; description?: string } | undefined;
    expect(param?.in).to.equal('path');
    expect(param?.description).to.match(/may contain slashes/);
  });

  it('documents schemas that the real answers validate against', async () => {
    const check = responseChecker(doc as unknown as Record<string, unknown>);
    const key = { 'X-Service-Api-Key': KEY };
    const templates = await (await fetch(`${api.url}/api/transformer/templates`, { headers: key })).json();
    const name = templates.data.templates[0].name as string;
    const cases: [string, string, number, string?][] = [
      ['/api/common/', '/api/common/', 200],
      ['/api/common/samples', '/api/common/samples', 200],
      ['/api/transformer/templates', '/api/transformer/templates', 200],
      ['/api/transformer/templates/{name}', `/api/transformer/templates/${encodeURIComponent(name)}`, 200],
      ['/api/transformer/templates/{name}', '/api/transformer/templates/NoSuchTemplate', 404],
      ['/api/health/live', '/api/health/live', 200],
      ['/api/health', '/api/health', 503],
      ['/api/openapi.json', '/api/openapi.json', 200],
      ['/api/event-job/files/{path}', '/api/event-job/files/records/jobs/x.json', 403],
      ['/api/jobs/', '/api/jobs/', 401, 'POST'],
    ];
    for (const [path, url, status, method = 'GET'] of cases) {
      const res = await fetch(api.url + url, { method, headers: status === 401 ? {} : key });
      expect(res.status, url).to.equal(status);
      expect(check(method, path, status, await res.json()), `${method} ${url}`).to.deep.equal([]);
    }
    // Health without the key: the status alone (contract §11), one of the two documented shapes.
    const anonymous = await fetch(`${api.url}/api/health`);
    const alone = await anonymous.json();
    expect([anonymous.status, alone]).to.deep.equal([503, { status: 'unavailable' }]);
    expect(check('GET', '/api/health', 503, alone), 'GET /api/health without the key').to.deep.equal([]);
  });

  it("matches the server's behaviour: operations marked security: [] answer without a key, the others 401", async () => {
    for (const { key, path, method, op } of operations(doc)) {
      const url = api.url + path.replace(/\{[^}]+\}/g, 'x');
      const res = await fetch(url, { method });
      await res.arrayBuffer();
      if (op.security?.length === 0) expect(res.status, key).to.not.equal(401);
      else expect(res.status, key).to.equal(401);
    }
  });
});
