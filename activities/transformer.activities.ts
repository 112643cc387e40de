import { ApplicationFailure, cancellationSignal, heartbeat } from '@temporalio/activity';
import { writeBlobJson } from '../core/blob-store';
import type { ExtractedTable } from '../core/html';
import { assertHtmlDepth, HtmlTooDeepError } from '../core/html/limits';
import { convertHtmlToMarkdown, extractHtmlTables } from '../providers/html';
import { jobOutputKey, jobOutputPrefix, jobResultsKey } from '../core/records';
import type { ActivityDeps } from './index';
import { fullParameters, runStep } from './steps';

const PREVIEW_CHARS = 2000;

/** Renders extracted tables as GFM Markdown, for `extracted_text`. */
export function tablesToMarkdown(tables: ExtractedTable[]): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return tables
    .map((t) => {
      const width = Math.max(t.headers.length, ...t.rows.map((r) => r.length), 1);
      const pad = (r: string[]) => Array.from({ length: width }, (_, i) => cell(r[i] ?? ''));
      const head = t.headers.length ? pad(t.headers) : Array.from({ length: width }, (_, i) => `Column ${i + 1}`);
      const lines = [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...t.rows.map((r) => `| ${pad(r).join(' | ')} |`)];
      return lines.join('\n');
    })
    .join('\n\n');
}

/**
 * Heartbeats while a conversion runs (off the event loop, in a thread for large pages): a dead worker's attempt is
 * retried within the heartbeat timeout, and a cancel reaches the activity and stops the thread.
 */
async function heartbeating<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const beat = setInterval(() => heartbeat(), 1000);
  try {
    return await work(cancellationSignal());
  } finally {
    clearInterval(beat);
  }
}

/** Deeply nested HTML is refused before conversion: its cost grows much faster than its size. */
function refuseDeepHtml(html: string): void {
  try {
    assertHtmlDepth(html);
  } catch (e) {
    if (e instanceof HtmlTooDeepError) throw ApplicationFailure.nonRetryable(e.message, 'UNPROCESSABLE_INPUT', { max_depth: e.limit });
    throw e;
  }
}

export function createTransformerActivities(deps: ActivityDeps) {
  const { store } = deps;
  return {
    /**
     * The transformer job's one step (a regular activity: a large page takes seconds, too long to hold a workflow
     * task). Writes the output file and the full results; returns a summary small enough for workflow history.
     */
    async runTransformerStep({ jobId, parameters }: { jobId: string; parameters: Record<string, unknown> }) {
      const { value, reused } = await runStep(store, jobId, 'transform', async () => {
        const params = await fullParameters(store, jobId, parameters);
        const operation = String(params.operation);
        if (operation === 'html-to-markdown' || operation === 'extract-tables') refuseDeepHtml(String(params.html ?? ''));
        let text: string;
        let metadata: Record<string, unknown>;
        let file: { name: string; body: string; mime: string };
        if (operation === 'html-to-markdown') {
          text = await heartbeating((signal) => convertHtmlToMarkdown(String(params.html ?? ''), signal));
          metadata = { operation, characters: text.length };
          file = { name: 'result.md', body: text, mime: 'text/markdown; charset=utf-8' };
        } else if (operation === 'extract-tables') {
          const tables = await heartbeating((signal) => extractHtmlTables(String(params.html ?? ''), signal));
          text = tablesToMarkdown(tables);
          metadata = { operation, table_count: tables.length, tables };
          file = { name: 'tables.json', body: JSON.stringify({ tables }, null, 2), mime: 'application/json' };
        } else {
          throw ApplicationFailure.nonRetryable(
            `The transformer operation '${operation}' needs a language model, which this worker does not provide yet.`,
            'PROVIDER_NOT_CONFIGURED',
            { operation },
          );
        }
        await store.put(jobOutputKey(jobId, file.name), file.body, { mime: file.mime });
        const results = {
          structured_data: { extracted_text: text, metadata },
          assets: [`${jobOutputPrefix(jobId)}${file.name}`],
          target_dir: jobOutputPrefix(jobId).slice(0, -1),
        };
        await writeBlobJson(store, jobResultsKey(jobId), results);
        const preview = text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
        return {
          results: { ...results, structured_data: { extracted_text: preview, metadata: { operation, characters: text.length } } },
        };
      });
      return { ...value, reused };
    },
  };
}
