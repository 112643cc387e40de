import { expect } from 'chai';
import { buildExtractionPrompt, parseTemplate } from '../../core/templates';
import type { ChatJsonOptions, ChatTextOptions, LlmDescription, LlmProvider, LlmUsage } from '../../domain/engines/llm';
import { applyTemplate, templatePromptChars } from '../../activities/text-operations';
import { distinctValues, packGroups, unionItems } from '../../activities/template-pieces';

/**
 * An in-memory model behind the provider interface: `answer` gives each JSON call's object; every call is kept, and
 * one whose messages do not fit the context (3 characters a token, as the service counts) fails as the server would.
 */
class InMemoryModel implements LlmProvider {
  calls: ChatJsonOptions[] = [];
  constructor(
    private readonly contextTokens: number | undefined,
    private readonly answer: (o: ChatJsonOptions) => Record<string, unknown>,
  ) {}

  describe(): LlmDescription {
    const ctx = this.contextTokens ? { contextTokens: this.contextTokens } : {};
    return {
      model: 'in-memory',
      visionModel: 'in-memory',
      baseUrl: 'memory',
      provider: 'local',
      vision: false,
      ...ctx,
    };
  }

  chatJson<T = Record<string, unknown>>(o: ChatJsonOptions): Promise<{ value: T; usage: LlmUsage }> {
    this.calls.push(o);
    const chars = o.system.length + String(o.user).length;
    if (this.contextTokens && chars > this.contextTokens * 3)
      return Promise.reject(new Error(`context exceeded: ${chars} characters`));
    const usage = { model: 'in-memory', purpose: o.purpose, prompt_tokens: 1, completion_tokens: 1, tokens: 2 };
    return Promise.resolve({ value: this.answer(o) as T, usage: { ...usage, cost: 0, duration_ms: 0 } });
  }

  chatText(_o: ChatTextOptions): Promise<{ text: string; usage: LlmUsage }> {
    return Promise.reject(new Error('no text calls expected'));
  }
}

const TEMPLATE = '# {{title|a short title}}\n\n{{summary|the gist}}\n\nTags: {{tags|keywords, as a list}}';
const partOf = (o: ChatJsonOptions) => /part (\d+) of (\d+) of a longer text/.exec(o.system);
const isMerge = (o: ChatJsonOptions) => o.purpose === 'template-merge';
/** Numbered sentences of about `chars` characters in all, in paragraphs of five. */
function text(chars: number): string {
  const out: string[] = [];
  for (let i = 0; out.join(' ').length < chars; i++) out.push(`Satz ${i} erzählt vom Dom.${i % 5 === 4 ? '\n\n' : ''}`);
  return out.join(' ');
}

describe('templates in pieces: split and merge', () => {
  it('keeps each distinct value once in its first spelling, ignoring case, spacing and empty values', () => {
    expect(distinctValues([' Köln ', 'köln', '', null, 'Bonn', '  ', [], 'KÖLN  '])).to.deep.equal(['Köln', 'Bonn']);
    expect(unionItems([['Ada', 'Alan'], 'ada', ['Grace'], '', ['alan ', 'Linus']])).to.deep.equal([
      'Ada',
      'Alan',
      'Grace',
      'Linus',
    ]);
  });

  it('packs merge input in groups of at least two that fit the room, shortening values that do not', () => {
    const level = Array.from({ length: 9 }, (_, i) => ({ summary: `Teil ${i} `.repeat(40), title: `T${i}` }));
    const groups = packGroups(level, 800);
    expect(groups.length).to.be.at.most(5);
    for (const g of groups.slice(0, -1)) expect(g.length).to.be.at.least(2);
    expect(groups.flat()).to.have.length(9);
    for (const g of groups) {
      const size = g.reduce((n, v, i) => n + `Part ${i + 1}: ${JSON.stringify(v)}`.length + 1, 0);
      expect(size).to.be.at.most(800);
    }
    expect(groups.flat().map((v) => v.title)).to.deep.equal(level.map((v) => v.title));
  });

  it('sends a text that fits the context whole: one call with the prompt a single call always had', async () => {
    const model = new InMemoryModel(4096, () => ({ title: 'T', summary: 'S', tags: 'a' }));
    const input = text(2000);
    const r = await applyTemplate(model, { text: input, template_content: TEMPLATE, target_language: 'de' });
    const expected = buildExtractionPrompt({ parsed: parseTemplate(TEMPLATE), text: input, targetLanguage: 'de' });
    expect(model.calls).to.have.length(1);
    expect(model.calls[0]).to.deep.include({ purpose: 'template', system: expected.system, user: expected.user });
    expect(r.pieces).to.equal(undefined);
    // tags is a list field: a list, as every template answer gives it (core/templates/answer.ts).
    expect(r.output.template_fields).to.deep.equal({ title: 'T', summary: 'S', tags: ['a'] });
  });

  it('sends any text whole to a model whose context is not known (a hosted one)', async () => {
    const model = new InMemoryModel(undefined, () => ({ title: 'T', summary: 'S', tags: 'a' }));
    const r = await applyTemplate(model, { text: text(100_000), template_content: TEMPLATE });
    expect(model.calls).to.have.length(1);
    expect(r.pieces).to.equal(undefined);
    expect(templatePromptChars(model)).to.equal(Number.POSITIVE_INFINITY);
  });

  it('merges long answers of many pieces level by level, every call within the context and every field filled', async () => {
    const ctx = 1024;
    let merged = 0;
    const model = new InMemoryModel(ctx, (o) => {
      const m = partOf(o);
      if (m)
        return { title: 'Der Dom', summary: `Teil ${m[1]}: ${'der Dom steht am Rhein, '.repeat(12)}`, tags: ['Dom'] };
      // A merge answers its own value, as long as a piece's: the next level has to shorten it again.
      merged += 1;
      return { summary: `Zusammenfassung ${merged}: ${'der Dom steht am Rhein, '.repeat(12)}` };
    });
    const input = text(ctx * 3 * 8);
    const r = await applyTemplate(model, { text: input, template_content: TEMPLATE, target_language: 'de' });
    const maps = model.calls.filter(partOf);
    const merges = model.calls.filter(isMerge);
    expect(r.pieces).to.equal(maps.length).and.to.be.at.least(8);
    // More than one level: the first level's answers did not fit one call.
    expect(merges.length).to.be.at.least(3).and.below(maps.length);
    expect(model.calls).to.have.length(maps.length + merges.length);
    expect(r.usages).to.have.length(model.calls.length);
    for (const c of model.calls) expect(c.system.length + String(c.user).length).to.be.at.most(ctx * 3);
    // The pieces hold the text: every sentence in one of them, in order.
    const sent = maps.map((c) => String(c.user)).join('\n');
    for (const s of input.match(/Satz \d+ /g)!) expect(sent).to.include(s);
    // Only the field the pieces disagree on is merged; the title they agree on and the list are not asked.
    for (const c of merges) expect(c.schema?.required).to.deep.equal(['summary']);
    expect(r.output.template_fields).to.deep.equal({
      title: 'Der Dom',
      summary: `Zusammenfassung ${merged}: ${'der Dom steht am Rhein, '.repeat(12)}`,
      tags: ['Dom'],
    });
    expect(r.text).to.include('# Der Dom').and.include(`Zusammenfassung ${merged}`);
  });

  it('makes no merge call when the pieces agree on every text field', async () => {
    const model = new InMemoryModel(1024, (o) => ({ title: 'Der Dom', summary: '', tags: [`Tag ${partOf(o)![1]}`] }));
    const r = await applyTemplate(model, { text: text(1024 * 3 * 3), template_content: TEMPLATE });
    expect(model.calls.filter(isMerge)).to.have.length(0);
    expect(r.pieces).to.equal(model.calls.length).and.at.least(3);
    const tags = Array.from({ length: r.pieces! }, (_, i) => `Tag ${i + 1}`);
    expect(r.output.template_fields).to.deep.equal({ title: 'Der Dom', summary: '', tags });
  });
});
