import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { ApiRouter } from './api-router';
import { z } from './openapi';

const require = createRequire(import.meta.url);
const distDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));

/** The files the docs UI needs, served from swagger-ui-dist (offline: nothing is fetched from elsewhere). */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Document and Media Processing Service: API</title>
  <link rel="stylesheet" href="/api/doc/swagger-ui.css">
  <link rel="stylesheet" href="/api/doc/index.css">
  <link rel="icon" type="image/png" href="/api/doc/favicon-32x32.png" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/api/doc/swagger-ui-bundle.js"></script>
  <script src="/api/doc/swagger-ui-standalone-preset.js"></script>
  <script src="/api/doc/init.js"></script>
</body>
</html>
`;

/** The initializer: the authorize dialog's ApiKeyHeader takes the bare key and sends it as X-Service-Api-Key. */
const INIT = `window.ui = SwaggerUIBundle({
  url: '/api/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: true,
  tryItOutEnabled: false,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'BaseLayout'
});
`;

export const DOC_PATHS = new Set([
  '/api/doc',
  '/api/doc/',
  '/api/doc/init.js',
  '/api/openapi.json',
  ...Object.keys(ASSETS).map((a) => `/api/doc/${a}`),
]);

/** True for exactly the docs UI, its assets and the OpenAPI document. */
export const isDocPath = (p: string): boolean => DOC_PATHS.has(p);

export function docsRoutes(api: ApiRouter, openapi: () => Record<string, unknown>): void {
  const security =
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'";
  const page = (ctx: import('koa').Context) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', security);
    ctx.body = PAGE;
  };
  api.add({
    method: 'get',
    path: '/api/doc',
    summary: 'Interactive documentation UI',
    tags: ['Documentation'],
    auth: false,
    responses: { 200: { description: 'Swagger UI', content: { 'text/html': { schema: z.string() } } } },
    handler: page,
  });
  api.add({
    method: 'get',
    path: '/api/doc/',
    summary: 'Docs UI',
    tags: [],
    auth: false,
    hidden: true,
    responses: {},
    handler: page,
  });
  api.add({
    method: 'get',
    path: '/api/doc/init.js',
    summary: 'Docs UI initializer',
    tags: [],
    auth: false,
    hidden: true,
    responses: {},
    handler: (ctx) => {
      ctx.type = 'application/javascript; charset=utf-8';
      ctx.body = INIT;
    },
  });
  for (const [name, type] of Object.entries(ASSETS)) {
    api.add({
      method: 'get',
      path: `/api/doc/${name}`,
      summary: name,
      tags: [],
      auth: false,
      hidden: true,
      responses: {},
      handler: (ctx) => {
        ctx.type = type;
        ctx.set('Cache-Control', 'public, max-age=86400');
        ctx.body = createReadStream(path.join(distDir, name));
      },
    });
  }
  api.add({
    method: 'get',
    path: '/api/openapi.json',
    summary: 'OpenAPI 3.1 description of this API',
    tags: ['Documentation'],
    auth: false,
    responses: {
      200: {
        description: 'OpenAPI document',
        content: {
          'application/json': {
            schema: z
              .object({
                openapi: z.string(),
                info: z.object({ title: z.string(), version: z.string(), description: z.string().optional() }),
                servers: z.array(z.object({ url: z.string() })).optional(),
                security: z.array(z.record(z.string(), z.array(z.string()))).optional(),
                paths: z.record(z.string(), z.unknown()),
                components: z.record(z.string(), z.unknown()).optional(),
                webhooks: z.record(z.string(), z.unknown()).optional(),
              })
              .openapi('OpenApiDocument'),
          },
        },
      },
    },
    handler: (ctx) => {
      ctx.body = openapi();
    },
  });
}
