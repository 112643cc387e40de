import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pino from 'pino';
import { createApp, type App } from '../../../api/app';
import type { ApiEngines } from '../../../api/engines';
import { clientDeadlines, createApiServer } from '../../../api/middleware/slow-clients';
import { createTemporalGateway, type TemporalGateway } from '../../../api/temporal';
import { loadConfig, ytDlpPath, type Config } from '../../../core/config/config';
import type { BlobStore } from '../../../core/stores/blob-store';
import { runHtmlOperationInThread } from '../../../providers/html';
import { imageHeaderMetadata } from '../../../providers/image/metadata';
import { checkYtDlp } from '../../../providers/media/hosted';
import { probeMedia } from '../../../providers/media/probe';
import { installedLanguages } from '../../../providers/ocr/tesseract';
import { nativeMarkdownInThread } from '../../../providers/pdf/native-markdown-thread';
import { pdfPageTextsUpTo } from '../../../providers/pdf/poppler';
import { describePdf, readPageTexts } from '../../../providers/pdf/text-engine';
import { LocalBlobStore } from '../../../providers/storage';
import { tempDir } from './engines';
import { trackCalls } from '../workflows/temporal-calls';
import { noLlmUnlessAsked } from './llm-default';
import { asNpmStart } from './launch-env';

export interface TestApi {
  url: string;
  app: App;
  config: Config;
  store: BlobStore;
  temporal: TemporalGateway;
  server: http.Server;
  close(): Promise<void>;
}

/** The real engines, as api/main.ts builds them. */
export const apiEngines = (config: Config): ApiEngines => ({
  probeMedia,
  imageSize: imageHeaderMetadata,
  ocrLanguages: installedLanguages,
  checkHostedVideo: () => checkYtDlp(ytDlpPath(config)),
  transformHtml: runHtmlOperationInThread,
  describePdf: (file, opts) => describePdf(file, 'poppler', opts),
  readPdfTextUpTo: pdfPageTextsUpTo,
  readPdfPageTexts: (file, pages, opts) => readPageTexts(file, pages, 'poppler', opts),
  readPdfMarkdown: nativeMarkdownInThread,
});

/**
 * The real app on a real socket (127.0.0.1, random port), with a local blob store in a temp directory.
 * `env` overrides configuration variables; without TEMPORAL_ADDRESS it points at a closed port.
 */
export async function startTestApi(
  env: Record<string, string> = {},
  opts: { host?: string; store?: BlobStore } = {},
): Promise<TestApi> {
  const dataDir = env.DATA_DIR ?? tempDir('docproc-api-');
  const config = loadConfig(
    asNpmStart(noLlmUnlessAsked({ TEMPORAL_ADDRESS: '127.0.0.1:1', LOG_LEVEL: 'silent', ...env, DATA_DIR: dataDir })),
  );
  const store = opts.store ?? (await new LocalBlobStore(path.join(config.dataDir, 'blobs')).init());
  const temporal = createTemporalGateway(config);
  const calls = trackCalls(temporal.connection);
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const app = createApp({ config, logger, store, temporal, engines: apiEngines(config) });
  // The server api/main.ts builds: the slow-client deadlines of the configuration.
  const { server } = createApiServer(app.listener, clientDeadlines(config), logger);
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    app,
    config,
    store,
    temporal,
    server,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      // Handlers may still wait on Temporal (a sync job, an event stream): never close the channel under them.
      await calls.closeWhenIdle().catch(() => undefined);
    },
  };
}
