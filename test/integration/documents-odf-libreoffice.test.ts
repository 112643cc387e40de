import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { libreOfficePath } from '../../core/config/config';
import { DEFAULT_READ_LIMITS, type DocBlock } from '../../domain/documents/model';
import { readOdp, readOds, readOdt } from '../../domain/documents/readers/odf';
import { readDocument } from '../../domain/documents/read';
import { renderDocument } from '../../domain/documents/render';
import { flatOdf, pframe } from '../support/documents/flat-odf';

// The ODF readers on packages the real LibreOffice wrote (its own automatic styles, soft page breaks, list ids,
// repeated empty cells), from flat ODF XML the test writes so every expected block is known.

const TEXT = flatOdf(
  'text',
  '<office:text><text:h text:outline-level="1">Survey</text:h>' +
    '<text:p>Some <text:span text:style-name="B">bold</text:span> words' +
    '<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body>' +
    '<text:p>The footnote.</text:p></text:note-body></text:note></text:p>' +
    '<text:list text:style-name="N"><text:list-item><text:p>Alpha</text:p></text:list-item>' +
    '<text:list-item><text:p>Beta</text:p></text:list-item></text:list>' +
    '<table:table table:name="T"><table:table-column table:number-columns-repeated="2"/><table:table-row>' +
    '<table:table-cell table:number-columns-spanned="2"><text:p>Both</text:p></table:table-cell>' +
    '<table:covered-table-cell/></table:table-row><table:table-row><table:table-cell><text:p>L</text:p>' +
    '</table:table-cell><table:table-cell><text:p>R</text:p></table:table-cell></table:table-row></table:table>' +
    '</office:text>',
  '<style:style style:name="B" style:family="text"><style:text-properties fo:font-weight="bold"/></style:style>' +
    '<text:list-style style:name="N"><text:list-level-style-number text:level="1" style:num-format="1"/></text:list-style>',
  '<dc:title>Survey notes</dc:title><dc:language>en-GB</dc:language>',
);

const SHEET = flatOdf(
  'spreadsheet',
  '<office:spreadsheet><table:table table:name="Prices"><table:table-row>' +
    '<table:table-cell office:value-type="string"><text:p>Fruit</text:p></table:table-cell>' +
    '<table:table-cell office:value-type="string"><text:p>Price</text:p></table:table-cell></table:table-row>' +
    '<table:table-row><table:table-cell office:value-type="string"><text:p>Quince</text:p></table:table-cell>' +
    '<table:table-cell office:value-type="float" office:value="4.25"><text:p>4.25</text:p></table:table-cell>' +
    '</table:table-row></table:table><table:table table:name="Second"><table:table-row>' +
    '<table:table-cell table:style-name="ce1" office:value-type="boolean" office:boolean-value="true">' +
    '<text:p>TRUE</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet>',
  // Calc keeps a boolean a boolean only with a boolean data style (else it saves the number 1).
  '<number:boolean-style style:name="NB"><number:boolean/></number:boolean-style>' +
    '<style:style style:name="ce1" style:family="table-cell" style:data-style-name="NB"/>',
);

const SLIDES = flatOdf(
  'presentation',
  '<office:presentation>' +
    ['Opening', 'Closing']
      .map(
        (t, i) =>
          `<draw:page draw:name="s${i + 1}" draw:master-page-name="Default">${pframe('title', 1, `<text:p>${t}</text:p>`)}` +
          pframe(
            'outline',
            5,
            `<text:list><text:list-item><text:p>Point ${i + 1}</text:p></text:list-item></text:list>`,
          ) +
          (i === 0
            ? `<presentation:notes>${pframe('notes', 14, '<text:p>Speak slowly.</text:p>')}</presentation:notes>`
            : '') +
          '</draw:page>',
      )
      .join('') +
    '</office:presentation>',
  '<style:style style:name="pr1" style:family="presentation"/>',
);

const texts = (blocks: DocBlock[]) => blocks.map((b) => ('text' in b ? [b.type, b.text] : [b.type]));

describe('ODF readers on LibreOffice-written packages', function () {
  this.timeout(180_000);
  let dir: string;
  const soffice = libreOfficePath({ LIBREOFFICE_PATH: process.env.LIBREOFFICE_PATH });

  /** Converts the flat file to its zipped form with a profile of the test's own, so no other soffice is disturbed. */
  const convert = (file: string, target: string) => {
    execFileSync(
      soffice,
      [
        `-env:UserInstallation=${pathToFileURL(path.join(dir, 'profile')).href}`,
        '--headless',
        '--norestore',
        '--convert-to',
        target,
        '--outdir',
        dir,
        path.join(dir, file),
      ],
      { timeout: 120_000, stdio: 'ignore' },
    );
    return readFile(path.join(dir, `${path.parse(file).name}.${target}`));
  };

  before(async () => {
    if (!existsSync(soffice)) throw new Error(`no LibreOffice at ${soffice}: run the project's setup (npm test does)`);
    dir = await mkdtemp(path.join(os.tmpdir(), 'odf-readers-'));
    await writeFile(path.join(dir, 'survey.fodt'), TEXT);
    await writeFile(path.join(dir, 'prices.fods'), SHEET);
    await writeFile(path.join(dir, 'talk.fodp'), SLIDES);
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('reads an ODT: heading, bold span, numbered list, spanned table, footnote, metadata', async () => {
    const model = await readOdt(await convert('survey.fodt', 'odt'), DEFAULT_READ_LIMITS);
    expect(model).to.include({ format: 'odt', title: 'Survey notes', language: 'en-GB' });
    const blocks = model.parts[0].blocks;
    expect(texts(blocks)).to.deep.equal([
      ['heading', 'Survey'],
      ['paragraph', [{ text: 'Some ' }, { text: 'bold', bold: true }, { text: ' words' }]],
      ['list_item', 'Alpha'],
      ['list_item', 'Beta'],
      ['table'],
      ['note', 'The footnote.'],
    ]);
    expect(blocks[2]).to.include({ ordered: true, level: 0 });
    expect(blocks[4]).to.deep.equal({
      type: 'table',
      rows: [[{ text: 'Both', colspan: 2 }], [{ text: 'L' }, { text: 'R' }]],
    });
  });

  it('an ODT is detected by content, read and rendered as Markdown with its footnote', async () => {
    const read = await readDocument(await convert('survey.fodt', 'odt'), DEFAULT_READ_LIMITS);
    if (read.kind !== 'model') throw new Error('an ODT is read, not routed');
    expect(read.model.format).to.equal('odt');
    const { markdown } = renderDocument(read.model, { markdown: true });
    expect(markdown).to.include('# Survey\n').and.include('**bold**').and.include('The footnote.');
    expect(markdown).to.match(/1\. Alpha\n/);
  });

  it('reads an ODS: each sheet named, values by type, the empty rest trimmed', async () => {
    const model = await readOds(await convert('prices.fods', 'ods'), DEFAULT_READ_LIMITS);
    expect(model.parts).to.deep.equal([
      {
        kind: 'sheet',
        name: 'Prices',
        blocks: [
          {
            type: 'table',
            rows: [
              [{ text: 'Fruit' }, { text: 'Price' }],
              [{ text: 'Quince' }, { text: '4.25' }],
            ],
          },
        ],
      },
      { kind: 'sheet', name: 'Second', blocks: [{ type: 'table', rows: [[{ text: 'TRUE' }]] }] },
    ]);
  });

  it('reads an ODP: slides named by their titles, outline as list items, speaker notes', async () => {
    const model = await readOdp(await convert('talk.fodp', 'odp'), DEFAULT_READ_LIMITS);
    expect(model.parts.map((p) => [p.kind, p.name, texts(p.blocks)])).to.deep.equal([
      [
        'slide',
        'Opening',
        [
          ['heading', 'Opening'],
          ['list_item', 'Point 1'],
          ['note', 'Speak slowly.'],
        ],
      ],
      [
        'slide',
        'Closing',
        [
          ['heading', 'Closing'],
          ['list_item', 'Point 2'],
        ],
      ],
    ]);
  });
});
