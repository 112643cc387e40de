import { ApplicationFailure } from '@temporalio/activity';
import {
  answerFields,
  buildExtractionPrompt,
  fillTemplate,
  languageName,
  loadTemplate,
  needsModel,
  parseTemplate,
  renderWithoutModel,
  TEMPLATES_DIR,
} from '../core/templates';
import { JOB_DEFAULTS } from '../core/jobs/job-defaults';
import type { LlmProvider, LlmUsage } from '../domain/engines/llm';
import { groundFields, type GroundedOutput } from '../domain/grounding/ground';
import { fillInPieces, PIECE_PROMPT_SLACK } from './template-pieces';

/** The outputs of the model-backed transformer operations, with every model call's usage. */
export interface OpResult {
  text: string;
  output: Record<string, unknown>;
  usages: LlmUsage[];
  /** How many pieces the input was cut into to fit the model's context; absent when it went whole. */
  pieces?: number;
}

const CHUNK = 12_000;
/** Characters a token is taken for when text is cut to fit a context: few, so pieces err on the short side. */
const CHARS_PER_TOKEN = 3;

/**
 * Characters per piece for a model: 12,000 for hosted models; for a model with a small context (the local one,
 * 4,096 tokens) a piece and its answer must fit together: 40 % of the context for the piece, at 3 characters a
 * token (German and English run 3.5–4.5 with Qwen's tokenizer, so this errs on the short side).
 */
export function pieceChars(llm: LlmProvider | null | undefined): number {
  const ctx = llm?.describe().contextTokens;
  return ctx ? Math.max(500, Math.floor(ctx * 0.4 * CHARS_PER_TOKEN)) : CHUNK;
}

/**
 * Characters one template call's prompt (system and user, the text included) may have for a model with a known
 * context: 65 % of it, the rest is the answer's (every field at once). None for a model whose context is not known:
 * a hosted model takes the text whole.
 */
export function templatePromptChars(llm: LlmProvider | null | undefined): number {
  const ctx = llm?.describe().contextTokens;
  return ctx ? Math.floor(ctx * CHARS_PER_TOKEN * 0.65) : Number.POSITIVE_INFINITY;
}

/** Splits text at paragraph (then sentence) boundaries into pieces of at most `size` characters. */
export function chunkText(text: string, size = CHUNK): string[] {
  if (text.length <= size) return [text];
  const out: string[] = [];
  let cur = '';
  const push = () => {
    if (cur.trim()) out.push(cur);
    cur = '';
  };
  for (const para of text.split(/(\n\s*\n)/)) {
    if (cur.length + para.length <= size) {
      cur += para;
      continue;
    }
    push();
    if (para.length <= size) cur = para;
    else for (let i = 0; i < para.length; i += size) out.push(para.slice(i, i + size));
  }
  push();
  return out;
}

export function requireModel(llm: LlmProvider | null, operation: string): LlmProvider {
  if (llm) return llm;
  throw ApplicationFailure.nonRetryable(
    `The operation '${operation}' needs a language model: set LLM_BASE_URL, LLM_API_KEY and LLM_MODEL.`,
    'PROVIDER_NOT_CONFIGURED',
    { operation },
  );
}

export async function translate(
  llm: LlmProvider | null,
  text: string,
  source: string,
  target: string,
): Promise<OpResult> {
  const output = { translated_text: text, source_language: source, target_language: target };
  if (source === target || text.trim() === '') return { text, output, usages: [] };
  const model = requireModel(llm, 'text');
  const usages: LlmUsage[] = [];
  const parts: string[] = [];
  for (const piece of chunkText(text, pieceChars(model))) {
    const r = await model.chatText({
      purpose: 'translation',
      system:
        `You are a professional translator. Translate the user's text from ${languageName(source)} to ${languageName(target)}. ` +
        'Keep the meaning, tone, Markdown formatting, names and numbers. Answer with the translation only.',
      user: piece,
    });
    usages.push(r.usage);
    parts.push(r.text.trim());
  }
  const translated = parts.join('\n\n');
  return { text: translated, output: { ...output, translated_text: translated }, usages };
}

export interface TemplateRequest {
  text: string;
  template?: string;
  template_content?: string;
  source_language?: string;
  target_language?: string;
  context?: Record<string, unknown>;
  additional_field_descriptions?: Record<string, string>;
  /**
   * Grounding (contract §14): each value the model gave is looked for in `text`; one the text does not hold is
   * emptied and its field named in `unsupported_fields`; `template_sources` says where each value stands.
   */
  grounding?: boolean;
}

/** The failure of a step whose named template does not exist (404 `TEMPLATE_NOT_FOUND`). */
export const templateNotFound = (template: unknown): ApplicationFailure =>
  ApplicationFailure.nonRetryable(`No template named ${JSON.stringify(template)}.`, 'TEMPLATE_NOT_FOUND', { template });

export async function templateSource(req: TemplateRequest): Promise<string> {
  if (req.template_content !== undefined) return req.template_content;
  const t = await loadTemplate(TEMPLATES_DIR, String(req.template ?? ''), req.target_language);
  if (!t) throw templateNotFound(req.template);
  return t.source;
}

/**
 * The template filled from the text: one model call when the text fits the model's context with the prompt (always
 * for a model whose context is not known), else one call per piece of the text and the pieces' values merged
 * (template-pieces.ts), `pieces` saying how many.
 */
export async function applyTemplate(llm: LlmProvider | null, req: TemplateRequest): Promise<OpResult> {
  const parsed = parseTemplate(await templateSource(req));
  const context = req.context ?? {};
  const grounded = req.grounding === true;
  /** The model's fields, checked against the text when grounding is asked. */
  const finish = (fields: Record<string, unknown>) => {
    if (!grounded) return { fields, extra: {} };
    const g = groundFields(fields, req.text);
    return {
      fields: g.fields,
      extra: { template_sources: g.sources, unsupported_fields: g.unsupported } satisfies GroundedOutput,
    };
  };
  if (!needsModel(parsed, context)) {
    const filled = renderWithoutModel(parsed, req.text, context);
    const { extra } = finish({});
    return { text: filled, output: { transformed_text: filled, template_fields: {}, ...extra }, usages: [] };
  }
  const model = requireModel(llm, 'template');
  // Grounded values are the text's words, in its language (the API refuses grounding into another language).
  const targetLanguage = grounded
    ? (req.source_language ?? req.target_language ?? JOB_DEFAULTS.transformer.target_language)
    : (req.target_language ?? req.source_language ?? JOB_DEFAULTS.transformer.target_language);
  const build = (text: string) =>
    buildExtractionPrompt({
      parsed,
      text,
      sourceLanguage: req.source_language,
      targetLanguage,
      context,
      additional: req.additional_field_descriptions,
      grounded,
    });
  const prompt = build(req.text);
  const promptChars = templatePromptChars(model);
  // The text's room: the prompt's less what surrounds the text (and what the provider and the piece note add).
  const room = promptChars - (prompt.system.length + prompt.user.length - req.text.length) - PIECE_PROMPT_SLACK;
  const size = Math.max(500, room);
  if (req.text.length > size) {
    const pieces = chunkText(req.text, size);
    const r = await fillInPieces(model, { build, pieces, promptChars, targetLanguage });
    const { fields, extra } = finish(r.fields);
    const filled = fillTemplate(parsed, fields, req.text, context);
    return {
      text: filled,
      output: { transformed_text: filled, template_fields: fields, ...extra },
      usages: r.usages,
      pieces: pieces.length,
    };
  }
  const r = await model.chatJson({
    purpose: 'template',
    system: prompt.system,
    user: prompt.user,
    schema: prompt.schema,
  });
  const { fields, extra } = finish(answerFields(prompt, r.value));
  const filled = fillTemplate(parsed, fields, req.text, context);
  return { text: filled, output: { transformed_text: filled, template_fields: fields, ...extra }, usages: [r.usage] };
}

/** Cuts at the last sentence or word boundary within `max` characters. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const sentence = Math.max(cut.lastIndexOf('. '), cut.lastIndexOf('.\n'));
  if (sentence > max * 0.6) return cut.slice(0, sentence + 1).trim();
  const word = cut.lastIndexOf(' ');
  return (word > max * 0.6 ? cut.slice(0, word) : cut).trim();
}

/**
 * Map-reduce summary: each chunk is summarised, then the summaries are; the answer is at most `maxLength` characters.
 */
export async function summarize(llm: LlmProvider | null, text: string, maxLength: number): Promise<OpResult> {
  const model = requireModel(llm, 'summarize');
  const usages: LlmUsage[] = [];
  const size = pieceChars(model);
  const ctx = model.describe().contextTokens;
  const ask = async (input: string, limit: number, purpose: string) => {
    const r = await model.chatText({
      purpose,
      system: `Summarise the user's text in the language of the text, in at most ${limit} characters. Answer with the summary only.`,
      user: input,
      // A small model overruns length limits: its answer is capped in tokens too (about 2.5 characters a token),
      // within what the context leaves beside a piece.
      ...(ctx ? { maxTokens: Math.min(Math.ceil(limit / 2.5) + 16, Math.floor(ctx * 0.45)) } : {}),
    });
    usages.push(r.usage);
    return r.text.trim();
  };
  let pieces = chunkText(text, size);
  let round = 0;
  while (pieces.length > 1 && round < 5) {
    const per = Math.max(200, Math.floor((size * 0.8) / pieces.length));
    const partial: string[] = [];
    for (const p of pieces) partial.push(await ask(p, Math.min(per, 2000), 'summary-map'));
    pieces = chunkText(partial.join('\n\n'), size);
    round += 1;
  }
  let summary = await ask(pieces[0] ?? '', maxLength, 'summary');
  if (summary.length > maxLength) summary = clip(summary, maxLength);
  return { text: summary, output: { summary }, usages };
}

export interface Block {
  type: string;
  content: unknown;
}

function blockMarkdown(b: Block): string {
  const c = b.content;
  if (Array.isArray(c)) return c.map((x) => `- ${String(x)}`).join('\n');
  const s = typeof c === 'string' ? c : JSON.stringify(c);
  if (/^h(eading)?[1-6]?$|^title$/i.test(b.type)) return `## ${s}`;
  if (/quote/i.test(b.type)) return `> ${s}`;
  return s;
}

/** Blocks translated in one model call (none when the languages match), then composed into a Markdown entry. */
export async function blocksToNewsfeed(
  llm: LlmProvider | null,
  blocks: Block[],
  source: string,
  target: string,
): Promise<OpResult> {
  let processed: (Block & { original_content?: unknown })[] = blocks.map((b) => ({ ...b }));
  const usages: LlmUsage[] = [];
  if (source !== target) {
    const model = requireModel(llm, 'blocks');
    const r = await model.chatJson<{ blocks?: unknown[] }>({
      purpose: 'translation',
      system:
        `Translate the content of each block from ${languageName(source)} to ${languageName(target)}. Answer one JSON object ` +
        '{"blocks": [...]} with the same number of blocks in the same order; each block keeps its "type" and gets the ' +
        'translated "content" (a string stays a string, a list stays a list).',
      user: JSON.stringify({ blocks }),
    });
    usages.push(r.usage);
    const out = Array.isArray(r.value.blocks) ? r.value.blocks : [];
    if (out.length !== blocks.length) {
      throw ApplicationFailure.nonRetryable('The model answered a different number of blocks.', 'UPSTREAM_ERROR', {
        expected: blocks.length,
        got: out.length,
      });
    }
    processed = blocks.map((b, i) => ({
      type: b.type,
      content: (out[i] as Block)?.content ?? b.content,
      original_content: b.content,
    }));
  }
  const entry = processed.map(blockMarkdown).join('\n\n');
  return { text: entry, output: { processed_blocks: processed, newsfeed_entry: entry }, usages };
}
