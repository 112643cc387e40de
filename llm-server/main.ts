import os from 'node:os';
import { loadConfig } from '../core/config/config';
import { createLogger } from '../core/runtime/logger';
import { watchParent } from '../core/runtime/parent-watch';
import { defaultThreads, LocalLlmEngine } from '../providers/llm/local/engine';
import { startLocalLlmServer } from '../providers/llm/local/server';

/**
 * Composition root of the local model server: loads the GGUF model once and serves the OpenAI chat-completions
 * protocol on loopback (`LLM_LOCAL_PORT`) to every worker. `npm start` runs it when the provider is local.
 * SIGINT/SIGTERM close the socket and free the model.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('llm-server', config.LOG_LEVEL);
  const local = config.localLlm;
  const threads = local.threads || defaultThreads(os.availableParallelism());
  const t0 = Date.now();
  const engine = await LocalLlmEngine.load({
    modelPath: local.modelPath,
    contextSize: local.contextSize,
    slots: local.slots,
    queueSize: local.queueSize,
    threads,
  });
  const server = await startLocalLlmServer({ engine, host: '127.0.0.1', port: local.port, logger });
  logger.info(
    {
      url: server.url,
      model: engine.id,
      contextSize: engine.contextSize,
      slots: local.slots,
      queue: local.queueSize,
      threads,
      loadMs: Date.now() - t0,
    },
    'local model server ready',
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'local model server shutting down');
    await server.close();
    await engine.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
  watchParent(config.DOCPROC_PARENT_PID, () => void stop('parent exited'));
}

main().catch((err) => {
  createLogger('llm-server').fatal({ err }, 'local model server failed');
  process.exit(1);
});
