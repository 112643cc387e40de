import { expect } from 'chai';
import { tablesToMarkdown } from '../../activities/transformer.activities';

describe('tables as Markdown', () => {
  it('pads rows to the widest one and escapes pipes', () => {
    const md = tablesToMarkdown([{ headers: ['a'], rows: [['1', 'x|y'], ['2']] }]);
    expect(md).to.equal('| a |  |\n| --- | --- |\n| 1 | x\\|y |\n| 2 |  |');
  });

  it('renders a table of 200,000 rows (a 7 MB page) without overflowing the stack', () => {
    const rows = Array.from({ length: 200_000 }, (_, i) => [String(i), `name ${i}`]);
    const md = tablesToMarkdown([{ headers: ['n', 'name'], rows }]);
    const lines = md.split('\n');
    expect(lines).to.have.length(200_002);
    expect(lines[200_001]).to.equal('| 199999 | name 199999 |');
  });
});
