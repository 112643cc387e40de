import { expect } from 'chai';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  buildExtractionPrompt,
  fieldDescriptions,
  fillTemplate,
  listTemplates,
  loadTemplate,
  parseTemplate,
  TEMPLATES_DIR,
} from '../../core/templates';

/** The parsed YAML frontmatter of a filled template, or null when it has none. */
function outputFrontmatter(out: string): unknown {
  const m = /^---\n([\s\S]*?)\n---\n/.exec(out);
  return m ? parseYaml(m[1] ?? '') : null;
}

describe('the template catalog', () => {
  let dir: string;
  let outside: string;

  before(async () => {
    outside = await mkdtemp(path.join(os.tmpdir(), 'templates-test-'));
    dir = path.join(outside, 'templates');
    await mkdir(dir);
    await writeFile(path.join(outside, 'x.md'), 'outside the catalog {x}');
    await writeFile(
      path.join(dir, 'Minutes.md'),
      '---\ntitle: Minutes\ndescription: Meeting minutes\nlanguage: en\n---\nEN {x}',
    );
    await writeFile(path.join(dir, 'Minutes_de.md'), '---\ntitle: Protokoll\n---\nDE {x}');
    await writeFile(path.join(dir, 'Minutes_fr.md'), 'FR {x}');
    await writeFile(path.join(dir, 'OnlyGerman_de.md'), '---\ndescription: Nur Deutsch\n---\nDE {x}');
    await writeFile(path.join(dir, 'Story_default.md'), 'base {x}');
    await writeFile(path.join(dir, 'notes.txt'), 'not a template');
    await writeFile(path.join(dir, 'bad name.md'), 'invalid name');
    await mkdir(path.join(dir, 'Folder.md'));
  });

  after(async () => {
    await rm(outside, { recursive: true, force: true });
  });

  it('prefers the language variant <Name>_<lang>.md when it exists', async () => {
    const t = await loadTemplate(dir, 'Minutes', 'de');
    expect(t?.source).to.contain('DE {x}');
    expect(t?.resolvedFile).to.equal(path.join(dir, 'Minutes_de.md'));
    expect(t?.name).to.equal('Minutes');
    expect((await loadTemplate(dir, 'Minutes', 'de-AT'))?.resolvedFile).to.equal(path.join(dir, 'Minutes_de.md'));
    expect((await loadTemplate(dir, 'Minutes', 'FR'))?.resolvedFile).to.equal(path.join(dir, 'Minutes_fr.md'));
  });

  it('falls back to <Name>.md without a variant, without a language, or with an invalid language', async () => {
    for (const lang of ['it', undefined, '', '../x', 'de/../../x']) {
      expect((await loadTemplate(dir, 'Minutes', lang))?.resolvedFile, String(lang)).to.equal(
        path.join(dir, 'Minutes.md'),
      );
    }
    expect(await loadTemplate(dir, 'OnlyGerman', 'en')).to.equal(null);
    expect((await loadTemplate(dir, 'OnlyGerman', 'de'))?.source).to.contain('DE');
    expect(await loadTemplate(dir, 'Unknown', 'de')).to.equal(null);
    expect(await loadTemplate(dir, 'Folder')).to.equal(null);
  });

  it('rejects names that could leave the directory', async () => {
    for (const name of ['../x', 'a/b', '..', '', '.', '.hidden', 'a\\b', '/etc/passwd', '-x', 'a.b', 'x'.repeat(101)]) {
      expect(await loadTemplate(dir, name), JSON.stringify(name)).to.equal(null);
    }
    expect(await loadTemplate(dir, 'x'.repeat(100))).to.equal(null);
  });

  it('lists templates grouped by base name with their languages and descriptions', async () => {
    const list = await listTemplates(dir);
    expect(list).to.deep.equal([
      {
        name: 'Minutes',
        languages: ['de', 'en', 'fr'],
        hasBase: true,
        title: 'Minutes',
        description: 'Meeting minutes',
      },
      { name: 'OnlyGerman', languages: ['de'], hasBase: false, description: 'Nur Deutsch' },
      { name: 'Story_default', languages: [], hasBase: true },
    ]);
    expect(await listTemplates(path.join(outside, 'missing'))).to.deep.equal([]);
  });

  it('defaults to templates/ at the repository root', async () => {
    expect(TEMPLATES_DIR).to.equal(path.resolve('templates'));
    expect((await loadTemplate(TEMPLATES_DIR, 'Besprechung', 'en'))?.resolvedFile).to.equal(
      path.join(TEMPLATES_DIR, 'Besprechung_en.md'),
    );
  });
});

describe('the shipped templates', () => {
  const expected = [
    'Besprechung',
    'BlogPost',
    'EventSummary',
    'PdfMetadata',
    'Session',
    'Story',
    'TrackSummary',
    'VideoSummary',
  ];

  it('include every template the service offers, in German and English', async () => {
    const list = await listTemplates(TEMPLATES_DIR);
    for (const name of expected) {
      const t = list.find((x) => x.name === name);
      expect(t, name).to.not.equal(undefined);
      expect(t?.languages, name).to.include.members(['de', 'en']);
      expect(t?.description, name).to.be.a('string');
    }
    expect(
      parseTemplate(await readFile(path.join(TEMPLATES_DIR, 'Besprechung.md'), 'utf8')).metadata.language,
    ).to.equal('de');
  });

  it('each parse, have fields with descriptions, a system prompt, and the same fields in every language', async () => {
    const files = (await readdir(TEMPLATES_DIR)).filter((f) => f.endsWith('.md'));
    expect(files.length).to.be.at.least(16);
    const fieldsByBase = new Map<string, string>();
    for (const file of files) {
      const p = parseTemplate(await readFile(path.join(TEMPLATES_DIR, file), 'utf8'));
      expect(p.frontmatterBlock?.data, `${file} frontmatter is YAML`).to.be.an('object');
      expect(p.fields.length, file).to.be.greaterThan(0);
      expect(p.systemPrompt, file).to.be.a('string');
      const d = fieldDescriptions(p);
      for (const f of p.fields) expect(d[f.name], `${file}: ${f.name}`).to.not.equal(f.name);
      const base = file.replace(/(_[a-z]{2})?\.md$/, '');
      const signature = p.fields
        .map((f) => f.name)
        .sort()
        .join(',');
      if (fieldsByBase.has(base)) expect(signature, file).to.equal(fieldsByBase.get(base));
      else fieldsByBase.set(base, signature);
    }
  });

  it('ask for the same list-like fields in every language, tags and key points always as lists', async () => {
    const files = (await readdir(TEMPLATES_DIR)).filter((f) => f.endsWith('.md'));
    const listsByBase = new Map<string, string>();
    for (const file of files) {
      const parsed = parseTemplate(await readFile(path.join(TEMPLATES_DIR, file), 'utf8'));
      const pr = buildExtractionPrompt({ parsed, text: 'x', targetLanguage: 'en' });
      const props = (pr.schema as { properties: Record<string, { type: string }> }).properties;
      for (const name of pr.fieldNames)
        expect(props[name]?.type, `${file}: ${name}`).to.equal(pr.listFields.includes(name) ? 'array' : 'string');
      for (const name of ['tags', 'key_points', 'keywords', 'authors', 'participants'])
        if (pr.fieldNames.includes(name)) expect(pr.listFields, `${file}: ${name}`).to.include(name);
      for (const name of ['title', 'summary', 'date']) expect(pr.listFields, `${file}: ${name}`).not.to.include(name);
      const base = file.replace(/(_[a-z]{2})?\.md$/, '');
      const lists = [...pr.listFields].sort().join(',');
      if (listsByBase.has(base)) expect(lists, file).to.equal(listsByBase.get(base));
      else listsByBase.set(base, lists);
    }
  });

  it('each fill into Markdown with a valid YAML frontmatter and no placeholder left', async () => {
    const files = (await readdir(TEMPLATES_DIR)).filter((f) => f.endsWith('.md'));
    for (const file of files) {
      const p = parseTemplate(await readFile(path.join(TEMPLATES_DIR, file), 'utf8'));
      const values = Object.fromEntries(
        p.fields.map((f) => [f.name, f.name === 'tags' ? ['a', 'b'] : `value of ${f.name}: "x"`]),
      );
      const out = fillTemplate(p, values, 'INPUT TEXT', {});
      expect(outputFrontmatter(out), file).to.be.an('object');
      expect(out, file).not.to.match(/\{\{|\{[A-Za-z][A-Za-z0-9_]*\}/);
      expect(out, file).to.contain('value of title');
    }
  });
});
