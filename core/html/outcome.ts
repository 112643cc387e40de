import type { ExtractedTable } from './tables';

/**
 * The model-free transformer operations on HTML, shaped once for both sides that run them: the worker's transformer
 * activity (a job) and the API's thread pool (small inputs answered without a job, api/services/direct-answer.ts).
 * The outcome is also the result cache's entry, so what one side writes the other reads. The converters themselves
 * (cheerio, turndown) are imported by `run.ts` only, so a module that shapes outcomes does not load them.
 */
export const HTML_OPERATIONS = ['html-to-markdown', 'extract-tables'] as const;
export type HtmlOperation = (typeof HTML_OPERATIONS)[number];
export const isHtmlOperation = (op: unknown): op is HtmlOperation => HTML_OPERATIONS.includes(op as HtmlOperation);

/** What an HTML operation produced: its text, metadata and output file (no model call, so no usage). */
export interface HtmlOutcome {
  text: string;
  metadata: Record<string, unknown>;
  file: { name: string; body: string; mime: string };
  usages: never[];
}

/** Renders extracted tables as GFM Markdown, for `extracted_text`. */
export function tablesToMarkdown(tables: ExtractedTable[]): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return tables
    .map((t) => {
      // A loop, not Math.max(...rows): spreading 200,000 rows overflows the stack (a RangeError, answered as 500).
      let width = Math.max(t.headers.length, 1);
      for (const r of t.rows) if (r.length > width) width = r.length;
      const pad = (r: string[]) => Array.from({ length: width }, (_, i) => cell(r[i] ?? ''));
      const head = t.headers.length ? pad(t.headers) : Array.from({ length: width }, (_, i) => `Column ${i + 1}`);
      const lines = [
        `| ${head.join(' | ')} |`,
        `| ${head.map(() => '---').join(' | ')} |`,
        ...t.rows.map((r) => `| ${pad(r).join(' | ')} |`),
      ];
      return lines.join('\n');
    })
    .join('\n\n');
}

/** The outcome of `operation` from what its converter returned (Markdown, or the tables). */
export function htmlOutcome(operation: 'html-to-markdown', converted: string): HtmlOutcome;
export function htmlOutcome(operation: 'extract-tables', converted: ExtractedTable[]): HtmlOutcome;
export function htmlOutcome(operation: HtmlOperation, converted: string | ExtractedTable[]): HtmlOutcome;
export function htmlOutcome(operation: HtmlOperation, converted: string | ExtractedTable[]): HtmlOutcome {
  if (operation === 'html-to-markdown') {
    const text = converted as string;
    const file = { name: 'result.md', body: text, mime: 'text/markdown; charset=utf-8' };
    return { text, metadata: { operation, characters: text.length }, file, usages: [] };
  }
  const tables = converted as ExtractedTable[];
  const text = tablesToMarkdown(tables);
  const file = { name: 'tables.json', body: JSON.stringify({ tables }, null, 2), mime: 'application/json' };
  return { text, metadata: { operation, table_count: tables.length, tables }, file, usages: [] };
}
