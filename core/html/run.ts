import { assertHtmlDepth } from './limits';
import { htmlToMarkdown } from './markdown';
import { htmlOutcome, type HtmlOperation, type HtmlOutcome } from './outcome';
import { extractTables } from './tables';

/**
 * The whole operation at once: the depth check (422 `HtmlTooDeepError`), the conversion and the shaping. CPU only,
 * no I/O: run it off any event loop that serves others (providers/html runs it in a worker thread).
 */
export function runHtmlOperation(operation: HtmlOperation, html: string): HtmlOutcome {
  assertHtmlDepth(html);
  return operation === 'html-to-markdown'
    ? htmlOutcome(operation, htmlToMarkdown(html))
    : htmlOutcome(operation, extractTables(html));
}
