import { expect } from 'chai';
import { DEFAULT_READ_LIMITS, DocumentError } from '../../domain/documents/model';
import { readXlsx, serialToIso } from '../../domain/documents/readers/xlsx';
import { coreXml, relsXml, zipOf } from '../support/documents/office-files';

const S = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
const R = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';

const sheetXml = (rows: string, merges = '') =>
  `<worksheet ${S}><sheetData>${rows}</sheetData>${merges ? `<mergeCells>${merges}</mergeCells>` : ''}</worksheet>`;

function buildXlsx(sheets: Array<{ name: string; xml: string; state?: string }>, extra: Record<string, string> = {}) {
  return zipOf({
    '_rels/.rels': relsXml([
      { id: 'rId1', type: 'officeDocument', target: 'xl/workbook.xml' },
      { id: 'rId2', type: 'metadata/core-properties', target: 'docProps/core.xml' },
    ]),
    'docProps/core.xml': coreXml({ title: 'Budget', creator: 'Finance' }),
    // Sheets listed in an order that differs from their file names, to show workbook order wins.
    'xl/workbook.xml':
      `<workbook ${S} ${R}><workbookPr/><sheets>` +
      sheets
        .map(
          (s, i) => `<sheet name="${s.name}" sheetId="${i + 1}" r:id="rS${i}"${s.state ? ` state="${s.state}"` : ''}/>`,
        )
        .join('') +
      '</sheets></workbook>',
    'xl/_rels/workbook.xml.rels': relsXml([
      ...sheets.map((_, i) => ({
        id: `rS${i}`,
        type: 'worksheet',
        target: `worksheets/sheet${sheets.length - i}.xml`,
      })),
      { id: 'rSS', type: 'sharedStrings', target: 'sharedStrings.xml' },
      { id: 'rSt', type: 'styles', target: 'styles.xml' },
    ]),
    'xl/sharedStrings.xml':
      `<sst ${S}><si><t>Item</t></si><si><t>Price</t></si><si><r><t>Ap</t></r><r><t>ples</t></r></si>` +
      '<si><t>Total</t></si><si><t>Quarter</t></si></sst>',
    'xl/styles.xml':
      `<styleSheet ${S}><numFmts count="1"><numFmt numFmtId="164" formatCode="dd/mm/yyyy\\ hh:mm"/></numFmts>` +
      '<cellXfs><xf numFmtId="0"/><xf numFmtId="14"/><xf numFmtId="164"/><xf numFmtId="2"/></cellXfs></styleSheet>',
    ...Object.fromEntries(sheets.map((s, i) => [`xl/worksheets/sheet${sheets.length - i}.xml`, s.xml])),
    ...extra,
  });
}

const SALES = sheetXml(
  // Row 1 and column A empty: trimmed. A merged header B2:C2, a formula with its cached value, dates.
  '<row r="2"><c r="B2" t="s"><v>4</v></c><c r="C2"/><c r="D2" t="inlineStr"><is><t>Note</t></is></c></row>' +
    '<row r="3"><c r="B3" t="s"><v>0</v></c><c r="C3" t="s"><v>1</v></c><c r="D3" t="b"><v>1</v></c></row>' +
    '<row r="4"><c r="B4" t="s"><v>2</v></c><c r="C4"><v>3.5</v></c><c r="D4" s="1"><v>46023</v></c></row>' +
    '<row r="5"><c r="B5" t="s"><v>3</v></c><c r="C5"><f>SUM(C4:C4)</f><v>3.5</v></c>' +
    '<c r="D5" s="2"><v>46023.75</v></c></row><row r="7"><c r="B7"/></row>',
  '<mergeCell ref="B2:C2"/>',
);

describe('XLSX reader', () => {
  it('reads sheets in workbook order, each a trimmed table of values with merges as spans', async () => {
    const model = await readXlsx(
      await buildXlsx([
        { name: 'Sales', xml: SALES },
        { name: 'Empty', xml: sheetXml('') },
        { name: 'Secret', xml: sheetXml('<row r="1"><c r="A1" t="str"><v>x</v></c></row>'), state: 'hidden' },
      ]),
      DEFAULT_READ_LIMITS,
    );
    expect(model).to.include({ format: 'xlsx', title: 'Budget', author: 'Finance' });
    expect(model.parts.map((p) => [p.kind, p.name])).to.deep.equal([
      ['sheet', 'Sales'],
      ['sheet', 'Empty'],
      ['sheet', 'Secret'],
    ]);
    expect(model.parts[0].blocks).to.deep.equal([
      {
        type: 'table',
        rows: [
          [{ text: 'Quarter', colspan: 2 }, { text: 'Note' }],
          [{ text: 'Item' }, { text: 'Price' }, { text: 'TRUE' }],
          [{ text: 'Apples' }, { text: '3.5' }, { text: '2026-01-01' }],
          [{ text: 'Total' }, { text: '3.5' }, { text: '2026-01-01T18:00:00' }],
        ],
      },
    ]);
    expect(model.parts[1].blocks).to.deep.equal([]);
    expect(model.parts[2].blocks).to.deep.equal([
      { type: 'paragraph', text: 'This sheet is hidden in the workbook.' },
      { type: 'table', rows: [[{ text: 'x' }]] },
    ]);
  });

  it('merges a range over rows as a rowspan and drops the covered cells', async () => {
    const xml = sheetXml(
      '<row r="1"><c r="A1" t="str"><v>North</v></c><c r="B1"><v>1</v></c></row>' +
        '<row r="2"><c r="A2"/><c r="B2"><v>2</v></c></row>',
      '<mergeCell ref="A1:A2"/>',
    );
    const model = await readXlsx(await buildXlsx([{ name: 'S', xml }]), DEFAULT_READ_LIMITS);
    expect(model.parts[0].blocks[0]).to.deep.equal({
      type: 'table',
      rows: [[{ text: 'North', rowspan: 2 }, { text: '1' }], [{ text: '2' }]],
    });
  });

  it('converts serial dates in both date systems, the 1900 leap-year bug included', () => {
    expect(serialToIso(1, false, 'date')).to.equal('1900-01-01');
    expect(serialToIso(59, false, 'date')).to.equal('1900-02-28');
    expect(serialToIso(61, false, 'date')).to.equal('1900-03-01');
    expect(serialToIso(45658, false, 'date')).to.equal('2025-01-01');
    expect(serialToIso(0, true, 'date')).to.equal('1904-01-01');
    expect(serialToIso(0.5, false, 'time')).to.equal('12:00:00');
  });

  it('refuses a zip without a workbook as corrupt', async () => {
    const err = await readXlsx(await zipOf({ 'x.xml': '<x/>' }), DEFAULT_READ_LIMITS).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DocumentError).and.include({ reason: 'corrupt' });
  });

  it('reads a generated 5,000-row sheet in under three seconds', async function () {
    const rows = Array.from(
      { length: 5000 },
      (_, i) =>
        `<row r="${i + 1}"><c r="A${i + 1}" t="s"><v>${i % 4}</v></c><c r="B${i + 1}"><v>${i * 1.5}</v></c>` +
        `<c r="C${i + 1}" s="1"><v>${45000 + i}</v></c><c r="D${i + 1}" t="inlineStr"><is><t>row ${i}</t></is></c></row>`,
    ).join('');
    const file = await buildXlsx([{ name: 'Big', xml: sheetXml(rows) }]);
    const started = process.hrtime.bigint();
    const model = await readXlsx(file, DEFAULT_READ_LIMITS);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const table = model.parts[0].blocks[0];
    expect(table.type === 'table' && table.rows.length).to.equal(5000);
    expect(table.type === 'table' && table.rows[4999][3].text).to.equal('row 4999');
    console.log(`      5,000-row XLSX (${file.length} bytes) read in ${ms.toFixed(0)} ms`);
    expect(ms).to.be.below(3000);
  });
});
