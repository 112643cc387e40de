import http from 'node:http';
import { createApp } from './app';
import { ConfigError, loadConfig } from '../core/config';
import { createLogger } from '../core/logger';
import { watchParent } from '../core/parent-watch';
import { createBlobStore } from '../providers/storage';
import { openUploadRoot } from './middleware/body';
import { createTemporalGateway } from './temporal';

/** Composition root of the API process. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('api', config.LOG_LEVEL);
  if (!config.SERVICE_API_KEY && !config.loopbackOnly) {
    throw new ConfigError(
      `Refusing to listen on ${config.HOST} without SERVICE_API_KEY: set a key, or listen on 127.0.0.1 (HOST).`,
    );
  }
  if (!config.SERVICE_API_KEY) logger.warn('No SERVICE_API_KEY: listening on loopback only and serving loopback clients only.');
  await openUploadRoot(config.dataDir);
  const store = await createBlobStore(config);
  const temporal = createTemporalGateway(config);
  const app = createApp({ config, logger, store, temporal });
  const server = http.createServer(app.koa.callback());
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.PORT;
  logger.info({ url: `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`, port }, 'api listening');
  const stop = (signal: string) => {
    logger.info({ signal }, 'api shutting down');
    server.close(() => {
      void temporal.close().finally(() => process.exit(0));
    });
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  watchParent(config.DOCPROC_PARENT_PID, () => stop('parent exited'));
}

main().catch((err) => {
  createLogger('api').fatal({ err: err instanceof ConfigError ? { message: err.message } : err }, 'api failed to start');
  process.exit(1);
});
