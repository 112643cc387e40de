import { expect } from 'chai';
import { documentMarkdown } from '../../domain/pdf/markdown/document';
import type { PageLayout } from '../../domain/pdf/markdown/types';
import { column, item, page } from '../support/documents/page-layouts';

const md = (...pages: PageLayout[]) => documentMarkdown(pages).markdown;
const body = (top: number) =>
  column(['The text of the section runs on over two lines of', 'body type, as any paragraph does.'], 72, top);

describe('PDF to Markdown (headings)', () => {
  it('takes a title set in a monospaced font above the body size as a heading, with or without the outline', () => {
    // "5.3 dyn.load and dyn.unload": the title's words are mostly in a monospaced font, so its line reads as code.
    const items = [
      item('5.3', 72, 760, 14),
      item('dyn.load', 97, 760, 14, { mono: true }),
      item('and', 157, 760, 14),
      item('dyn.unload', 182, 760, 14, { mono: true }),
      ...body(735),
    ];
    const expected = '5.3 dyn.load and dyn.unload';
    expect(md(page(items))).to.match(new RegExp(`^#+ ${expected.replace(/\./g, '\\.')}\n`));
    const outline = [{ title: 'dyn.load and dyn.unload', level: 2 }];
    expect(md(page(items, { outline }))).to.match(/^## 5\.3 dyn\.load and dyn\.unload\n/);
  });

  it('gives a numbered heading the level of its number, whatever its size', () => {
    const items = [
      item('2 Installing', 72, 780, 16, { bold: true }),
      ...body(755),
      item('2.3.18 Options of the build', 72, 715, 10, { bold: true }),
      ...body(695),
      item('A.1 Licences', 72, 655, 16, { bold: true }),
      ...body(635),
    ];
    const heads = md(page(items))
      .split('\n')
      .filter((l) => l.startsWith('#'));
    expect(heads).to.deep.equal(['# 2 Installing', '### 2.3.18 Options of the build', '## A.1 Licences']);
  });

  it('keeps a numbered heading at its outline level where the outline names it, and the others consistent', () => {
    // The outline sits under a root bookmark: its numbered titles are one level below their numbers' depth.
    const items = [
      item('1 Overview', 72, 780, 16, { bold: true }),
      ...body(755),
      item('1.2 Scope', 72, 715, 10, { bold: true }),
      ...body(695),
    ];
    const outline = [{ title: '1 Overview', level: 2 }];
    const heads = md(page(items, { outline }))
      .split('\n')
      .filter((l) => l.startsWith('#'));
    expect(heads).to.deep.equal(['## 1 Overview', '### 1.2 Scope']);
  });

  it('leaves a numbered body-sized sentence and a numbered list item as text', () => {
    const items = [
      item('Results', 72, 780, 16, { bold: true }),
      item('3 of the 12 runs failed on the first day and were repeated.', 72, 755),
      item('2.1 percent of the samples were lost in transit.', 72, 735),
    ];
    const out = md(page(items));
    expect(out).to.not.match(/^#+ (3|2\.1) /m);
  });
});
