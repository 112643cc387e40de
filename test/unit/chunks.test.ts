import { expect } from 'chai';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { chunkDocument, chunkMarkdown, type TextChunk } from '../../domain/chunks/chunk-markdown';
import { markdownUnits } from '../../domain/chunks/markdown-units';
import { tokenCounter } from '../../domain/chunks/tokens';

// The Markdown chunker (contract §14) on texts built here: budgets, headings carried, blocks cut only where they
// must be, tables split by rows with the header repeated, offsets into the text, pages and boxes from spans.

const exact = new Tiktoken(cl100k);
const opts = (maxTokens: number, overlapTokens = 0) => ({
  maxTokens,
  overlapTokens,
  tokenizer: 'cl100k_base' as const,
});

const sentence = (i: number) => `Sentence number ${i} tells the reader something about topic ${i % 7}.`;
const paragraph = (from: number, n: number) => Array.from({ length: n }, (_, k) => sentence(from + k)).join(' ');

function withinBudget(chunks: TextChunk[], max: number) {
  for (const c of chunks) {
    expect(exact.encode(c.text, [], []).length, c.text).to.equal(c.tokens);
    expect(c.tokens).to.be.at.most(max);
  }
}

describe('chunks: token counts', () => {
  it('counts exactly as js-tiktoken encodes, for both tokenizers, special tokens as text', () => {
    const texts = [
      '',
      'Hello, world!',
      '  indented\n\n\tcode();  ',
      'naïve café — 日本語 <|endoftext|> 12345678',
      "It's THEY'RE we'll: 3.14159, 1,234,567 — Ünïcode\r\n\r\n  trailing  \n",
      'https://example.org/a/b?c=d&e=f\n```ts\nconst x = [1, 2, 3];\n```',
    ];
    for (const [name, ranks] of [
      ['cl100k_base', cl100k],
      ['o200k_base', o200k],
    ] as const) {
      const count = tokenCounter(name);
      const encoder = name === 'cl100k_base' ? exact : new Tiktoken(ranks);
      for (const t of texts) expect(count.count(t), `${name}: ${t}`).to.equal(encoder.encode(t, [], []).length);
    }
  });
});

describe('chunks: a chunk counted from its pieces', () => {
  it('counts every junction exactly: punctuation before line breaks, spaces, digits, quotes and contractions', () => {
    // Pieces meet at sentence ends, blank lines, list items and headings in every way tiktoken's pre-split treats
    // differently (`.\n\n` is one piece of it, ` 12` another); each chunk's count is checked against the encoder.
    const ends = ['.', '!', '?', '…', '."', '.)', ':', '123', '3.5', 'end', "'s", '*', '`x`'];
    const starts = ['The', '"Quoted', '(Paren', '12 items', "It's", '- item', '**Bold**', 'Ünïcode', '日本語です'];
    const blocks: string[] = [];
    ends.forEach((e, i) =>
      starts.forEach((b, j) => {
        const sep = ['\n\n', ' ', '\n\n- ', '\n\n## H\n\n'][(i + j) % 4]!;
        blocks.push(`${b} words of piece ${i}-${j} ${e}${sep}`);
      }),
    );
    const md = blocks.join('');
    for (const [max, overlap] of [
      [12, 0],
      [24, 4],
      [48, 0],
      [96, 16],
    ] as const)
      withinBudget(chunkMarkdown(md, opts(max, overlap)), max);
  });
});

describe('chunks: Markdown units', () => {
  it('reads headings, paragraphs, list items, tables and code with their offsets', () => {
    const md =
      '# Title\n\nA paragraph\nover two lines.\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```js\nx = 1;\n\ny = 2;\n```\n';
    const units = markdownUnits(md);
    expect(units.map((u) => u.kind)).to.deep.equal(['heading', 'paragraph', 'list_item', 'list_item', 'table', 'code']);
    expect(units[0]).to.include({ level: 1, title: 'Title' });
    expect(md.slice(units[1].start, units[1].end)).to.equal('A paragraph\nover two lines.');
    expect(md.slice(units[4].start, units[4].end)).to.equal('| a | b |\n|---|---|\n| 1 | 2 |');
    expect(md.slice(units[5].start, units[5].end)).to.equal('```js\nx = 1;\n\ny = 2;\n```');
  });
});

describe('chunks: packing Markdown', () => {
  it('keeps every chunk within the budget and cuts paragraphs only at sentence ends', () => {
    const md = `# Intro\n\n${paragraph(0, 40)}\n\n## Details\n\n${paragraph(40, 40)}\n`;
    const chunks = chunkMarkdown(md, opts(64));
    expect(chunks.length).to.be.greaterThan(4);
    withinBudget(chunks, 64);
    for (const c of chunks) {
      // A chunk ends at a sentence's end or a heading: never inside a sentence.
      expect(c.text.trimEnd(), c.text).to.match(/(\.|Intro|Details)$/);
      expect(md.slice(c.char_start, c.char_end)).to.equal(c.text);
    }
    expect(chunks.map((c) => c.index)).to.deep.equal(chunks.map((_, i) => i));
  });

  it('starts a chunk at each heading and carries the heading path under it', () => {
    const md = `# Guide\n\nOpening words.\n\n## Install\n\n${paragraph(0, 20)}\n\n### Linux\n\nUse the package.\n\n## Use\n\nRun it.\n`;
    const chunks = chunkMarkdown(md, opts(80));
    const paths = chunks.map((c) => c.heading_path.join(' > '));
    expect(paths[0]).to.equal('Guide');
    expect(paths).to.include('Guide > Install');
    expect(paths).to.include('Guide > Install > Linux');
    expect(paths[paths.length - 1]).to.equal('Guide > Use');
    for (const c of chunks.filter((c) => c.text.startsWith('## Use'))) expect(c.text).to.contain('Run it.');
    // No chunk runs from one section's body into the next heading.
    for (const c of chunks) expect(c.text.slice(1)).to.not.match(/\n#{1,3} /);
  });

  it('splits a long table by rows with its header repeated', () => {
    const rows = Array.from({ length: 60 }, (_, i) => `| row ${i} | value ${i * 3} | note ${i} |`);
    const md = `# Data\n\n| name | value | note |\n|---|---|---|\n${rows.join('\n')}\n`;
    const chunks = chunkMarkdown(md, opts(120));
    withinBudget(chunks, 120);
    const tableChunks = chunks.filter((c) => c.text.includes('| row '));
    expect(tableChunks.length).to.be.greaterThan(2);
    for (const c of tableChunks) expect(c.text).to.contain('| name | value | note |\n|---|---|---|');
    // Every row is in exactly one chunk, whole.
    for (const r of rows) expect(tableChunks.filter((c) => c.text.split('\n').includes(r)).length, r).to.equal(1);
  });

  it('keeps a code block whole where it fits and repeats its fence where it must be cut', () => {
    const small = '```py\nprint(1)\nprint(2)\n```';
    const long = '```py\n' + Array.from({ length: 80 }, (_, i) => `value_${i} = compute(${i})`).join('\n') + '\n```';
    const chunks = chunkMarkdown(`Intro.\n\n${small}\n\n${long}\n`, opts(100));
    withinBudget(chunks, 100);
    expect(chunks.some((c) => c.text.includes(small))).to.equal(true);
    const parts = chunks.filter((c) => c.text.includes('value_'));
    expect(parts.length).to.be.greaterThan(2);
    for (const p of parts) {
      expect(p.text.startsWith('```py\n') || p.text.includes('\n```py\n')).to.equal(true);
      expect(p.text.endsWith('```')).to.equal(true);
    }
  });

  it('cuts a sentence over the budget at its words, and a word over it inside', () => {
    const long = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ');
    const huge = 'x'.repeat(3000);
    const chunks = chunkMarkdown(`${long}\n\n${huge}\n`, opts(40));
    withinBudget(chunks, 40);
    const words = chunks.flatMap((c) => c.text.split(/\s+/)).filter((w) => w.startsWith('word'));
    expect(words).to.deep.equal(long.split(' '));
    expect(chunks.filter((c) => c.text.startsWith('x')).reduce((n, c) => n + c.text.length, 0)).to.equal(3000);
  });

  it('repeats the end of the chunk before as overlap within a section', () => {
    const md = `# One\n\n${paragraph(0, 30)}\n`;
    const plain = chunkMarkdown(md, opts(60));
    const overlapped = chunkMarkdown(md, opts(60, 20));
    withinBudget(overlapped, 60);
    expect(overlapped.length).to.be.at.least(plain.length);
    for (let i = 1; i < overlapped.length; i++) {
      expect(overlapped[i].char_start, `chunk ${i}`).to.be.lessThan(overlapped[i - 1].char_end);
    }
  });

  it('names the pages and boxes of the blocks each chunk covers', () => {
    const p1 = paragraph(0, 6);
    const p2 = paragraph(6, 6);
    const md = `# Report\n\n${p1}\n\n${p2}\n`;
    const s1 = md.indexOf(p1);
    const s2 = md.indexOf(p2);
    const spans = [
      { start: 0, end: 8, page: 1, bbox: [72, 60, 300, 80] as [number, number, number, number] },
      { start: s1, end: s1 + p1.length, page: 1, bbox: [72, 90, 520, 200] as [number, number, number, number] },
      { start: s2, end: s2 + p2.length, page: 2, bbox: [72, 60, 520, 180] as [number, number, number, number] },
    ];
    const chunks = chunkDocument(md, spans, opts(110));
    expect(chunks.length).to.be.greaterThan(1);
    expect(chunks[0].pages).to.deep.equal([1]);
    expect(chunks[0].boxes[0]).to.deep.equal({ page: 1, bbox: [72, 60, 300, 80] });
    expect(chunks[chunks.length - 1].pages).to.deep.equal([2]);
  });
});
