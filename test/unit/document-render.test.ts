import { expect } from 'chai';
import type { DocBlock, DocumentModel } from '../../domain/documents/model';
import { DEFAULT_READ_LIMITS } from '../../domain/documents/model';
import { renderDocument, renderPart } from '../../domain/documents/render';
import { readCsv, readTsv } from '../../domain/documents/readers/csv';
import { readerFor, supportedFormats } from '../../domain/documents/readers';
import { readMarkdown, readText } from '../../domain/documents/readers/text';

const md = (blocks: DocBlock[], tableFormat: 'auto' | 'gfm' = 'auto') =>
  renderPart({ kind: 'document', blocks }, tableFormat).markdown;

describe('document renderer', () => {
  it('writes headings, and escapes text that would read as Markdown', () => {
    expect(md([{ type: 'heading', level: 2, text: 'Intro' }])).to.equal('## Intro');
    expect(md([{ type: 'heading', level: 9, text: 'Deep' }])).to.equal('###### Deep');
    expect(md([{ type: 'paragraph', text: '# not a heading' }])).to.equal('\\# not a heading');
    expect(md([{ type: 'paragraph', text: '1. not a list' }])).to.equal('1\\. not a list');
    expect(md([{ type: 'paragraph', text: '- nor this' }])).to.equal('\\- nor this');
    expect(md([{ type: 'paragraph', text: 'a *star* and [link] in snake_case' }])).to.equal(
      'a \\*star\\* and \\[link\\] in snake_case',
    );
  });

  it('writes emphasis, code and links from runs', () => {
    const text = [
      { text: 'bold ', bold: true },
      { text: 'it', italic: true },
      { text: ' ' },
      { text: 'x`y', code: true },
      { text: ' ' },
      { text: 'site', href: 'https://example.org/a b' },
    ];
    expect(md([{ type: 'paragraph', text }])).to.equal('**bold** *it* ``x`y`` [site](<https://example.org/a%20b>)');
  });

  it('nests lists by level and numbers ordered items', () => {
    const out = md([
      { type: 'list_item', level: 0, ordered: true, text: 'one' },
      { type: 'list_item', level: 1, ordered: false, text: 'inner' },
      { type: 'list_item', level: 0, ordered: true, text: 'two' },
      { type: 'paragraph', text: 'after' },
      { type: 'list_item', level: 0, ordered: true, number: 5, text: 'five' },
    ]);
    expect(out).to.equal('1. one\n   - inner\n2. two\n\nafter\n\n5. five');
  });

  it('writes a GFM table, or an HTML table where a cell spans (GFM repeats it when asked)', () => {
    const plain: DocBlock = {
      type: 'table',
      rows: [
        [{ text: 'a' }, { text: 'b|c' }],
        [{ text: '1' }, { text: '2' }],
      ],
    };
    expect(md([plain])).to.equal('| a | b\\|c |\n| --- | --- |\n| 1 | 2 |');
    const spanned: DocBlock = {
      type: 'table',
      headerRows: 1,
      rows: [[{ text: 'wide', colspan: 2 }], [{ text: 'x', rowspan: 2 }, { text: 'y' }], [{ text: 'z' }]],
    };
    expect(md([spanned])).to.equal(
      '<table>\n<thead>\n<tr><th colspan="2">wide</th></tr>\n</thead>\n<tbody>\n' +
        '<tr><td rowspan="2">x</td><td>y</td></tr>\n<tr><td>z</td></tr>\n</tbody>\n</table>',
    );
    expect(md([spanned], 'gfm')).to.equal('| wide | wide |\n| --- | --- |\n| x | y |\n| x | z |');
  });

  it('marks notes: footnotes as definitions, comments and speaker notes as labelled quotes', () => {
    const out = md([
      { type: 'paragraph', text: 'Body[^1]' },
      { type: 'note', kind: 'footnote', label: '1', text: 'The note.' },
      { type: 'note', kind: 'comment', author: 'Ann', text: 'Check this' },
      { type: 'note', kind: 'speaker_notes', text: 'Say hello' },
    ]);
    expect(out).to.equal(
      'Body\\[^1\\]\n\n> **Comment (Ann):** Check this\n\n> **Notes:** Say hello\n\n[^1]: The note.',
    );
  });

  it('writes fields as a front block, images by name, code fenced', () => {
    const out = md([
      {
        type: 'fields',
        fields: [
          ['From', 'a@example.org'],
          ['Subject', 'Hi'],
        ],
      },
      { type: 'image', name: 'image-1.png', alt: 'Logo' },
      { type: 'code', text: 'a\n```\nb', language: 'js' },
    ]);
    expect(out).to.equal(
      '**From:** a@example.org\\\n**Subject:** Hi\n\n![Logo](images/image-1.png)\n\n````js\na\n```\nb\n````',
    );
  });

  it('gives one text_contents entry per part in the range, the page its index in the document', () => {
    const doc: DocumentModel = {
      format: 'pptx',
      parts: [1, 2, 3].map((n) => ({
        kind: 'slide' as const,
        name: `Slide ${n}`,
        blocks: [
          { type: 'heading' as const, level: 1, text: `Slide ${n}` },
          { type: 'paragraph' as const, text: `body ${n}` },
        ],
      })),
      images: [],
    };
    const r = renderDocument(doc, { markdown: true, first: 2, last: 3 });
    expect(r.contents.map((c) => [c.page, c.part, c.name])).to.deep.equal([
      [2, 'slide', 'Slide 2'],
      [3, 'slide', 'Slide 3'],
    ]);
    expect(r.text).to.equal('Slide 2\n\nbody 2\n\nSlide 3\n\nbody 3');
    expect(r.markdown).to.equal('# Slide 2\n\nbody 2\n\n# Slide 3\n\nbody 3\n');
    expect(renderDocument(doc, { markdown: false }).markdown).to.equal(undefined);
  });
});

describe('text, Markdown and CSV readers', () => {
  it('keeps Markdown as it is, its text without marks', async () => {
    const src = '# Title\n\nSome **bold** [link](https://x.org).\n\n```\n# code\n\nmore\n```\n';
    const doc = await readMarkdown(Buffer.from(src), DEFAULT_READ_LIMITS);
    expect(doc.title).to.equal('Title');
    const r = renderDocument(doc, { markdown: true });
    expect(r.markdown).to.equal(src);
    expect(r.text).to.equal('Title\n\nSome bold link.\n\n# code\n\nmore');
  });

  it('reads plain text as paragraphs, Latin-1 when it is not UTF-8', async () => {
    const doc = await readText(Buffer.from('Caf\xe9 one\nline two\n\n# second', 'latin1'), DEFAULT_READ_LIMITS);
    const r = renderDocument(doc, { markdown: true });
    expect(r.text).to.equal('Café one\nline two\n\n# second');
    expect(r.markdown).to.equal('Café one\\\nline two\n\n\\# second\n');
  });

  it('reads CSV (quoted cells, UTF-8 BOM) and TSV as one sheet table', async () => {
    const csv = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('name,note\nAnn,"a, b"\nBo,"x\ny"\n')]);
    const doc = await readCsv(csv, DEFAULT_READ_LIMITS);
    expect(doc.parts).to.have.length(1);
    expect(doc.parts[0]!.kind).to.equal('sheet');
    expect(renderDocument(doc, { markdown: true }).markdown).to.equal(
      '| name | note |\n| --- | --- |\n| Ann | a, b |\n| Bo | x<br>y |\n',
    );
    const tsv = await readTsv(Buffer.from('a\tb\n1\t2\n'), DEFAULT_READ_LIMITS);
    expect(renderDocument(tsv, { markdown: false }).text).to.equal('a\tb\n1\t2');
  });

  it('registry: supported formats are the ones with a reader, plus pdf and image', () => {
    expect(supportedFormats()).to.deep.equal([
      'text',
      'markdown',
      'csv',
      'tsv',
      'html',
      'docx',
      'xlsx',
      'pptx',
      'odt',
      'ods',
      'odp',
      'eml',
      'msg',
      'epub',
      'pdf',
      'image',
    ]);
    expect(readerFor('rtf'), 'RTF comes through LibreOffice, not yet wired').to.equal(undefined);
  });
});
