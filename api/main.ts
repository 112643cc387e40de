import { createApp } from './app';
import { Drain } from './drain';
import type { ApiEngines } from './engines';
import { ConfigError, loadConfig, ytDlpPath } from '../core/config/config';
import { createLogger } from '../core/runtime/logger';
import { watchParent } from '../core/runtime/parent-watch';
import { runHtmlOperationInThread } from '../providers/html';
import { imageHeaderMetadata } from '../providers/image/metadata';
import { checkYtDlp } from '../providers/media/hosted';
import { probeMedia } from '../providers/media/probe';
import { nativeMarkdownInThread, warmNativeMarkdownThread } from '../providers/pdf/native-markdown-thread';
import { runLaunchedTool } from '../providers/process/launcher';
import { warmApi } from './warm-up';
import { pdfPageTextsUpTo } from '../providers/pdf/poppler';
import { describePdf, readPageTexts } from '../providers/pdf/text-engine';
import { installedLanguages } from '../providers/ocr/tesseract';
import { configureEngineWatchdog } from '../providers/process/run-tool';
import { createBlobStore } from '../providers/storage';
import { openUploadRoot } from './middleware/body';
import { clientDeadlines, createApiServer } from './middleware/slow-clients';
import { createTemporalGateway } from './temporal';

/**
 * Composition root of the API process. SIGTERM/SIGINT drain it (api/drain.ts): no new connections, new requests on
 * open ones 503, readiness 503, in-flight requests finish within `API_SHUTDOWN_TIMEOUT_MS`, then the process exits.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('api', config.LOG_LEVEL);
  if (!config.SERVICE_API_KEY && !config.loopbackOnly) {
    throw new ConfigError(
      `Refusing to listen on ${config.HOST} without SERVICE_API_KEY: set a key, or listen on 127.0.0.1 (HOST).`,
    );
  }
  // Both modes trust the socket's loopback address: any proxy or tunnel on this host (a reverse proxy, an SSH
  // forward, a sidecar) connects from loopback, so it opens the whole API to whoever reaches it.
  if (!config.SERVICE_API_KEY)
    logger.warn(
      'No SERVICE_API_KEY: listening on loopback only and serving loopback clients only, without a key. A proxy or ' +
        'tunnel on this host connects from loopback too: it opens the whole API to everyone who reaches it.',
    );
  else if (config.ALLOW_LOCALHOST_NO_AUTH)
    logger.warn(
      'ALLOW_LOCALHOST_NO_AUTH=true: loopback clients need no key. A proxy or tunnel on this host connects from ' +
        'loopback too: it opens the whole API, without the key, to everyone who reaches it.',
    );
  // ffprobe checks uploads here (the audio and video routes): watched like the worker's engines.
  configureEngineWatchdog({
    stallTimeoutMs: config.ENGINE_STALL_TIMEOUT_MS,
    logger: logger.child({ part: 'engine-watchdog' }),
  });
  await openUploadRoot(config.dataDir);
  const store = await createBlobStore(config);
  const temporal = createTemporalGateway(config);
  const drain = new Drain();
  const engines: ApiEngines = {
    probeMedia,
    imageSize: imageHeaderMetadata,
    ocrLanguages: installedLanguages,
    checkHostedVideo: () => checkYtDlp(ytDlpPath(config)),
    transformHtml: runHtmlOperationInThread,
    // Small native PDF requests (INLINE_PDF_MAX_PAGES): poppler's processes, the activity's code.
    describePdf: (file, opts) => describePdf(file, 'poppler', opts),
    readPdfTextUpTo: pdfPageTextsUpTo,
    readPdfPageTexts: (file, pages, opts) => readPageTexts(file, pages, 'poppler', opts),
    // Their Markdown: read, built and serialised in a worker thread (the job's code).
    readPdfMarkdown: nativeMarkdownInThread,
  };
  const app = createApp({ config, logger, store, temporal, drain, engines });
  // Ready means warm (issue 38): the threads, the tool launcher and the API's own stack have done real work before
  // it listens (api/warm-up.ts). Without it, the first small HTML transform would pay for its thread's start (tsx
  // and the converters load: about a second), so that thread and the PDF Markdown one are started in any case.
  if (config.WARM_UP)
    await warmApi({
      listener: app.listener,
      engines,
      warmMarkdownThread: warmNativeMarkdownThread,
      // The version query exits non-zero on some poppler builds: the launcher has started either way.
      warmLauncher: () => runLaunchedTool('pdfinfo', ['-v'], { timeoutMs: 30_000 }).catch(() => undefined),
      config,
      logger,
    });
  else {
    if (config.INLINE_TRANSFORM_MAX_BYTES > 0)
      void engines
        .transformHtml('html-to-markdown', '')
        .catch((err: unknown) => logger.warn({ err }, 'html thread warm-up'));
    if (config.INLINE_PDF_MAX_PAGES > 0 && config.PDF_TEXT_ENGINE === 'poppler')
      void warmNativeMarkdownThread().catch((err: unknown) => logger.warn({ err }, 'PDF Markdown thread warm-up'));
  }
  // Slow clients get deadlines (API_HEADERS_TIMEOUT_MS, API_BODY_*): an idle connection, an unfinished head, a stalled
  // or trickling body are cut; a slow steady upload and a long synchronous wait are not.
  const { server } = createApiServer(app.listener, clientDeadlines(config), logger.child({ part: 'slow-clients' }));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.PORT;
  logger.info(
    { url: `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`, port },
    'api listening',
  );
  const stop = async (signal: string) => {
    logger.info({ signal, timeoutMs: config.API_SHUTDOWN_TIMEOUT_MS }, 'api draining');
    const drained = await drain.start(server, config.API_SHUTDOWN_TIMEOUT_MS);
    if (!drained) logger.warn('api shutdown timeout: open requests cut');
    await Promise.race([temporal.close().catch(() => undefined), new Promise((r) => setTimeout(r, 2000).unref())]);
    logger.info('api stopped');
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
  watchParent(config.DOCPROC_PARENT_PID, () => void stop('parent exited'));
}

main().catch((err) => {
  createLogger('api').fatal(
    { err: err instanceof ConfigError ? { message: err.message } : err },
    'api failed to start',
  );
  process.exit(1);
});
