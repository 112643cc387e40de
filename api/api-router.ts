import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { AppError, validationMessage } from '../core/errors';
import { undeclaredOptions } from '../core/jobs/job-fields';
import { errorResponse } from './openapi';
import { MAX_WAIT_MS, readAsyncPreference } from './services/async-preference';

type Method = 'get' | 'post' | 'put' | 'delete';
type AnyObject = z.ZodObject<z.ZodRawShape>;

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

export interface RouteSpec<P extends AnyObject, Q extends AnyObject, B extends z.ZodType> {
  method: Method;
  /** OpenAPI-style path: `/api/jobs/{job_id}`. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  /** False for the exempt paths of contract §2. */
  auth?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  /** The body may be left out (an empty request is `{}`): documented as not required. */
  bodyOptional?: boolean;
  /** Body media types accepted. Default `json` when a body schema is given. */
  bodyTypes?: ('json' | 'multipart')[];
  responses: RouteConfig['responses'];
  /** The koa path when it cannot be derived from `path` (a multi-segment wildcard). */
  koaPath?: string;
  /** Not in the OpenAPI document (docs UI assets). */
  hidden?: boolean;
  handler: (ctx: Context, input: RouteInput<z.infer<P>, z.infer<Q>, z.infer<B>>) => Promise<void> | void;
}

const toKoaPath = (p: string) => p.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');

/**
 * A route that runs work as a job and waits for it (it documents the 504 of that wait) also answers asynchronously
 * (contract §3): `Prefer: respond-async` or `wait_ms=0` → 202 with the job at once, `wait_ms=N` → up to N ms.
 */
const respondsAsync = (spec: { method: Method; responses: RouteConfig['responses'] }) =>
  spec.method === 'post' && spec.responses[504] !== undefined;

const waitMsParam = z
  .string()
  .regex(/^\d{1,6}$/)
  .optional()
  .openapi({
    description: `How long to wait for the result, in ms (0 to ${MAX_WAIT_MS}); 0 answers 202 with the job at once; past it, 202 with the job (not 504). Default: the server's wait.`,
  });
const preferHeader = z.string().optional().openapi({
  description:
    '`respond-async` (RFC 7240): 202 with `data.job_id` at once, answered with `Preference-Applied: respond-async`.',
  example: 'respond-async',
});
const jobHandedOver = z
  .object({
    status: z.literal('success'),
    data: z.object({
      job_id: z.string(),
      status: z.enum(['pending', 'processing', 'completed', 'failed']),
      message: z.string(),
    }),
  })
  .openapi('JobHandedOver');

/**
 * One definition per route: it registers the koa route, validates with the zod schemas and documents the same
 * schemas in OpenAPI, so the document can never drift from what the server accepts.
 */
export class ApiRouter {
  readonly router = new Router();
  private readonly exempt: RegExp[] = [];

  constructor(
    readonly registry: OpenAPIRegistry,
    private readonly bodyParsers: { json: Middleware; multipart: Middleware },
  ) {}

  /** True when a path is exactly one of the routes declared with `auth: false`. */
  isExemptPath = (path: string): boolean => this.exempt.some((r) => r.test(path));

  add<P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(spec: RouteSpec<P, Q, B>): void {
    const koaPath = spec.koaPath ?? toKoaPath(spec.path);
    if (spec.auth === false) {
      const re =
        '^' + spec.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[A-Za-z0-9_]+\\?\}/g, '[^/]+') + '$';
      this.exempt.push(new RegExp(re));
    }
    if (!spec.hidden) this.document(spec);
    const types = spec.body ? (spec.bodyTypes ?? ['json']) : [];
    const middlewares: Middleware[] = [];
    if (types.length) middlewares.push(this.contentGate(types));
    middlewares.push(async (ctx) => {
      // With a `koaPath` (a wildcard), `params` only documents the route; the handler reads ctx.params itself.
      const params = spec.params && !spec.koaPath ? spec.params.parse(ctx.params) : {};
      const query = spec.query ? spec.query.parse(ctx.query) : {};
      let body: unknown = undefined;
      if (spec.body) {
        const raw = ctx.request.is('multipart')
          ? { ...(ctx.request.body as object), ...filesOf(ctx) }
          : ctx.request.body;
        refuseUndeclaredOptions(spec.body, raw);
        body = spec.body.parse(raw ?? {});
      }
      if (respondsAsync(spec)) ctx.state.prefer = readAsyncPreference(ctx);
      await spec.handler(ctx, { params, query, body } as RouteInput<z.infer<P>, z.infer<Q>, z.infer<B>>);
    });
    this.router[spec.method](koaPath, ...middlewares);
  }

  private contentGate(types: ('json' | 'multipart')[]): Middleware {
    return async (ctx, next) => {
      const hasBody = ctx.request.length > 0 || ctx.get('Transfer-Encoding') !== '';
      const isJson = ctx.request.is('application/json', '+json') !== false && ctx.request.type !== '';
      const isMultipart = ctx.request.is('multipart') !== false && ctx.request.type !== '';
      if (isMultipart && types.includes('multipart')) return this.bodyParsers.multipart(ctx, next);
      if (isJson && types.includes('json')) return this.bodyParsers.json(ctx, next);
      if (!hasBody && types.includes('json')) {
        ctx.request.body = {};
        return next();
      }
      const accepted = types.map((t) => (t === 'json' ? 'application/json' : 'multipart/form-data'));
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', `This endpoint accepts ${accepted.join(' or ')}.`, { accepted });
    };
  }

  private document<P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(spec: RouteSpec<P, Q, B>): void {
    const types = spec.body ? (spec.bodyTypes ?? ['json']) : [];
    const content: Record<string, { schema: z.ZodType }> = {};
    for (const t of types) content[t === 'json' ? 'application/json' : 'multipart/form-data'] = { schema: spec.body! };
    const responses: RouteConfig['responses'] = { ...spec.responses };
    if (spec.auth !== false) responses[401] ??= errorResponse('Missing or wrong API key');
    if (spec.params || spec.query || spec.body) responses[400] ??= errorResponse('Invalid request');
    if (spec.body) {
      const limits = types.includes('multipart')
        ? 'an upload over MAX_UPLOAD_MB, or more than the multipart field, field text or file limits'
        : 'a JSON body over MAX_JSON_MB (decoded size)';
      responses[413] ??= errorResponse(`PAYLOAD_TOO_LARGE: ${limits}; details name the limit`);
      responses[415] ??= errorResponse(
        `UNSUPPORTED_MEDIA_TYPE: a Content-Type other than ` +
          `${Object.keys(content).join(' or ')}, or a Content-Encoding other than gzip, deflate or br`,
      );
    }
    const async = respondsAsync(spec);
    if (async)
      responses[202] ??= {
        description:
          'Accepted: the job runs on (Prefer: respond-async, wait_ms=0, or wait_ms passed); poll GET /api/jobs/{job_id}',
        content: { 'application/json': { schema: jobHandedOver } },
      };
    responses[500] ??= errorResponse('Internal error');
    this.registry.registerPath({
      method: spec.method,
      path: spec.path,
      summary: spec.summary,
      description: spec.description,
      tags: spec.tags,
      operationId: `${spec.method}${spec.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string) => (c ? c.toUpperCase() : ''))}`,
      ...(spec.auth === false ? { security: [] } : {}),
      request: {
        ...(spec.params ? { params: spec.params } : {}),
        ...(spec.query || async
          ? { query: (spec.query ?? z.object({})).extend(async ? { wait_ms: waitMsParam } : {}) }
          : {}),
        ...(async ? { headers: z.object({ Prefer: preferHeader }) } : {}),
        ...(spec.body ? { body: { content, required: !spec.bodyOptional } } : {}),
      },
      responses,
    });
  }
}

/** The field names an object body schema declares (through a pipe's input); null when it is not one. */
function declaredFields(schema: z.ZodType): string[] | null {
  const s = schema as unknown as { shape?: object; _zod?: { def?: { type?: string; in?: z.ZodType } } };
  if (s.shape && typeof s.shape === 'object') return Object.keys(s.shape);
  const def = s._zod?.def;
  if (def?.type === 'pipe' && def.in) return declaredFields(def.in);
  return null;
}

/** A contract option (contract §14: `chunking`, `grounding`, ...) a route's body does not declare is a 400 naming it. */
function refuseUndeclaredOptions(schema: z.ZodType, raw: unknown): void {
  const declared = declaredFields(schema);
  if (!declared) return;
  const issues = undeclaredOptions(raw, declared, 'this operation');
  if (issues.length) throw new AppError('VALIDATION_ERROR', validationMessage(issues), { issues });
}

function filesOf(ctx: Context): Record<string, unknown> {
  const files = ctx.request.files ?? {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(files)) out[k] = Array.isArray(v) ? v[0] : v;
  return out;
}
