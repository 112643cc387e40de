/**
 * Building a block's `Inline` from the runs a reader meets (OOXML runs, ODF spans, XHTML inline elements): adjacent
 * runs with the same emphasis merge, and text without any emphasis or link stays a plain string.
 */
import type { Inline, InlineRun } from '../model';

export type RunStyle = Omit<InlineRun, 'text'>;

const sameStyle = (a: RunStyle, b: RunStyle) =>
  !!a.bold === !!b.bold &&
  !!a.italic === !!b.italic &&
  !!a.code === !!b.code &&
  !!a.strike === !!b.strike &&
  a.href === b.href;

export class InlineBuilder {
  private readonly runs: InlineRun[] = [];

  add(text: string, style: RunStyle = {}): void {
    if (!text) return;
    const last = this.runs[this.runs.length - 1];
    if (last && sameStyle(last, style)) {
      last.text += text;
      return;
    }
    const run: InlineRun = { text };
    if (style.bold) run.bold = true;
    if (style.italic) run.italic = true;
    if (style.code) run.code = true;
    if (style.strike) run.strike = true;
    if (style.href) run.href = style.href;
    this.runs.push(run);
  }

  /** The plain text so far (for headings' names, cells' emptiness). */
  get text(): string {
    return this.runs.map((r) => r.text).join('');
  }

  /**
   * The runs with their whitespace tidied: runs of spaces and tabs collapse (`\n` kept, from line breaks), and the
   * ends trimmed. Plain when nothing is emphasised.
   */
  build(): Inline {
    const runs = this.runs
      .map((r) => ({ ...r, text: r.text.replace(/[ \t\u00a0]*\n[ \t\u00a0]*/g, '\n').replace(/[ \t]+/g, ' ') }))
      .filter((r) => r.text !== '');
    if (runs.length) {
      runs[0].text = runs[0].text.replace(/^\s+/, '');
      const last = runs[runs.length - 1];
      last.text = last.text.replace(/\s+$/, '');
    }
    const kept = runs.filter((r) => r.text !== '');
    if (kept.every((r) => !r.bold && !r.italic && !r.code && !r.strike && !r.href))
      return kept.map((r) => r.text).join('');
    return kept;
  }
}

/** The plain text of an `Inline`. */
export function inlineText(inline: Inline): string {
  return typeof inline === 'string' ? inline : inline.map((r) => r.text).join('');
}
