import { expect } from 'chai';
import { DEFAULT_READ_LIMITS, DocumentError } from '../../domain/documents/model';
import { readPptx } from '../../domain/documents/readers/pptx';
import { coreXml, relsXml, tinyPng, zipOf } from '../support/documents/office-files';

const NS =
  'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" ' +
  'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" ' +
  'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';

const shape = (ph: string | undefined, paras: string) =>
  `<p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/><p:nvPr>${ph === undefined ? '' : `<p:ph${ph ? ` type="${ph}"` : ' idx="1"'}/>`}` +
  `</p:nvPr></p:nvSpPr><p:txBody>${paras}</p:txBody></p:sp>`;
const ap = (text: string, pPr = '', rPr = '') =>
  `<a:p>${pPr ? `<a:pPr ${pPr}` : ''}<a:r><a:rPr lang="en" ${rPr}/><a:t>${text}</a:t></a:r></a:p>`;
const slideXml = (shapes: string, show = '') =>
  `<p:sld ${NS}${show}><p:cSld><p:spTree><p:nvGrpSpPr/><p:grpSpPr/>${shapes}</p:spTree></p:cSld></p:sld>`;
const notesXml = (text: string) =>
  `<p:notes ${NS}><p:cSld><p:spTree>${shape('sldImg', '')}${shape('body', ap(text))}` +
  `${shape('sldNum', ap('3'))}</p:spTree></p:cSld></p:notes>`;

const TABLE =
  '<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="5" name="t"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr>' +
  '<a:graphic><a:graphicData><a:tbl><a:tblPr firstRow="1"/><a:tblGrid><a:gridCol/><a:gridCol/></a:tblGrid>' +
  '<a:tr><a:tc gridSpan="2"><a:txBody><a:p><a:r><a:t>Plan</a:t></a:r></a:p></a:txBody></a:tc><a:tc hMerge="1"/></a:tr>' +
  '<a:tr><a:tc rowSpan="2"><a:txBody><a:p><a:r><a:t>Q1</a:t></a:r></a:p></a:txBody></a:tc>' +
  '<a:tc><a:txBody><a:p><a:r><a:t>Hire</a:t></a:r></a:p></a:txBody></a:tc></a:tr>' +
  '<a:tr><a:tc vMerge="1"/><a:tc><a:txBody><a:p><a:r><a:t>Ship</a:t></a:r></a:p></a:txBody></a:tc></a:tr>' +
  '</a:tbl></a:graphicData></a:graphic></p:graphicFrame>';

const PIC =
  '<p:pic><p:nvPicPr><p:cNvPr id="4" name="Picture" descr="Logo"/><p:cNvPicPr/><p:nvPr/></p:nvPicPr>' +
  '<p:blipFill><a:blip r:embed="rImg"/></p:blipFill><p:spPr/></p:pic>';

async function buildPptx() {
  const slideRels = (n: number, extra: Array<{ id: string; type: string; target: string }> = []) =>
    relsXml([{ id: 'rN', type: 'notesSlide', target: `../notesSlides/notesSlide${n}.xml` }, ...extra]);
  return zipOf({
    '_rels/.rels': relsXml([
      { id: 'rId1', type: 'officeDocument', target: 'ppt/presentation.xml' },
      { id: 'rId2', type: 'metadata/core-properties', target: 'docProps/core.xml' },
    ]),
    'docProps/core.xml': coreXml({ title: 'Roadmap', creator: 'Bo' }),
    // Presentation order: slide3.xml, slide1.xml, slide2.xml.
    'ppt/presentation.xml':
      `<p:presentation ${NS}><p:sldIdLst><p:sldId id="256" r:id="rA"/><p:sldId id="257" r:id="rB"/>` +
      '<p:sldId id="258" r:id="rC"/></p:sldIdLst></p:presentation>',
    'ppt/_rels/presentation.xml.rels': relsXml([
      { id: 'rA', type: 'slide', target: 'slides/slide3.xml' },
      { id: 'rB', type: 'slide', target: 'slides/slide1.xml' },
      { id: 'rC', type: 'slide', target: 'slides/slide2.xml' },
    ]),
    'ppt/slides/slide3.xml': slideXml(shape('ctrTitle', ap('Roadmap 2026')) + shape('subTitle', ap('Where we go'))),
    'ppt/slides/_rels/slide3.xml.rels': slideRels(3),
    'ppt/notesSlides/notesSlide3.xml': notesXml('Welcome everyone.'),
    'ppt/slides/slide1.xml': slideXml(
      shape('title', ap('Goals')) +
        shape(
          '',
          ap('Grow', 'lvl="0"/>', 'b="1"') +
            ap('In Europe', 'lvl="1"/>') +
            ap('Steps', 'lvl="0"><a:buAutoNum type="arabicPeriod"/></a:pPr>') +
            ap('No bullet', '><a:buNone/></a:pPr>'),
        ) +
        PIC,
    ),
    'ppt/slides/_rels/slide1.xml.rels': slideRels(1, [{ id: 'rImg', type: 'image', target: '../media/logo.png' }]),
    'ppt/media/logo.png': tinyPng(),
    'ppt/notesSlides/notesSlide1.xml': notesXml('Mention the budget.'),
    'ppt/slides/slide2.xml': slideXml(shape('title', ap('Plan')) + TABLE, ' show="0"'),
    'ppt/slides/_rels/slide2.xml.rels': relsXml([]),
  });
}

describe('PPTX reader', () => {
  it('reads slides in presentation order, named by their titles, with body levels, tables, images and notes', async () => {
    const model = await readPptx(await buildPptx(), DEFAULT_READ_LIMITS);
    expect(model).to.include({ format: 'pptx', title: 'Roadmap', author: 'Bo' });
    expect(model.parts.map((p) => [p.kind, p.name])).to.deep.equal([
      ['slide', 'Roadmap 2026'],
      ['slide', 'Goals'],
      ['slide', 'Plan'],
    ]);
    expect(model.parts[0].blocks).to.deep.equal([
      { type: 'heading', level: 1, text: 'Roadmap 2026' },
      { type: 'paragraph', text: 'Where we go' },
      { type: 'note', kind: 'speaker_notes', text: 'Welcome everyone.' },
    ]);
    expect(model.parts[1].blocks).to.deep.equal([
      { type: 'heading', level: 1, text: 'Goals' },
      { type: 'list_item', level: 0, ordered: false, text: [{ text: 'Grow', bold: true }] },
      { type: 'list_item', level: 1, ordered: false, text: 'In Europe' },
      { type: 'list_item', level: 0, ordered: true, text: 'Steps' },
      { type: 'paragraph', text: 'No bullet' },
      { type: 'image', name: 'image-1.png', alt: 'Logo' },
      { type: 'note', kind: 'speaker_notes', text: 'Mention the budget.' },
    ]);
    expect(model.images.map((i) => i.name)).to.deep.equal(['image-1.png']);
  });

  it('marks a hidden slide and reads its table with both spans, covered cells dropped', async () => {
    const model = await readPptx(await buildPptx(), DEFAULT_READ_LIMITS);
    expect(model.parts[2].blocks).to.deep.equal([
      { type: 'heading', level: 1, text: 'Plan' },
      { type: 'paragraph', text: 'This slide is hidden in the presentation.' },
      {
        type: 'table',
        headerRows: 1,
        rows: [[{ text: 'Plan', colspan: 2 }], [{ text: 'Q1', rowspan: 2 }, { text: 'Hire' }], [{ text: 'Ship' }]],
      },
    ]);
  });

  it('refuses a zip without a presentation as corrupt', async () => {
    const err = await readPptx(await zipOf({ 'x.xml': '<x/>' }), DEFAULT_READ_LIMITS).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DocumentError).and.include({ reason: 'corrupt' });
  });
});
