import { chunkRoutes } from './routes/chunks.routes';
import type http from 'node:http';
import path from 'node:path';
import Koa from 'koa';
import type { BlobStore } from '../core/stores/blob-store';
import type { Config } from '../core/config/config';
import type { Logger } from '../core/runtime/logger';
import { SERVICE_VERSION } from '../core/runtime/version';
import { DOC_PATHS, docsRoutes, isDocPath } from './docs';
import { authMiddleware } from './middleware/auth';
import { bodyParsers } from './middleware/body';
import type { Drain } from './drain';
import type { ApiEngines } from './engines';
import { edgeMiddleware } from './middleware/error-envelope';
import { httpMetrics, METRICS_PATH, metricsEndpoint } from './middleware/metrics';
import { createRegistry, generateDocument } from './openapi';
import { ApiRouter } from './api-router';
import { audioRoutes } from './routes/audio.routes';
import { speechRoutes } from './routes/speech.routes';
import { commonRoutes } from './routes/common.routes';
import { eventJobRoutes } from './routes/event-job.routes';
import { healthRoutes } from './routes/health.routes';
import { jobRoutes } from './routes/jobs.routes';
import { imageOcrRoutes } from './routes/imageocr.routes';
import { documentRoutes } from './routes/document.routes';
import { pdfRoutes } from './routes/pdf.routes';
import { sessionRoutes } from './routes/session.routes';
import { eventRoutes } from './routes/events.routes';
import { storyRoutes } from './routes/story.routes';
import { trackRoutes } from './routes/tracks.routes';
import { templateRoutes } from './routes/templates.routes';
import { transformerRoutes } from './routes/transformer.routes';
import { videoRoutes } from './routes/video.routes';
import { BatchService } from './services/batches';
import { HealthService } from './services/health';
import { llmHealth } from './services/llm-health';
import { ocrHealth } from './services/ocr-health';
import { JobService } from './services/jobs';
import type { TemporalGateway } from './temporal';
import { scratchAt } from '../core/stores/scratch';

export interface AppDeps {
  config: Config;
  logger: Logger;
  store: BlobStore;
  temporal: TemporalGateway;
  /** The engines the API runs on uploads and for health (ffprobe, image headers, tesseract, yt-dlp): api/engines.ts. */
  engines: ApiEngines;
  /** Graceful shutdown (api/main.ts): refuses new requests while in-flight ones finish; readiness answers 503. */
  drain?: Drain;
}

export interface App {
  koa: Koa;
  /** The app as a Node request listener: `http.createServer(app.listener)`. */
  listener: http.RequestListener;
  /** The OpenAPI document, generated once from the routes' zod schemas. */
  openapi: () => Record<string, unknown>;
  routes: { method: string; path: string }[];
}

/**
 * Builds the Koa app without listening. Middleware order: HTTP metrics → edge (ids, errors) → auth → /metrics → routes
 * → 404/405.
 */
export function createApp(deps: AppDeps): App {
  const { config, logger } = deps;
  const koa = new Koa({ proxy: false });
  koa.silent = true;
  const api = new ApiRouter(
    createRegistry(),
    bodyParsers({
      jsonBytes: config.MAX_JSON_MB * 1024 * 1024,
      uploadBytes: config.MAX_UPLOAD_MB * 1024 * 1024,
      jsonDepth: config.MAX_JSON_DEPTH,
      uploadRoot: scratchAt(path.join(config.dataDir, 'tmp', 'uploads')).dir,
    }),
  );
  let doc: Record<string, unknown> | undefined;
  const openapi = () => (doc ??= generateDocument(api.registry, SERVICE_VERSION));

  const modelHealth = llmHealth(config);
  const providerHealth = async () => ({ ...(await modelHealth()), ...(await ocrHealth(deps.engines.ocrLanguages)) });
  healthRoutes(
    api,
    new HealthService(deps.temporal, deps.store, providerHealth),
    () => deps.drain?.isDraining ?? false,
  );
  docsRoutes(api, openapi);
  const jobs = new JobService(deps.temporal, deps.store, config.WEBHOOK_RETRY_SCALE, {
    maxHeavyRequests: config.MAX_HEAVY_REQUESTS,
  });
  const batches = new BatchService(deps.temporal, deps.store, config.BATCH_WINDOW, config.WEBHOOK_RETRY_SCALE);
  jobRoutes(api, { jobs, batches, maxBatchJobs: config.MAX_BATCH_JOBS });
  eventJobRoutes(api, jobs, batches, config.MAX_BATCH_JOBS);
  const transformerDeps = { jobs, config, syncWaitMs: config.SYNC_WAIT_MS, engines: deps.engines };
  commonRoutes(api, transformerDeps);
  transformerRoutes(api, transformerDeps);
  templateRoutes(api);
  chunkRoutes(api);
  pdfRoutes(api, jobs, config, deps.engines);
  documentRoutes(api, jobs, config);
  imageOcrRoutes(api, jobs, config, deps.engines);
  videoRoutes(api, jobs, config, deps.engines);
  audioRoutes(api, jobs, config, deps.engines);
  speechRoutes(api, jobs, config, deps.engines);
  sessionRoutes(api, jobs, config);
  trackRoutes(api, { jobs, config });
  eventRoutes(api, { jobs, config });
  storyRoutes(api, { jobs, config });

  const routeOf = (method: string, p: string) =>
    api.router.match(p, method).pathAndMethod.findLast((l) => l.methods.length > 0)?.path;
  koa.use(httpMetrics(routeOf));
  koa.use(edgeMiddleware(logger, SERVICE_VERSION));
  if (deps.drain) koa.use(deps.drain.middleware);
  koa.use(
    authMiddleware({
      apiKey: config.SERVICE_API_KEY,
      allowLocalhostNoAuth: config.ALLOW_LOCALHOST_NO_AUTH,
      docWhitelist: config.docWhitelist,
      isExemptPath: (p) => api.isExemptPath(p) || DOC_PATHS.has(p) || (config.METRICS_PUBLIC && p === METRICS_PATH),
      isDocPath,
    }),
  );
  koa.use(metricsEndpoint());
  koa.use(api.router.routes());
  koa.use(api.router.allowedMethods());

  const routes = api.router.stack.flatMap((l) =>
    l.methods.filter((m) => m !== 'HEAD').map((method) => ({ method, path: String(l.path) })),
  );
  const handle = koa.callback();
  // Koa settles each request itself (the edge middleware answers errors, `ctx.onerror` the rest): nothing to await.
  const listener: http.RequestListener = (req, res) => void handle(req, res);
  return { koa, listener, openapi, routes };
}
