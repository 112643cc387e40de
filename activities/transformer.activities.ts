import { ApplicationFailure } from '@temporalio/activity';
import { assertHtmlDepth } from '../core/html/limits';
import { htmlOutcome, isHtmlOperation, tablesToMarkdown } from '../core/html/outcome';
import { convertHtmlToMarkdown, extractHtmlTables } from '../providers/html';
import { withDefaults } from '../core/jobs/job-defaults';
import type { TransformerParams } from '../core/jobs/job-params';
import { type JobFields, resultPreview, writeJobResults } from '../core/results/job-results';
import { jobOutputKey, jobOutputPrefix } from '../core/stores/records';
import {
  cachedTransform,
  convertHtml,
  rememberTransform,
  transformAnswer,
  transformKey,
  type HtmlEngine,
} from '../capabilities/transform';
import { UsageRecorder } from '../providers/llm';
import type { LlmUsage } from '../domain/engines/llm';
import { jobModel } from './model-journal';
import {
  applyTemplate,
  blocksToNewsfeed,
  summarize,
  templateSource,
  translate,
  type Block,
  type OpResult,
  type TemplateRequest,
} from './text-operations';
import type { ActivityDeps } from './deps';
import { fullParameters, heartbeating, runStep } from './job-steps';

/** Re-exported where it used to live (tests import it from here). */
export { tablesToMarkdown };

/** What one transformer operation produced; also the cache entry. */
interface Computed {
  text: string;
  metadata: Record<string, unknown>;
  file: { name: string; body: string; mime: string };
  output?: Record<string, unknown>;
  usages: LlmUsage[];
}

function summarise(usages: LlmUsage[]) {
  const r = new UsageRecorder();
  for (const u of usages) r.record(u);
  return r.summary();
}

export function createTransformerActivities(deps: ActivityDeps) {
  const { store } = deps;

  /**
   * The worker's HTML engine (capabilities/transform.ts `HtmlEngine`): the depth check, then the conversion in the
   * converter's threads, shaped by core/html/outcome.ts as the API's engine shapes it (the same cache entry).
   */
  const htmlEngine: HtmlEngine = async (operation, html, signal) => {
    assertHtmlDepth(html);
    if (operation === 'html-to-markdown') return htmlOutcome(operation, await convertHtmlToMarkdown(html, signal));
    return htmlOutcome(operation, await extractHtmlTables(html, signal));
  };

  async function compute(jobId: string, operation: string, params: TransformerParams): Promise<Computed> {
    const llm = jobModel(deps.llm, store, jobId);
    const md = (text: string, name = 'result.md') => ({ name, body: text, mime: 'text/markdown; charset=utf-8' });
    if (isHtmlOperation(operation)) return heartbeating((signal) => convertHtml(htmlEngine, operation, params, signal));
    const text = String(params.text ?? '');
    const { source_language: from, target_language: to } = withDefaults('transformer', params);
    let r: OpResult;
    if (operation === 'text') r = await translate(llm, text, from, to);
    else if (operation === 'template') r = await applyTemplate(llm, params as unknown as TemplateRequest);
    else if (operation === 'summarize') r = await summarize(llm, text, Number(params.max_length ?? 1000));
    else if (operation === 'blocks') {
      r = await blocksToNewsfeed(llm, (params.blocks ?? []) as Block[], from, to);
    } else
      throw ApplicationFailure.nonRetryable(`Unknown transformer operation '${operation}'.`, 'VALIDATION_ERROR', {
        operation,
      });
    return {
      text: r.text,
      metadata: { operation, characters: r.text.length, ...(r.pieces ? { pieces: r.pieces } : {}) },
      file: md(r.text),
      output: r.output,
      usages: r.usages,
    };
  }
  return {
    /**
     * The transformer job's one step (a regular activity: a large page takes seconds, too long to hold a workflow
     * task). Writes the output file and the full results; returns a summary small enough for workflow history.
     */
    async runTransformerStep({ jobId, parameters }: { jobId: string; parameters: TransformerParams }) {
      // Heartbeats throughout (under `quickTransform`'s 10 s): a 16 MB page's cache entry and results take a while to
      // write.
      const { value, reused } = await runStep(store, jobId, 'transform', () =>
        heartbeating(async () => {
          const params = await fullParameters(store, jobId, parameters);
          const operation = String(params.operation);
          const source =
            operation === 'template' ? await templateSource(params as unknown as TemplateRequest) : undefined;
          const key = transformKey(params, { model: deps.llm?.describe().model, templateSource: source });
          let computed =
            params.use_cache === false ? null : await cachedTransform<Computed>(store, key, { count: true });
          const fromCache = computed !== null;
          if (!computed) {
            computed = await compute(jobId, operation, params);
            await rememberTransform(store, key, computed);
          }
          const { text, metadata, file, usages } = computed;
          await store.put(jobOutputKey(jobId, file.name), file.body, { mime: file.mime });
          const job: JobFields = {
            structured_data: { extracted_text: text, metadata },
            assets: [`${jobOutputPrefix(jobId)}${file.name}`],
            target_dir: jobOutputPrefix(jobId).slice(0, -1),
            llm_info: summarise(usages),
            from_cache: fromCache,
          };
          await writeJobResults(store, jobId, transformAnswer(params, computed), job);
          return { results: resultPreview(job) };
        }),
      );
      return { ...value, reused };
    },
  };
}
