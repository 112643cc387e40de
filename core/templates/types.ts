/** The shapes of a parsed template (contract §5), shared by the parser, the filler and the prompt builder. */
import type { Placeholder } from './scan';

/** A field the model (or the context) fills. Unique by name, in order of first appearance. */
export interface TemplateField {
  name: string;
  /** The first inline `|description` among the field's occurrences; null when none has one. */
  description: string | null;
  source: 'llm';
}

/** The frontmatter block as the filler needs it. */
export interface FrontmatterBlock {
  /** Raw text between the `---` fences. */
  source: string;
  /** Placeholders of `source`; in `data` the i-th one appears as `maskToken(i)`. */
  placeholders: Placeholder[];
  /** The masked YAML mapping; null when the block is not a YAML mapping (then it is emitted as text). */
  data: Record<string, unknown> | null;
  /** Keys of `data` that belong in the output, in order. */
  emitKeys: string[];
}

export interface ParsedTemplate {
  /** Frontmatter as metadata: parsed YAML, each placeholder shown as `{{name}}`; `{}` when absent or not YAML. */
  frontmatter: Record<string, unknown>;
  /** Template metadata: static `title`, `description`, `language` (or `lang`) of the frontmatter (parse.ts rule 2). */
  metadata: { title?: string; description?: string; language?: string };
  frontmatterBlock: FrontmatterBlock | null;
  /** Field descriptions given in the frontmatter (rules 3 and 4 in parse.ts). */
  frontmatterDescriptions: Record<string, string>;
  /** The Markdown after the frontmatter and before `--- systemprompt`. */
  body: string;
  /** Everything after the line `--- systemprompt`, trimmed; null when absent or empty. */
  systemPrompt: string | null;
  fields: TemplateField[];
  /** Every placeholder occurrence of frontmatter and body (not of the system prompt). */
  placeholders: Placeholder[];
}
