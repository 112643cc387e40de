import type { Logger } from '../core/runtime/logger';
import type { SpeechProvider } from '../domain/engines/speech';
import { runLaunchedTool } from '../providers/process/launcher';

/**
 * Ready means warm (issue 38), the worker's part: before it polls, the speech engine's processes (one per media slot)
 * are started with their model loaded and one short decode done, and the tool launcher (which starts poppler for the
 * PDF steps) runs one tool. A step that fails is logged and skipped: the engine starts on first use as before, and its
 * own errors reach the job that needs it. Nothing is written to the blob store or Temporal.
 */
export async function warmWorker(parts: { speech: SpeechProvider | null; media: boolean }, logger: Logger) {
  const t0 = performance.now();
  const steps: [string, () => Promise<unknown> | undefined][] = [
    ['speech engine', () => (parts.media ? parts.speech?.warm?.() : undefined)],
    // The version query exits non-zero on some poppler builds: the launcher has started either way.
    ['tool launcher', () => runLaunchedTool('pdfinfo', ['-v'], { timeoutMs: 30_000 }).catch(() => undefined)],
  ];
  await Promise.all(
    steps.map(async ([name, run]) => {
      try {
        await run();
      } catch (err) {
        logger.warn({ err }, `${name}: warm-up failed (it starts on first use)`);
      }
    }),
  );
  logger.info({ ms: Math.round(performance.now() - t0) }, 'worker warm');
}
