import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';
import {
  answerFields,
  buildExtractionPrompt,
  DEFAULT_SYSTEM_PROMPT,
  EMPTY_RULE,
  fieldDescriptions,
  fillTemplate,
  isListField,
  modelFields,
  needsModel,
  parseTemplate,
  renderSystemPrompt,
  renderWithoutModel,
  type ParsedTemplate,
} from '../../core/templates';

const names = (p: ParsedTemplate): string[] => p.fields.map((f) => f.name);

/** Splits a filled template into its parsed YAML frontmatter and the rest. */
function splitOutput(out: string): { fm: Record<string, unknown> | null; body: string } {
  const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(out);
  if (!m) return { fm: null, body: out };
  return { fm: parseYaml(m[1] ?? '') as Record<string, unknown>, body: m[2] ?? '' };
}

describe('template grammar', () => {
  it('reads {{name|description}} as a field with its inline description', () => {
    const p = parseTemplate('# {{title|A fitting title}}');
    expect(p.fields).to.deep.equal([{ name: 'title', description: 'A fitting title', source: 'llm' }]);
  });

  it('reads {{name}} without description as a field filled from the model or the context', () => {
    const p = parseTemplate('Event: {{event}}');
    expect(p.fields).to.deep.equal([{ name: 'event', description: null, source: 'llm' }]);
  });

  it('reads single-brace {name} as a field, as in the spec example', () => {
    const p = parseTemplate('Title: {title}\nSummary: {summary}');
    expect(names(p)).to.deep.equal(['title', 'summary']);
    expect(p.placeholders.map((x) => x.braces)).to.deep.equal([1, 1]);
  });

  it('reads single-brace {name|description} as a described field: the README example fills title and summary', () => {
    const p = parseTemplate('# {title|a short title}\n\n{summary|three sentences}');
    expect(p.fields).to.deep.equal([
      { name: 'title', description: 'a short title', source: 'llm' },
      { name: 'summary', description: 'three sentences', source: 'llm' },
    ]);
    expect(fillTemplate(p, { title: 'T', summary: 'S.' }, '', {})).to.equal('# T\n\nS.');
    // A single-brace description does not run across lines: that stays literal.
    expect(names(parseTemplate('{a|one\ntwo}'))).to.deep.equal([]);
  });

  it('treats text as the input in every form, never as a field', () => {
    const p = parseTemplate('{{text}} {text} {{ text }} {{text|ignored description}}');
    expect(p.fields).to.deep.equal([]);
    expect(p.placeholders.every((x) => x.kind === 'text')).to.equal(true);
    expect(fillTemplate(p, { text: 'from model' }, 'IN', { text: 'from context' })).to.equal('IN IN IN IN');
  });

  it('only accepts names matching [A-Za-z][A-Za-z0-9_]*; anything else in braces is literal', () => {
    const src = '{{1st}} {{a-b}} {_x} {{ä}} { not a field } {{}} {} {a b} {{a.b}}';
    const p = parseTemplate(src);
    expect(p.fields).to.deep.equal([]);
    expect(fillTemplate(p, {}, 't', {})).to.equal(src);
    expect(names(parseTemplate('{a1_B2} {{Z_9|d}}'))).to.deep.equal(['a1_B2', 'Z_9']);
  });

  it('allows blanks around the name inside double braces but not inside single braces', () => {
    const p = parseTemplate('{{ name }} {{\tother | described }} { spaced }');
    expect(p.fields).to.deep.equal([
      { name: 'name', description: null, source: 'llm' },
      { name: 'other', description: 'described', source: 'llm' },
    ]);
    expect(fillTemplate(p, { name: 'N', other: 'O', spaced: 'S' }, '', {})).to.equal('N O { spaced }');
  });

  it('leaves JSON-like braces in the body literal', () => {
    const src = 'Example: {"a": 1, "b": {"c": [1, 2]}} and {a: 1}\n{{field}}';
    const p = parseTemplate(src);
    expect(names(p)).to.deep.equal(['field']);
    expect(fillTemplate(p, { field: 'F' }, '', {})).to.equal('Example: {"a": 1, "b": {"c": [1, 2]}} and {a: 1}\nF');
  });

  it('resolves nested braces to the innermost valid placeholder', () => {
    const p = parseTemplate('{{{x}}} | {{y} | {z}} | {{a|outer {b} desc}}');
    expect(names(p)).to.deep.equal(['x', 'y', 'z', 'b']);
    expect(fillTemplate(p, { x: 'X', y: 'Y', z: 'Z', b: 'B' }, '', {})).to.equal('{X} | {Y | Z} | {{a|outer B desc}}');
  });

  it('lists fields once, in order of first appearance, with the first inline description found', () => {
    const p = parseTemplate('{b} {{a}} {{b|B described}} {{a|A first}} {{a|A second}} {c}');
    expect(p.fields).to.deep.equal([
      { name: 'b', description: 'B described', source: 'llm' },
      { name: 'a', description: 'A first', source: 'llm' },
      { name: 'c', description: null, source: 'llm' },
    ]);
    expect(p.placeholders).to.have.length(6);
  });

  it('treats an empty inline description as none', () => {
    expect(parseTemplate('{{a|}} {{b|   }}').fields.map((f) => f.description)).to.deep.equal([null, null]);
  });

  it('splits off everything after a line "--- systemprompt" as the trimmed system prompt', () => {
    const p = parseTemplate('# {{title|T}}\n\n--- systemprompt\n\n  You are {{role}}.\n{"json": true}\n\n');
    expect(p.body).to.equal('# {{title|T}}\n');
    expect(p.systemPrompt).to.equal('You are {{role}}.\n{"json": true}');
    expect(names(p)).to.deep.equal(['title']);
  });

  it('splits only on a line that is exactly "--- systemprompt"', () => {
    for (const src of [
      'a {x}\n--- systemprompt please\nb',
      'a {x} --- systemprompt\nb',
      'a {x}\n ---  systemprompt\nb',
    ]) {
      const p = parseTemplate(src);
      expect(p.systemPrompt, src).to.equal(null);
      expect(p.body, src).to.equal(src);
    }
    expect(parseTemplate('a\n--- systemprompt   \nb').systemPrompt).to.equal('b');
    expect(parseTemplate('a\n--- systemprompt\n   \n').systemPrompt).to.equal(null);
  });

  it('parses YAML frontmatter as metadata, showing placeholders as {{name}}', () => {
    const p = parseTemplate(
      '---\ntitle: Minutes\ndescription: From a transcript\ntags: {{tags|Keywords, comma separated}}\nnested:\n  ' +
        'list: [a, {b}]\n---\n# {{title|T}}',
    );
    expect(p.frontmatter).to.deep.equal({
      title: 'Minutes',
      description: 'From a transcript',
      tags: '{{tags}}',
      nested: { list: ['a', '{{b}}'] },
    });
    expect(p.metadata).to.deep.equal({ title: 'Minutes', description: 'From a transcript' });
    expect(names(p)).to.deep.equal(['tags', 'b', 'title']);
    expect(p.body).to.equal('# {{title|T}}');
  });

  it('names a frontmatter field by its placeholder, not by its key, and fills it there', () => {
    const src = '---\nPersonen: {{personen|Who is mentioned}}\nDatum: {{date|Date, YYYY-MM-DD}}\n---\n# {{title|T}}\n';
    const p = parseTemplate(src);
    expect(names(p)).to.deep.equal(['personen', 'date', 'title']);
    expect(fieldDescriptions(p)).to.deep.equal({ personen: 'Who is mentioned', date: 'Date, YYYY-MM-DD', title: 'T' });
    const out = splitOutput(fillTemplate(p, { personen: 'Anna, Ben', date: '2024-05-02', title: 'Kickoff' }, '', {}));
    expect(out.fm).to.deep.equal({ Personen: 'Anna, Ben', Datum: '2024-05-02' });
    expect(out.body).to.equal('# Kickoff\n');
  });

  it('keeps a frontmatter key that matches no placeholder as metadata, not a field', () => {
    const p = parseTemplate(
      '---\ntitle: Minutes\ndescription: About\nlanguage: de\ntype: meeting\ncount: 3\n---\nBody {x}',
    );
    expect(names(p)).to.deep.equal(['x']);
    const out = splitOutput(fillTemplate(p, { x: 'X' }, '', {}));
    expect(out.fm).to.deep.equal({ type: 'meeting', count: 3 });
    expect(out.body).to.equal('Body X');
  });

  it('takes field descriptions from a frontmatter string named like a field, or from a fields: mapping, and does not emit them', () => {
    const p = parseTemplate(
      '---\nsummary: Five sentences\nfields:\n  event: Name of the event\n  unused: ignored\ntitle: Template ' +
        'title\n---\n{{summary}} {{event}} {{title}}',
    );
    expect(p.frontmatterDescriptions).to.deep.equal({
      summary: 'Five sentences',
      event: 'Name of the event',
      unused: 'ignored',
    });
    expect(fieldDescriptions(p)).to.deep.equal({
      summary: 'Five sentences',
      event: 'Name of the event',
      title: 'title',
    });
    expect(fillTemplate(p, { summary: 'S', event: 'E', title: 'T' }, '', {})).to.equal('S E T');
  });

  it('emits a frontmatter that is not valid YAML as text, with its placeholders filled', () => {
    const p = parseTemplate('---\na: b: c\nkey: {{v|desc}}\n---\nbody');
    expect(p.frontmatter).to.deep.equal({});
    expect(names(p)).to.deep.equal(['v']);
    expect(fillTemplate(p, { v: 'line1\nline2' }, '', {})).to.equal('---\na: b: c\nkey: line1 line2\n---\nbody');
  });

  it('reads no frontmatter without a closing fence, and tolerates CRLF and a BOM', () => {
    const open = parseTemplate('---\ntitle: x\nno closing {y}');
    expect(open.frontmatterBlock).to.equal(null);
    expect(open.body).to.equal('---\ntitle: x\nno closing {y}');
    const crlf = parseTemplate('\uFEFF---\r\ntitle: Minutes\r\n---\r\n# {{t|T}}\r\n--- systemprompt\r\nBe brief.\r\n');
    expect(crlf.metadata.title).to.equal('Minutes');
    expect(crlf.body).to.equal('# {{t|T}}\n');
    expect(crlf.systemPrompt).to.equal('Be brief.');
  });

  it('does not take placeholders of the system prompt as fields', () => {
    const p = parseTemplate('{{a|A}}\n--- systemprompt\nWrite for {{target_group}} about {topic}.');
    expect(names(p)).to.deep.equal(['a']);
    expect(p.placeholders.map((x) => x.section)).to.deep.equal(['body']);
  });

  it('never throws, whatever the input', () => {
    for (const src of ['', '---', '---\n---', '---\n---\n--- systemprompt', '{{', '}}{{a|', '---\n: [\n---\n{x}']) {
      expect(() => parseTemplate(src), JSON.stringify(src)).not.to.throw();
    }
    expect(parseTemplate('---\n---\n{x}').fields).to.have.length(1);
  });
});

describe('field descriptions', () => {
  const p = parseTemplate(
    '---\nfields:\n  a: from frontmatter\n  b: from frontmatter\n  c: from frontmatter\n---\n{{a|inline}} ' +
      '{{b|inline}} {c} {d}',
  );

  it('ranks additional_field_descriptions over inline over frontmatter over the name itself', () => {
    expect(fieldDescriptions(p, { a: 'additional' })).to.deep.equal({
      a: 'additional',
      b: 'inline',
      c: 'from frontmatter',
      d: 'd',
    });
  });

  it('ignores blank or non-string additional descriptions and names that are not fields', () => {
    const d = fieldDescriptions(p, { a: '  ', b: 42, zzz: 'not a field', constructor: 'x' } as Record<string, unknown>);
    expect(d).to.deep.equal({ a: 'inline', b: 'inline', c: 'from frontmatter', d: 'd' });
  });
});

describe('filling a template', () => {
  it('puts the input text, the model values and the context values in place, in that order of precedence', () => {
    const p = parseTemplate('# {{title|T}} ({{event}})\n{{text}}\nby {author}');
    const out = fillTemplate(p, { title: 'Model title', event: 'Model event' }, 'The input.', {
      event: 'Context event',
      author: 'Context author',
    });
    expect(out).to.equal('# Model title (Model event)\nThe input.\nby Context author');
  });

  it('falls back to the context when the model answers null for a field', () => {
    const p = parseTemplate('{{a}}/{{b}}');
    expect(fillTemplate(p, { a: null, b: 'B' }, '', { a: 'ctx', b: 'ctx' })).to.equal('ctx/B');
  });

  it('fills a missing value, from model and context alike, with the empty string', () => {
    const p = parseTemplate('[{{missing}}] [{other}] [{{constructor}}] [{{toString}}]');
    expect(fillTemplate(p, {}, '', {})).to.equal('[] [] [] []');
  });

  it('writes an array as a bullet list when its placeholder stands alone on a line, else comma-joined', () => {
    const p = parseTemplate('Speakers: {speakers}\n\n{points}\n  {{nested}}\n');
    const out = fillTemplate(
      p,
      { speakers: ['Ada', 'Bob'], points: ['one', 'two\nlines'], nested: ['x', 'y'] },
      '',
      {},
    );
    expect(out).to.equal('Speakers: Ada, Bob\n\n- one\n- two\n  lines\n  - x\n  - y\n');
    expect(fillTemplate(parseTemplate('{a}'), { a: [] }, '', {})).to.equal('');
  });

  it('writes numbers and booleans as text and objects as JSON', () => {
    const p = parseTemplate('{n} {b} {o} {l}');
    const out = fillTemplate(p, { n: 3.5, b: false, o: { k: 'v' }, l: [{ k: 1 }, 2] }, '', {});
    expect(out).to.equal('3.5 false {"k":"v"} {"k":1}, 2');
  });

  it('keeps value types in a YAML frontmatter and always emits valid YAML', () => {
    const p = parseTemplate(
      '---\ntags: {{tags|list}}\ntitle: "{{title}}"\nline: Session {{n}} of {{total}}\ncount: {{count}}\nmissing: ' +
        '{{missing}}\n---\nbody\n',
    );
    const tricky = 'Colons: "quotes" # and\nnewlines';
    const out = fillTemplate(p, { tags: ['a', 'b: c'], title: tricky, n: 2, total: [1, 2], count: 7 }, '', {});
    const { fm, body } = splitOutput(out);
    expect(fm).to.deep.equal({ tags: ['a', 'b: c'], title: tricky, line: 'Session 2 of 1, 2', count: 7, missing: '' });
    expect(body).to.equal('body\n');
  });

  it('drops a frontmatter that holds only template metadata and descriptions', () => {
    const p = parseTemplate(
      '---\ntitle: Minutes\ndescription: About\nsummary: describes the field\n---\n\n# {{summary}}',
    );
    expect(fillTemplate(p, { summary: 'S' }, '', {})).to.equal('# S');
  });

  it('does not fill the system prompt into the output', () => {
    const p = parseTemplate('{a}\n--- systemprompt\nSecret instructions');
    expect(fillTemplate(p, { a: 'A' }, '', {})).to.equal('A\n');
  });
});

describe('model calls and the system prompt', () => {
  it('needs no model for a template without fields, and then answers the text unchanged', () => {
    const p = parseTemplate('---\ntitle: Plain\n---\n# Heading\n\n{{text}}\n{"a": 1}');
    expect(p.fields).to.deep.equal([]);
    expect(needsModel(p, {})).to.equal(false);
    expect(renderWithoutModel(p, 'The input, unchanged.', {})).to.equal('The input, unchanged.');
  });

  it('needs no model when the context gives every field, and fills from the context alone', () => {
    const p = parseTemplate('# {{event}} / {track}\n{{text}}');
    expect(needsModel(p, { event: 'Conf', track: 'Open Data' })).to.equal(false);
    expect(renderWithoutModel(p, 'T', { event: 'Conf', track: 'Open Data' })).to.equal('# Conf / Open Data\nT');
  });

  it('needs the model for the fields the context leaves open; a null context value counts as open', () => {
    const p = parseTemplate('{{event}} {{title|T}} {{track}}');
    expect(needsModel(p, { event: 'E', title: 'given' })).to.equal(true);
    expect(modelFields(p, { event: 'E', title: 'given', track: null }).map((f) => f.name)).to.deep.equal(['track']);
    expect(modelFields(p, { event: 'E', title: 'given', track: '' })).to.deep.equal([]);
  });

  it('substitutes context values into the system prompt and leaves unknown placeholders as written', () => {
    const p = parseTemplate(
      '{a}\n--- systemprompt\nWrite for {{target_group}} about {topic}; {{unknown}} and {"k": 1} stay.',
    );
    expect(renderSystemPrompt(p, { target_group: 'teachers', topic: ['soil', 'water'] })).to.equal(
      'Write for teachers about soil, water; {{unknown}} and {"k": 1} stay.',
    );
    expect(renderSystemPrompt(parseTemplate('{a}'), {})).to.equal(null);
  });
});

describe('the extraction prompt', () => {
  const template = parseTemplate(
    '---\nfields:\n  track: Track of the session\n---\n# {{title|A fitting title}}\n{{summary|Five ' +
      'sentences}}\n{{track}} {{event}}\n--- systemprompt\nYou write about {{event}} in {{target_language}}.',
  );

  it('carries the system prompt with context and languages, and asks for one JSON object with exactly the field names', () => {
    const pr = buildExtractionPrompt({
      parsed: template,
      text: 'The transcript.',
      sourceLanguage: 'de',
      targetLanguage: 'en',
      context: { event: 'FOSDEM 2025' },
    });
    expect(pr.fieldNames).to.deep.equal(['title', 'summary', 'track']);
    expect(pr.system).to.contain('You write about FOSDEM 2025 in en.');
    expect(pr.system).to.contain('ONE JSON object');
    expect(pr.system).to.contain('"title", "summary", "track"');
    expect(pr.system).to.contain('English (en)');
  });

  it('lists field descriptions by precedence, the context as JSON, both languages and the text', () => {
    const pr = buildExtractionPrompt({
      parsed: template,
      text: 'Der Vortrag handelt von Bodenschutz.',
      sourceLanguage: 'de',
      targetLanguage: 'fr',
      context: { event: 'FOSDEM 2025', day: '2025-02-01' },
      additional: { summary: 'Exactly three sentences' },
    });
    expect(pr.user).to.contain('- title: A fitting title');
    expect(pr.user).to.contain('- summary: Exactly three sentences');
    expect(pr.user).to.contain('- track: Track of the session');
    expect(pr.user).not.to.contain('- event:');
    expect(pr.user).to.contain(JSON.stringify({ event: 'FOSDEM 2025', day: '2025-02-01' }, null, 2));
    expect(pr.user).to.contain('Source language: German (de)');
    expect(pr.user).to.contain('Target language: French (fr)');
    expect(pr.user).to.contain('Der Vortrag handelt von Bodenschutz.');
  });

  it('types a list-like field as an array of strings in the schema and marks it in the prompt; others stay strings', () => {
    const pr = buildExtractionPrompt({
      parsed: parseTemplate(
        '# {{title|A short title}}\n{{tags|3 to 6 keywords as a list, lower case}}\n' +
          '{{authors|Autorinnen und Autoren als Liste von Namen}}\n{{speakers|Namen, durch Kommas getrennt}}\n' +
          '{{summary|A summary in prose, not a list}}\n{keywords} {topic}',
      ),
      text: 'x',
      targetLanguage: 'en',
    });
    expect(pr.listFields).to.deep.equal(['tags', 'authors', 'keywords']);
    const props = (pr.schema as { properties: Record<string, Record<string, unknown>> }).properties;
    for (const name of ['tags', 'authors', 'keywords'])
      expect(props[name], name)
        .to.include({ type: 'array' })
        .and.deep.include({ items: { type: 'string' } });
    for (const name of ['title', 'speakers', 'summary', 'topic'])
      expect(props[name], name).to.include({ type: 'string' });
    expect(props.tags).to.include({ description: '3 to 6 keywords as a list, lower case' });
    expect(pr.schema).to.include({ additionalProperties: false });
    expect(pr.user).to.contain('- tags: 3 to 6 keywords as a list, lower case (a list: a JSON array of strings)\n');
    expect(pr.user).to.contain('- title: A short title\n');
    expect(pr.user).to.contain('- speakers: Namen, durch Kommas getrennt\n');
  });

  it('lets every field come back empty: the schema sets no minimum, and the prompt asks for "" or [] when the text does not say it', () => {
    const pr = buildExtractionPrompt({
      parsed: parseTemplate(
        '{{date|Date as YYYY-MM-DD}} {{tags|keywords as a list}}\n--- systemprompt\nYou file notes.',
      ),
      text: 'x',
      targetLanguage: 'en',
    });
    const props = (pr.schema as { properties: Record<string, Record<string, unknown>> }).properties;
    for (const p of Object.values(props)) expect(p).to.not.have.any.keys('minLength', 'minItems', 'enum', 'pattern');
    expect(pr.system).to.contain('You file notes.');
    expect(pr.system).to.contain(EMPTY_RULE);
    expect(EMPTY_RULE).to.contain('its value is "" (an empty list [] for a list)');
    expect(pr.user.trimEnd().endsWith('A field that the text does not answer is "" (or [] for a list).')).to.equal(
      true,
    );
  });

  it('reads a list request from the description in English and German, a bare list noun as a list, and "not a list" as a string', () => {
    for (const d of [
      'as a list',
      'A list of names',
      'One list entry per session',
      'als Liste',
      'Ein Listeneintrag je Track',
    ])
      expect(isListField('x', d), d).to.equal(true);
    for (const d of [
      'comma-separated names',
      'A summary, not a list',
      'kein Listenformat: Fließtext',
      'Three sentences',
    ])
      expect(isListField('x', d), d).to.equal(false);
    expect(isListField('tags', null)).to.equal(true);
    expect(isListField('speakers', 'speakers')).to.equal(true);
    expect(isListField('speakers', 'Names, comma-separated')).to.equal(false);
    expect(isListField('summary', null)).to.equal(false);
  });

  it('falls back to a default system prompt and tolerates a missing source language', () => {
    const pr = buildExtractionPrompt({ parsed: parseTemplate('Title: {title}'), text: 'x', targetLanguage: 'de' });
    expect(pr.system.startsWith(DEFAULT_SYSTEM_PROMPT)).to.equal(true);
    expect(pr.system).to.contain('German (de)');
    expect(pr.user).to.contain('Source language: unknown');
    expect(pr.user).to.contain('- title: title');
  });
});

describe('the model answer as template fields', () => {
  const prompt = buildExtractionPrompt({
    parsed: parseTemplate(
      '{{venue|Name of the venue}} {{year|Year of publication}} {{price|Price}} {{note|A note}} ' +
        '{{tags|keywords as a list}} {{authors|Names of the authors, as a list}} {{speakers|Namen als Liste}}',
    ),
    text: 'x',
    targetLanguage: 'en',
  });

  it('empties an answer that only says the text does not give it, or repeats the field description', () => {
    const fields = answerFields(prompt, {
      venue: 'Not specified in the text.',
      year: 'Year of publication',
      price: 'N/A',
      note: 'nicht angegeben',
      tags: [],
      authors: [],
      speakers: [],
    });
    expect(fields).to.deep.equal({ venue: '', year: '', price: '', note: '', tags: [], authors: [], speakers: [] });
    for (const v of ['unknown', '"Unknown"', 'none', 'empty', 'no salary mentioned', 'Keine Angabe', '-'])
      expect(answerFields(prompt, { venue: v }).venue, v).to.equal('');
  });

  it('keeps real values, even ones that contain such words', () => {
    const answer = {
      venue: 'Unknown Pleasures Club',
      year: '2024',
      price: 'free',
      note: 'No pets allowed',
      tags: ['open-data', 'unknown-territory'],
      authors: ['Ada Lovelace'],
      speakers: ['Grace Hopper', 'Alan Turing'],
    };
    expect(answerFields(prompt, answer)).to.deep.equal(answer);
  });

  it('cuts a one-line list answer at commas when its entries are short, and keeps a sentence whole', () => {
    const fields = answerFields(prompt, {
      tags: 'hardware, maps; open data',
      authors: 'Anna Schmidt, Jonas Weber',
      speakers: 'The museum reopens, after two years of renovation and a long debate, in May.',
    });
    expect(fields).to.deep.equal({
      tags: ['hardware', 'maps', 'open data'],
      authors: ['Anna Schmidt', 'Jonas Weber'],
      speakers: ['The museum reopens, after two years of renovation and a long debate, in May.'],
    });
  });

  it('answers a list-like field as a list: a string becomes its lines, an empty one [], stand-in entries go', () => {
    const fields = answerFields(prompt, {
      tags: '- open data\n- transport\n',
      authors: 'unknown',
      speakers: ['Grace Hopper', 'not specified', ''],
    });
    expect(fields).to.deep.equal({ tags: ['open data', 'transport'], authors: [], speakers: ['Grace Hopper'] });
  });

  it('keeps only the fields asked for, leaves out those the answer lacks, and keeps null for the context to fill', () => {
    expect(answerFields(prompt, { venue: 'Hall 2', extra: 'x', year: null })).to.deep.equal({
      venue: 'Hall 2',
      year: null,
    });
  });
});
